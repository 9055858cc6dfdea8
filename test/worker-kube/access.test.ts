/**
 * `/_relay/access` in AUTH_MODE=kube: the cluster says what the token may read. A
 * SelfSubjectRulesReview per namespace the relay knows, and access reviews to tell which shared
 * rules hold cluster-wide; only the token's own namespaces are named; the answer is kept a
 * while per token.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { relay, Sim } from "../worker/helpers.ts";
import { requestMark } from "../worker/kube-helpers.ts";

// A cluster no other test file uses: its users, namespaces and request log are this file's.
const sim = new Sim("access");
const PATH = "/_relay/access/clusters/access";
const read = ["get", "list", "watch"];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const NAMESPACES = ["team-x", "team-y"];

beforeAll(async () => {
  await sim.setUsers([
    { name: "nina", tokens: ["nina-token"], rules: [{ verbs: read, apiGroups: [""], resources: ["pods", "events"], namespaces: ["team-x"] }] },
    { name: "wanda", tokens: ["wanda-token"], rules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }] },
    // The same grant in every namespace by RoleBindings: still only theirs, not cluster-wide.
    { name: "rita", tokens: ["rita-token"], rules: [{ verbs: ["list", "watch"], apiGroups: [""], resources: ["pods"], namespaces: NAMESPACES }] },
    { name: "nobody", tokens: ["nobody-token"], rules: [] },
  ]);
  for (const namespace of NAMESPACES) await sim.createPod(namespace, "p");
});

async function summary(token: string): Promise<{ kind: string; apiVersion: string; status: Record<string, unknown> }> {
  const response = await relay(PATH, { headers: bearer(token) });
  expect(response.status).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return response.json();
}

describe("what a token may read, as the cluster says", () => {
  it("a token with rules in one namespace: that namespace and its rules, nothing cluster-wide", async () => {
    expect(await summary("nina-token")).toEqual({
      kind: "AccessSummary",
      apiVersion: "relay.kube-watch-relay.dev/v1",
      metadata: {},
      status: {
        user: "nina",
        cluster: "access",
        clusterRules: [],
        namespaces: [{ name: "team-x", resourceRules: [{ verbs: read, apiGroups: [""], resources: ["pods", "events"] }] }],
        incomplete: false,
      },
    });
  });

  it("a token that may read everything: one cluster-wide rule, no namespace named", async () => {
    expect((await summary("wanda-token")).status).toEqual({ user: "wanda", cluster: "access", clusterRules: [{ verbs: read, apiGroups: ["*"], resources: ["*"] }], namespaces: [], incomplete: false });
  });

  it("a rule every namespace grants by its own RoleBinding is not taken for a cluster-wide one", async () => {
    const status = (await summary("rita-token")).status as { clusterRules: unknown[]; namespaces: Array<{ name: string }> };
    expect(status.clusterRules).toEqual([]);
    expect(status.namespaces.map((n) => n.name)).toEqual(NAMESPACES);
  });

  it("a token with no rules: nothing; no token, or one the cluster does not accept: 401", async () => {
    expect((await summary("nobody-token")).status).toEqual({ user: "nobody", cluster: "access", clusterRules: [], namespaces: [], incomplete: false });
    for (const headers of [{}, bearer("stolen")]) {
      const refused = await relay(PATH, { headers });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ kind: "Status", code: 401 });
    }
  });

  it("the answer is kept a while per token: asked again, the cluster is not", async () => {
    await summary("nina-token");
    const mark = await requestMark(sim);
    await summary("nina-token");
    expect((await sim.requests("/apis/authorization.k8s.io/", mark)).requests).toEqual([]);
  });
});
