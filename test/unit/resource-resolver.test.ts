/**
 * @module
 * Resolving resource paths through discovery: the APIResourceList index, the verb checks
 * (worded as the API server words them) and resolution against a fake upstream.
 */
import { describe, expect, it } from "vitest";
import { DocumentCache, type DocumentFetch } from "../../src/http/document-cache.ts";
import { groupVersionPath, indexResourceList, indexServed, resolveResource, unsupportedVerb, type ResourceInfo } from "../../src/http/resource-resolver.ts";

// Entries in the API server's own shape (`/api/v1`, `/apis/apps/v1`), trimmed to what matters.
const CORE_V1 = {
  kind: "APIResourceList",
  groupVersion: "v1",
  resources: [
    { name: "componentstatuses", singularName: "componentstatus", namespaced: false, kind: "ComponentStatus", verbs: ["get", "list"], shortNames: ["cs"] },
    { name: "nodes", singularName: "node", namespaced: false, kind: "Node", verbs: ["create", "delete", "get", "list", "patch", "update", "watch"] },
    { name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: ["create", "delete", "get", "list", "patch", "update", "watch"] },
    { name: "pods/status", singularName: "", namespaced: true, kind: "Pod", verbs: ["get", "patch", "update"] },
  ],
};
const APPS_V1 = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: "apps/v1",
  resources: [{ name: "deployments", singularName: "deployment", namespaced: true, kind: "Deployment", verbs: ["get", "list", "watch"] }],
};

describe("indexResourceList", () => {
  it("indexes collections by plural with kind, scope and verbs, leaving subresources out", () => {
    const index = indexResourceList(CORE_V1, "", "v1");
    expect([...index.keys()]).toEqual(["componentstatuses", "nodes", "pods"]);
    expect(index.get("pods")).toEqual({ group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true, verbs: CORE_V1.resources[2]!.verbs });
    expect(index.get("nodes")?.namespaced).toBe(false);
  });

  it("reads a document that is not an APIResourceList as one with no resources", () => {
    expect(indexResourceList({ kind: "Status" }, "", "v1").size).toBe(0);
    expect(indexResourceList(null, "", "v1").size).toBe(0);
    expect(indexResourceList({ resources: [{ name: 7 }, { name: "ok" }] }, "x.io", "v1").get("ok")).toEqual({
      group: "x.io",
      version: "v1",
      resource: "ok",
      kind: "",
      namespaced: false,
      verbs: [],
    });
  });
});

describe("unsupportedVerb", () => {
  const info = (over: Partial<ResourceInfo>): ResourceInfo => ({
    group: "",
    version: "v1",
    resource: "componentstatuses",
    kind: "ComponentStatus",
    namespaced: false,
    verbs: ["get", "list"],
    ...over,
  });

  it("allows the verbs discovery lists", () => {
    expect(unsupportedVerb(info({}), "list")).toBeUndefined();
    expect(unsupportedVerb(info({}), "get")).toBeUndefined();
  });

  it("refuses a watch as NewMethodNotSupported words it, with the group when there is one", () => {
    expect(unsupportedVerb(info({}), "watch")).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'watch is not supported on resources of kind "componentstatuses"',
      reason: "MethodNotAllowed",
      details: { kind: "componentstatuses" },
      code: 405,
    });
    expect(unsupportedVerb(info({ group: "example.com", resource: "reports", verbs: ["get"] }), "watch")).toMatchObject({
      message: 'watch is not supported on resources of kind "reports.example.com"',
      details: { group: "example.com", kind: "reports" },
      code: 405,
    });
  });

  it("refuses a get or list the resource does not serve with go-restful's 405, naming the verb", () => {
    expect(unsupportedVerb(info({ group: "authentication.k8s.io", resource: "tokenreviews", verbs: ["create"] }), "list")).toMatchObject({
      reason: "MethodNotAllowed",
      code: 405,
      message: 'the server does not allow this method on the requested resource (discovery lists no "list" verb for tokenreviews.authentication.k8s.io)',
    });
  });
});

describe("indexServed", () => {
  it("names the versions of /api, and the groups and group/versions of /apis", () => {
    expect([...indexServed({ kind: "APIVersions", versions: ["v1"] })]).toEqual(["v1"]);
    expect([...indexServed(APIS)]).toEqual(["apps", "apps/v1", "broken.io", "broken.io/v1", "down.io", "down.io/v1"]);
    expect(indexServed({ kind: "Status" }).size).toBe(0);
  });
});

/** `/apis` as the API server lists the groups (APIGroupList), trimmed. */
const APIS = {
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: ["apps", "broken.io", "down.io"].map((name) => ({ name, versions: [{ groupVersion: `${name}/v1`, version: "v1" }], preferredVersion: { groupVersion: `${name}/v1`, version: "v1" } })),
};

describe("resolveResource", () => {
  const documents: Record<string, unknown> = { "/api": { kind: "APIVersions", versions: ["v1"] }, "/apis": APIS, "/api/v1": CORE_V1, "/apis/apps/v1": APPS_V1, "/apis/broken.io/v1": "{not json" };
  const requested: string[] = [];
  const fetch: DocumentFetch = async (path) => {
    requested.push(path);
    if (path.startsWith("/apis/down.io/")) throw new Error("connect ECONNREFUSED 10.0.0.1:6443");
    const document = documents[path];
    if (document === undefined) return new Response('{"kind":"Status","code":404}', { status: 404 });
    return new Response(typeof document === "string" ? document : JSON.stringify(document), { headers: { "content-type": "application/json" } });
  };
  const cache = new DocumentCache({ what: "discovery", ttlMs: 60_000, staleMs: 600_000, maxBytes: 1 << 20, now: () => 0 });
  const resolve = (group: string, version: string, resource: string) => resolveResource(cache, "default", fetch, { group, version, resource });

  it("finds core, grouped and cluster-scoped resources in their group/version's list", async () => {
    expect(await resolve("", "v1", "nodes")).toMatchObject({ ok: true, value: { kind: "Node", namespaced: false } });
    expect(await resolve("apps", "v1", "deployments")).toMatchObject({ ok: true, value: { group: "apps", kind: "Deployment", namespaced: true } });
    expect(groupVersionPath("", "v1")).toBe("/api/v1");
    expect(groupVersionPath("apps", "v1")).toBe("/apis/apps/v1");
  });

  it("answers an unknown resource, or a group/version the upstream does not serve, with the API server's 404", async () => {
    expect(await resolve("", "v1", "podz")).toEqual({
      ok: false,
      status: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'the server could not find the requested resource (v1 has no resource "podz")',
        reason: "NotFound",
        details: {},
        code: 404,
      },
    });
    expect(await resolve("nope.io", "v1", "things")).toMatchObject({
      ok: false,
      status: { code: 404, message: "the server could not find the requested resource (the upstream API server does not serve nope.io/v1)" },
    });
    expect(await resolve("", "v1", "pods/status")).toMatchObject({ ok: false, status: { code: 404 } });
  });

  it("answers an unreachable or unreadable discovery with 503 and Retry-After, naming the cause", async () => {
    expect(await resolve("down.io", "v1", "things")).toMatchObject({
      ok: false,
      status: {
        code: 503,
        reason: "ServiceUnavailable",
        details: { retryAfterSeconds: 5 },
        message: 'the relay cannot tell what "things" is in down.io/v1: the upstream API server did not answer discovery for /apis/down.io/v1: connect ECONNREFUSED 10.0.0.1:6443',
      },
    });
    expect(await resolve("broken.io", "v1", "things")).toMatchObject({ ok: false, status: { code: 503, message: expect.stringContaining("the upstream's discovery for broken.io/v1 is not JSON") } });
  });

  it("asks the upstream once per group/version while the answer is fresh", async () => {
    const fresh = new DocumentCache({ what: "discovery", ttlMs: 60_000, staleMs: 600_000, maxBytes: 1 << 20, now: () => 0 });
    requested.length = 0;
    for (const [group, resource] of [
      ["apps", "deployments"],
      ["apps", "replicasets"],
      ["", "pods"],
      ["", "nodes"],
    ] as const) {
      await resolveResource(fresh, "default", fetch, { group, version: "v1", resource });
    }
    expect(requested).toEqual(["/apis", "/apis/apps/v1", "/api", "/api/v1"]);
  });

  it("answers a group or version missing from the cluster's lists without asking for it", async () => {
    const fresh = new DocumentCache({ what: "discovery", ttlMs: 60_000, staleMs: 600_000, maxBytes: 1 << 20, now: () => 0 });
    requested.length = 0;
    for (let i = 0; i < 20; i++) {
      expect(await resolveResource(fresh, "default", fetch, { group: `made-up-${i}.example.com`, version: "v1", resource: "things" })).toMatchObject({
        ok: false,
        status: { code: 404, message: `the server could not find the requested resource (the upstream API server does not serve made-up-${i}.example.com/v1)` },
      });
      expect(await resolveResource(fresh, "default", fetch, { group: "", version: `v${i + 2}`, resource: "pods" })).toMatchObject({ ok: false, status: { code: 404 } });
    }
    expect(requested).toEqual(["/apis", "/api"]);
  });

  it("asks for the group/version itself when the lists cannot be had", async () => {
    const listless: DocumentFetch = async (path) => (path === "/apis" ? new Response("upstream connect error", { status: 502 }) : fetch(path, "application/json"));
    const fresh = new DocumentCache({ what: "discovery", ttlMs: 60_000, staleMs: 600_000, maxBytes: 1 << 20, now: () => 0 });
    expect(await resolveResource(fresh, "default", listless, { group: "apps", version: "v1", resource: "deployments" })).toMatchObject({ ok: true });
  });
});
