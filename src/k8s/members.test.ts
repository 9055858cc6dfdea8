import { describe, expect, it } from "vitest";
import { CLUSTER_ANNOTATION, CLUSTER_VERSION_ANNOTATION, isMemberSet, membersOf, mergedCluster, mergedName, mergedObject, NAME_ANNOTATION, resolveMembers, splitMergedName } from "./members.ts";
import { parseApiPath } from "./path.ts";

describe("a merged key's members", () => {
  it("canonicalises a set (sorted, deduped) into the key's cluster, a set of one told from its cluster", () => {
    expect(mergedCluster(["b", "a", "b"])).toBe("a,b");
    expect(mergedCluster(["a"])).toBe("a,");
    expect(membersOf("a,b")).toEqual(["a", "b"]);
    expect(membersOf("a,")).toEqual(["a"]);
    expect(membersOf("a")).toBeUndefined();
    expect(isMemberSet("*")).toBe(true);
    expect(isMemberSet("a")).toBe(false);
  });

  it("parses /clusters/*/ and /clusters/b,a/ paths, and refuses a malformed set", () => {
    expect(parseApiPath("/clusters/b,a,b/api/v1/pods")).toMatchObject({ kind: "resource", cluster: "a,b", resource: "pods" });
    expect(parseApiPath("/clusters/*/api/v1/namespaces/x/pods")).toMatchObject({ kind: "resource", cluster: "*", namespace: "x" });
    expect(parseApiPath("/clusters/a,/api/v1/pods")).toMatchObject({ kind: "resource", cluster: "a," });
    expect(parseApiPath("/clusters/a,,b/api/v1/pods")).toMatchObject({ kind: "invalid" });
    expect(parseApiPath("/clusters/,/api/v1/pods")).toMatchObject({ kind: "invalid" });
    expect(parseApiPath("/clusters/a,B_c/api/v1/pods")).toMatchObject({ kind: "invalid" });
  });

  it("resolves * to every configured cluster and names the unknown ones", () => {
    expect(resolveMembers("*", ["z", "default", "a"])).toEqual({ ok: true, value: ["a", "default", "z"] });
    expect(resolveMembers("a,b", ["a", "b"])).toEqual({ ok: true, value: ["a", "b"] });
    const unknown = resolveMembers("a,nope", ["a"]);
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect([unknown.status.code, unknown.status.message]).toEqual([404, "clusters not configured: nope"]);
  });

  it("renames an object <cluster>:<name> at the merged resourceVersion, keeping its own in annotations, and leaves the member's untouched", () => {
    const pod = { kind: "Pod", metadata: { name: "web", namespace: "x", resourceVersion: "42", annotations: { keep: "me" } } };
    expect(mergedObject("east", pod, 7).metadata).toEqual({
      name: "east:web",
      namespace: "x",
      resourceVersion: "7",
      annotations: { keep: "me", [CLUSTER_ANNOTATION]: "east", [NAME_ANNOTATION]: "web", [CLUSTER_VERSION_ANNOTATION]: "42" },
    });
    expect(pod.metadata.name).toBe("web");
  });

  it("splits a merged name into its cluster and own name, and nothing else", () => {
    expect(splitMergedName(mergedName("east", "web-1"))).toEqual({ cluster: "east", name: "web-1" });
    for (const name of ["web-1", ":web-1", "east:", ""]) expect(splitMergedName(name), name).toBeUndefined();
  });
});
