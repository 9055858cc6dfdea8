/** `/_relay/access` in AUTH_MODE=jwt: the token's own rules, for the cluster asked about. */
import { describe, expect, it } from "vitest";
import { relay } from "../worker/helpers.ts";
import { jwtFor } from "../kit/tokens.ts";

const read = ["get", "list", "watch"];

describe("what a token may read, as its rules say", () => {
  it("rules for all namespaces hold cluster-wide; the others name their namespaces; another cluster's rules are left out", async () => {
    const token = await jwtFor("alice", [
      { apiGroups: [""], resources: ["pods", "events"], namespaces: ["team-b", "team-a"] },
      { apiGroups: ["apps"], resources: ["deployments"], namespaces: ["team-a"] },
      { apiGroups: [""], resources: ["namespaces"], namespaces: ["*"] },
      { clusters: ["other"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"] },
    ]);
    const response = await relay("/_relay/access", { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      kind: "AccessSummary",
      apiVersion: "relay.kube-watch-relay.dev/v1",
      metadata: {},
      status: {
        user: "alice",
        cluster: "default",
        clusterRules: [{ verbs: read, apiGroups: [""], resources: ["namespaces"] }],
        namespaces: [
          {
            name: "team-a",
            resourceRules: [
              { verbs: read, apiGroups: [""], resources: ["pods", "events"] },
              { verbs: read, apiGroups: ["apps"], resources: ["deployments"] },
            ],
          },
          { name: "team-b", resourceRules: [{ verbs: read, apiGroups: [""], resources: ["pods", "events"] }] },
        ],
        incomplete: false,
      },
    });
    const other = await relay("/_relay/access/clusters/other", { headers: { authorization: `Bearer ${token}` } });
    expect(((await other.json()) as { status: { clusterRules: unknown[] } }).status.clusterRules).toEqual([
      { verbs: read, apiGroups: [""], resources: ["namespaces"] },
      { verbs: read, apiGroups: ["*"], resources: ["*"] },
    ]);
  });

  it("without a token, 401 saying so; an unknown cluster, 404 once the token is accepted", async () => {
    const refused = await relay("/_relay/access");
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ kind: "Status", code: 401, message: expect.stringContaining("no bearer token") });
    const token = await jwtFor("alice", [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }]);
    expect((await relay("/_relay/access/clusters/nowhere", { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });

  it("the clusters' names: without a token, 401, so nobody learns which clusters exist; with one, their names", async () => {
    expect((await relay("/_relay/clusters")).status).toBe(401);
    const token = await jwtFor("alice", [{ clusters: ["other"], apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
    const response = await relay("/_relay/clusters", { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ kind: "ClusterNames", names: expect.arrayContaining(["default", "other"]) });
  });
});
