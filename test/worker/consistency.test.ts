/**
 * A list or get with `resourceVersion` unset is a consistent read: never older than the
 * upstream at the moment of the request, whatever state the hub is in — watching, idle (its
 * upstream watch stopped), restarted after eviction, or behind (its watch failing) — and a hub
 * woken by a list goes idle again.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { eventually, relay, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

interface PodList {
  metadata: { resourceVersion: string };
  items: KubeObject[];
}

function hubOf(cluster: string, namespace: string) {
  const key = watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector: null, fieldSelector: null });
  return env.WATCH_HUB.getByName(hubName(key));
}

/** The relay's list, as (name, resourceVersion) pairs. */
async function relayList(prefix: string, ns: string): Promise<string[][]> {
  const response = await relay(`${prefix}${podsPath(ns)}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as PodList).items.map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]);
}

async function upstreamList(sim: Sim, ns: string): Promise<string[][]> {
  return (await sim.list(podsPath(ns))).items.map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]);
}

/** Six pods, a list through the relay (which starts its hub), then three changes upstream. */
async function changedAfterList(sim: Sim, prefix: string, ns: string, whileAway: () => Promise<void>): Promise<void> {
  for (const name of ["a", "b", "c", "d", "e", "f"]) await sim.createPod(ns, name);
  expect(await relayList(prefix, ns)).toEqual(await upstreamList(sim, ns));
  await whileAway();
  await sim.deletePod(ns, "a");
  await sim.deletePod(ns, "b");
  await sim.patchPod(ns, "c", { metadata: { labels: { changed: "yes" } } });
}

describe("lists with resourceVersion unset are consistent", () => {
  const sim = new Sim();
  const stats = async (ns: string) => (await relay(`/_relay/stats${podsPath(ns)}`)).json() as Promise<{ watching: boolean; subscribers: number }>;

  it("from an idle hub (its upstream watch stopped): the list and gets show the upstream's state, and the hub goes idle again", async () => {
    const ns = uniqueNamespace("idle");
    await changedAfterList(sim, "", ns, async () => {
      // IDLE_GRACE_SECONDS is 3 in tests.
      await eventually(async () => !(await stats(ns)).watching, "the idle hub to stop its upstream watch");
    });
    expect(await relayList("", ns)).toEqual(await upstreamList(sim, ns));
    expect((await relay(`${podsPath(ns)}/a`)).status).toBe(404);
    const c = (await (await relay(`${podsPath(ns)}/c`)).json()) as KubeObject;
    expect(c.metadata?.labels).toMatchObject({ changed: "yes" });
    // The list woke the hub's upstream watch: with nobody subscribed, it stops again.
    expect((await stats(ns)).watching).toBe(true);
    await eventually(async () => (await sim.watchesOn(podsPath(ns))).length === 0, "the upstream watch the list started to stop again");
    expect(await stats(ns)).toMatchObject({ watching: false, subscribers: 0 });
  });

  it("from a hub that is watching: no upstream list is made for it", async () => {
    const ns = uniqueNamespace("live");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    await sub.events.next();
    const { next } = await sim.requests(podsPath(ns));
    await sim.patchPod(ns, "a", { metadata: { labels: { changed: "yes" } } });
    await sub.events.next();
    const listed = await relayList("", ns);
    expect((await sim.requests(podsPath(ns), next)).requests.filter((r) => r.verb === "list")).toEqual([]);
    expect(listed).toEqual(await upstreamList(sim, ns));
    sub.close();
  });
});

describe("consistent lists after a restart", () => {
  const sim = new Sim("evict");

  it("from a hub restarted after eviction: the list shows the upstream's state", async () => {
    const ns = uniqueNamespace("ev");
    await changedAfterList(sim, "/clusters/evict", ns, () => evictDurableObject(hubOf("evict", ns)));
    expect(await relayList("/clusters/evict", ns)).toEqual(await upstreamList(sim, ns));
  });
});

describe("consistent lists while the upstream watch fails", () => {
  const sim = new Sim("faults");

  it("from a hub whose watch is backing off: the list shows the upstream's state", async () => {
    const ns = uniqueNamespace("behind");
    for (const name of ["a", "b", "c"]) await sim.createPod(ns, name);
    const sub = await wsWatch(`/clusters/faults${podsPath(ns)}?watch=1`);
    await sub.events.take(3);
    // The hub's watch is cut and its next attempts fail: it backs off, and misses what follows.
    await sim.faults({ failRequests: { count: 3, status: 500, verbs: ["watch"], path: podsPath(ns) } });
    await sim.faults({ dropWatches: true });
    await sim.deletePod(ns, "a");
    await sim.patchPod(ns, "b", { metadata: { labels: { changed: "yes" } } });
    expect(await relayList("/clusters/faults", ns)).toEqual(await upstreamList(sim, ns));
    sub.close();
  });
});
