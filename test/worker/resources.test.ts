/**
 * @module
 * Resources other than pods, resolved through discovery: cluster-scoped (nodes, namespaces) and
 * grouped (deployments.apps) ones list, get and watch as they do against the API server.
 * (Custom resources are in `discovery.test.ts`, beside the discovery counts they share.)
 */
import { describe, expect, it } from "vitest";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { httpWatch, nameOf, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { simCreate } from "./kube-helpers.ts";

const sim = new Sim();

const uids = (objects: KubeObject[]) => objects.map((o) => o.metadata?.uid).sort();
const typeOf = (e: WatchEvent) => [e.type, nameOf(e), e.object.kind, e.object.apiVersion];

async function list(path: string): Promise<{ kind: string; apiVersion: string; items: KubeObject[] }> {
  const response = await relay(path);
  expect(response.status).toBe(200);
  return response.json();
}

describe("cluster-scoped resources", () => {
  it("nodes list, get and watch like the API server's", async () => {
    const fromSim = (await sim.list("/api/v1/nodes")).items;
    const nodes = await list("/api/v1/nodes");
    expect([nodes.kind, nodes.apiVersion]).toEqual(["NodeList", "v1"]);
    expect(uids(nodes.items)).toEqual(uids(fromSim));
    const name = fromSim[0]!.metadata!.name!;
    expect(await (await relay(`/api/v1/nodes/${name}`)).json()).toMatchObject({ kind: "Node", metadata: { name } });
    const watch = await httpWatch("/api/v1/nodes?watch=1");
    const initial = await watch.events.take(fromSim.length);
    expect(initial.map(typeOf)).toEqual(fromSim.map((n) => ["ADDED", n.metadata?.name, "Node", "v1"]));
    watch.close();
  });

  it("a new namespace reaches a namespaces watch; the Namespace object is got by name", async () => {
    const ns = uniqueNamespace("scope");
    const watch = await httpWatch(`/api/v1/namespaces?watch=1&fieldSelector=${encodeURIComponent(`metadata.name=${ns}`)}`);
    const created = await simCreate(sim, "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const added = await watch.events.next("the new namespace");
    expect(typeOf(added)).toEqual(["ADDED", ns, "Namespace", "v1"]);
    expect(added.object.metadata?.uid).toBe(created.metadata?.uid);
    expect(await sim.watchesOn("/api/v1/namespaces")).toContainEqual(expect.objectContaining({ fieldSelector: `metadata.name=${ns}` }));
    expect(await (await relay(`/api/v1/namespaces/${ns}`)).json()).toMatchObject({ kind: "Namespace", metadata: { name: ns, uid: created.metadata?.uid } });
    watch.close();
  });
});

describe("grouped resources", () => {
  it("deployments.apps list across namespaces and in one, and watch (also on the legacy /watch/ path)", async () => {
    const all = await list("/apis/apps/v1/deployments");
    expect([all.kind, all.apiVersion]).toEqual(["DeploymentList", "apps/v1"]);
    expect(uids(all.items)).toEqual(uids((await sim.list("/apis/apps/v1/deployments")).items));
    expect(uids((await list("/apis/apps/v1/namespaces/team-a/deployments")).items)).toEqual(uids((await sim.list("/apis/apps/v1/namespaces/team-a/deployments")).items));

    const ns = uniqueNamespace("apps");
    const watch = await httpWatch(`/apis/apps/v1/namespaces/${ns}/deployments?watch=1`);
    const legacy = await httpWatch(`/apis/apps/v1/watch/namespaces/${ns}/deployments`);
    const labels = { app: "shop" };
    const created = await simCreate(sim, `/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "shop", namespace: ns },
      spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "shop", image: "shop:1" }] } } },
    });
    for (const w of [watch, legacy]) {
      const added = await w.events.next("the new deployment");
      expect(typeOf(added)).toEqual(["ADDED", "shop", "Deployment", "apps/v1"]);
      expect(added.object.metadata?.uid).toBe(created.metadata?.uid);
      w.close();
    }
    // Both spellings are one key: one upstream watch.
    expect(await sim.watchesOn(`/apis/apps/v1/namespaces/${ns}/deployments`)).toHaveLength(1);
  });
});
