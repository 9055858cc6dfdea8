/**
 * A list or get with `resourceVersion` unset, and a watch-list without one, is a consistent read:
 * never older than the upstream at the moment of the request, whatever state the hub is in —
 * watching (its upstream's watch behind the upstream's writes), idle (its upstream watch
 * stopped), restarted after eviction, or behind (its watch failing) — and a hub woken by a list
 * goes idle again.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import { INITIAL_EVENTS_END, type KubeObject } from "../../src/k8s/types.ts";
import { eventually, httpWatch, nameOf, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
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

describe("consistent reads through a hub that is watching, its upstream's watch 150 ms behind the upstream's writes", () => {
  // An API server under load: its watch cache, and so every watch, has a change 150 ms after it
  // is made, and bookmarks once a minute; its lists and gets are as new as etcd.
  const LAG_MS = 150;
  const ROUNDS = 20;
  const prefix = "/clusters/lagging";
  const sim = new Sim("lagging");
  beforeAll(() => sim.configure({ watchDelayMs: LAG_MS }));
  afterAll(() => sim.configure({ watchDelayMs: 0 }));

  /** A namespace with a pod, its hub watching: a subscriber has had its state. */
  async function watched(name: string) {
    const ns = uniqueNamespace(name);
    await sim.createPod(ns, "first");
    const sub = await wsWatch(`${prefix}${podsPath(ns)}?watch=1`);
    await sub.events.next();
    return { ns, sub };
  }

  /** The requests the upstream got for the namespace since `since`: its probes (watch-lists), and everything else as `verb`. */
  async function asked(ns: string, since: number): Promise<string[]> {
    const { requests } = await sim.requests(`/api/v1/namespaces/${ns}/`, since);
    return requests.map((r) => (r.verb === "watch" && new URLSearchParams(r.query).get("sendInitialEvents") === "true" ? "probe" : r.verb));
  }

  const mark = async () => (await sim.requests("/nothing")).next;
  const tally = (requests: string[]) => Object.fromEntries([...new Set(requests)].map((r) => [r, requests.filter((x) => x === r).length]));

  it(`a list right after each of ${ROUNDS} creates has the object, at one small upstream request each (never a list); resourceVersion=0 asks nothing`, async () => {
    const { ns, sub } = await watched("lag-list");
    try {
      const since = await mark();
      const misses: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const created = await sim.createPod(ns, `p-${i}`);
        const list = (await (await relay(`${prefix}${podsPath(ns)}`)).json()) as PodList;
        if (!list.items.some((o) => o.metadata?.name === `p-${i}`) || Number(list.metadata.resourceVersion) < rvOf(created))
          misses.push(`p-${i} (list at ${list.metadata.resourceVersion}, created at ${rvOf(created)})`);
      }
      expect(misses).toEqual([]);
      expect(tally(await asked(ns, since))).toEqual({ create: ROUNDS, probe: ROUNDS });

      const before = await mark();
      await sim.createPod(ns, "any");
      expect((await relay(`${prefix}${podsPath(ns)}?resourceVersion=0`)).status).toBe(200);
      expect(await asked(ns, before)).toEqual(["create"]);
    } finally {
      sub.close();
    }
  });

  it(`a get right after each of ${ROUNDS} creates finds the object: the upstream's own consistent read, one get`, async () => {
    const { ns, sub } = await watched("lag-get");
    try {
      const since = await mark();
      const misses: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const created = await sim.createPod(ns, `p-${i}`);
        const got = await relay(`${prefix}${podsPath(ns)}/p-${i}`);
        if (got.status !== 200 || rvOf((await got.json()) as KubeObject) !== rvOf(created)) misses.push(`p-${i} (${got.status})`);
      }
      expect(misses).toEqual([]);
      expect(tally(await asked(ns, since))).toEqual({ create: ROUNDS, get: ROUNDS });
    } finally {
      sub.close();
    }
  });

  it(`a watch-list right after each of ${ROUNDS} creates has the object among its initial events, at one probe each`, async () => {
    const { ns, sub } = await watched("lag-wl");
    try {
      const since = await mark();
      const misses: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const created = await sim.createPod(ns, `p-${i}`);
        const watch = await httpWatch(`${prefix}${podsPath(ns)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
        const initial = [];
        for (let e = await watch.events.next(); ; e = await watch.events.next()) {
          if (e.type === "BOOKMARK" && e.object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true") {
            if (rvOf(e) < rvOf(created)) misses.push(`p-${i} (initial events end at ${rvOf(e)}, created at ${rvOf(created)})`);
            break;
          }
          initial.push(nameOf(e));
        }
        watch.close();
        if (!initial.includes(`p-${i}`)) misses.push(`p-${i} (not among ${initial.length} initial events)`);
      }
      expect(misses).toEqual([]);
      expect(tally(await asked(ns, since))).toEqual({ create: ROUNDS, probe: ROUNDS });
    } finally {
      sub.close();
    }
  });

  it("against an upstream without watch-lists (Kubernetes 1.33), a list right after each create has it: a `limit=1` list, then a short watch whose bookmark says the hub has it; never a whole list", async () => {
    await sim.configure({ watchList: false });
    try {
      const { ns, sub } = await watched("lag-1-33");
      try {
        const since = await mark();
        const misses: string[] = [];
        for (let i = 0; i < 3; i++) {
          const created = await sim.createPod(ns, `p-${i}`);
          const list = (await (await relay(`${prefix}${podsPath(ns)}`)).json()) as PodList;
          if (!list.items.some((o) => o.metadata?.name === `p-${i}`)) misses.push(`p-${i} (list at ${list.metadata.resourceVersion}, created at ${rvOf(created)})`);
        }
        expect(misses).toEqual([]);
        const { requests } = await sim.requests(`/api/v1/namespaces/${ns}/`, since);
        // One probe, refused: the hub asks no more of them.
        expect(requests.filter((r) => new URLSearchParams(r.query).get("sendInitialEvents") === "true").map((r) => r.status)).toEqual([422]);
        const lists = requests.filter((r) => r.verb === "list").map((r) => r.query);
        expect(lists).toEqual(["limit=1", "limit=1", "limit=1"]);
        expect(requests.filter((r) => r.verb === "watch" && new URLSearchParams(r.query).get("timeoutSeconds") === "3").length).toBeGreaterThanOrEqual(1);
      } finally {
        sub.close();
      }
    } finally {
      await sim.configure({ watchList: true });
    }
  });

  it("lists that arrive together share a probe: each has the write, and the upstream is asked at most twice", async () => {
    const { ns, sub } = await watched("lag-shared");
    try {
      const since = await mark();
      const created = await sim.createPod(ns, "together");
      const lists = await Promise.all(Array.from({ length: 10 }, async () => (await (await relay(`${prefix}${podsPath(ns)}`)).json()) as PodList));
      for (const list of lists) expect(list.items.find((o) => o.metadata?.name === "together")?.metadata?.resourceVersion).toBe(String(rvOf(created)));
      const probes = (await asked(ns, since)).filter((r) => r === "probe").length;
      expect(probes).toBeGreaterThanOrEqual(1);
      expect(probes).toBeLessThanOrEqual(2);
    } finally {
      sub.close();
    }
  });
});
