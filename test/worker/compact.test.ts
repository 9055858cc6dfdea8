/**
 * Resume from anywhere (`compact=true`): a subscriber that resumes from a resourceVersion gets
 * each object that changed since once, at its current state, each deletion (and each object
 * that left its selector) as DELETED, then a BOOKMARK at the hub's head, then live events —
 * also from beyond the replay window, also after the hub restarted; 410 only before the
 * tombstones' horizon.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { eventually, httpWatch, nameOf, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim("evict");
const path = (ns: string, query: string) => `/clusters/evict${podsPath(ns)}?${query}`;

function hubOf(namespace: string, labelSelector: string | null = null) {
  const key = watchKey({ cluster: "evict", group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector, fieldSelector: null });
  return env.WATCH_HUB.getByName(hubName(key));
}

/** Apply events to a collection by name, as an informer would. */
function apply(state: Map<string, string>, events: WatchEvent[]): Map<string, string> {
  for (const e of events) {
    if (e.type === "DELETED") state.delete(nameOf(e));
    else if (e.type !== "BOOKMARK") state.set(nameOf(e), (e.object as KubeObject).metadata!.resourceVersion!);
  }
  return state;
}

/** Until the hub has taken in the upstream's changes up to `rv`: a list from `rv` on waits for it (and wakes an idle hub). */
async function hubReached(ns: string, rv: number, labelSelector = ""): Promise<void> {
  const selector = labelSelector ? `&labelSelector=${encodeURIComponent(labelSelector)}` : "";
  await eventually(async () => {
    const response = await relay(`/clusters/evict${podsPath(ns)}?resourceVersion=${rv}${selector}`);
    await response.body?.cancel();
    return response.status === 200;
  }, `the hub to reach resourceVersion ${rv}`);
}

async function upstreamState(ns: string, labelSelector = ""): Promise<Map<string, string>> {
  const list = await sim.list(`${podsPath(ns)}${labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : ""}`);
  return new Map(list.items.map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]));
}

describe("resume for net changes (compact=true)", () => {
  it("from inside the window: each changed object once, deletions, then a bookmark at the head and live events", async () => {
    const ns = uniqueNamespace("nc");
    for (const name of ["a", "b", "c"]) await sim.createPod(ns, name);
    const sub = await wsWatch(path(ns, "watch=1"));
    const seen = apply(new Map(), await sub.events.take(3));
    await sim.patchPod(ns, "a", { metadata: { labels: { v: "0" } } });
    const last = await sub.events.next();
    apply(seen, [last]);
    const from = rvOf(last);
    sub.close();

    for (let i = 1; i <= 5; i++) await sim.patchPod(ns, "a", { metadata: { labels: { v: String(i) } } });
    await sim.deletePod(ns, "b");
    await sim.createPod(ns, "d");
    const head = rvOf(await sim.patchPod(ns, "d", { metadata: { labels: { v: "d" } } }));
    await hubReached(ns, head);

    const resumed = [await wsWatch(path(ns, `watch=1&resourceVersion=${from}&compact=true`)), await httpWatch(path(ns, `watch=1&resourceVersion=${from}&compact=true`))];
    for (const sub of resumed) {
      const events = await sub.events.take(4);
      expect(events.map((e) => [e.type, nameOf(e)])).toEqual([
        ["MODIFIED", "a"],
        ["DELETED", "b"],
        ["ADDED", "d"],
        ["BOOKMARK", ""],
      ]);
      expect(rvOf(events[3]!)).toBeGreaterThanOrEqual(head);
      expect(apply(new Map(seen), events)).toEqual(await upstreamState(ns));
    }
    const live = await sim.patchPod(ns, "c", { metadata: { labels: { live: "yes" } } });
    for (const sub of resumed) {
      const next = await sub.events.next();
      expect([next.type, nameOf(next), rvOf(next)]).toEqual(["MODIFIED", "c", rvOf(live)]);
      sub.close();
    }
  });

  it("from beyond the window, where a plain resume gets 410: converges, and after the hub restarts too", async () => {
    const ns = uniqueNamespace("nw");
    for (const name of ["a", "b", "c"]) await sim.createPod(ns, name);
    const sub = await wsWatch(path(ns, "watch=1"));
    const seen = apply(new Map(), await sub.events.take(3));
    const from = Math.max(...[...seen.values()].map(Number));
    sub.close();
    // WINDOW_EVENTS is 500 in tests: more changes than that push `from` out of the window.
    for (let i = 0; i < 520; i++) await sim.patchPod(ns, ["a", "c"][i % 2]!, { metadata: { labels: { i: String(i) } } });
    await hubReached(ns, rvOf(await sim.deletePod(ns, "b")));

    const plain = await httpWatch(path(ns, `watch=1&resourceVersion=${from}`));
    expect((await plain.events.next()).object).toMatchObject({ kind: "Status", code: 410 });

    await evictDurableObject(hubOf(ns));
    const resumed = await httpWatch(path(ns, `watch=1&resourceVersion=${from}&compact=true`));
    // In resourceVersion order: the last change to each, and the deletion last of all.
    const events = await resumed.events.take(3);
    expect(events.map((e) => [e.type, nameOf(e)])).toEqual([
      ["MODIFIED", "a"],
      ["MODIFIED", "c"],
      ["DELETED", "b"],
    ]);
    const bookmark = await resumed.events.next();
    expect(bookmark.type).toBe("BOOKMARK");
    expect(apply(seen, events)).toEqual(await upstreamState(ns));
    resumed.close();
  });

  for (const compact of [false, true]) {
    it(`to a hub restarted while the cluster changed${compact ? ", for net changes" : ""}: what it missed, then the bookmark, not a bookmark and then the changes as if live`, async () => {
      const ns = uniqueNamespace("nr");
      for (const name of ["a", "b"]) await sim.createPod(ns, name);
      const sub = await wsWatch(path(ns, "watch=1&allowWatchBookmarks=true"));
      const seen = apply(new Map(), await sub.events.take(2));
      const from = Math.max(...[...seen.values()].map(Number));
      sub.close();
      // The hub restarts (a deploy, an eviction) and the cluster moves on before anyone resumes.
      await evictDurableObject(hubOf(ns));
      for (let i = 1; i <= 3; i++) await sim.patchPod(ns, "a", { metadata: { labels: { v: String(i) } } });
      const deleted = await sim.deletePod(ns, "b");

      const resumed = await wsWatch(path(ns, `watch=1&allowWatchBookmarks=true&resourceVersion=${from}${compact ? "&compact=true" : ""}`));
      const events: WatchEvent[] = [];
      for (let e = await resumed.events.next(); e.type !== "BOOKMARK"; e = await resumed.events.next()) events.push(e);
      // Every change (or, for net changes, each object's last) before the resume's bookmark.
      const missed = compact ? ["a", "b"] : ["a", "a", "a", "b"];
      expect(events.map((e) => [e.type, nameOf(e)])).toEqual(missed.map((name) => [name === "b" ? "DELETED" : "MODIFIED", name]));
      expect(rvOf(events.at(-1)!)).toBe(rvOf(deleted));
      expect(apply(new Map(seen), events)).toEqual(await upstreamState(ns));
      resumed.close();
    });
  }

  it("an object that left the selector is DELETED for the subscriber", async () => {
    const ns = uniqueNamespace("ns");
    await sim.createPod(ns, "in", { app: "web" });
    await sim.createPod(ns, "out", { app: "web" });
    const selector = "labelSelector=app%3Dweb";
    const sub = await wsWatch(path(ns, `watch=1&${selector}`));
    const taken = await sub.events.take(2);
    const from = Math.max(...taken.map(rvOf));
    sub.close();
    await hubReached(ns, rvOf(await sim.patchPod(ns, "out", { metadata: { labels: { app: "db" } } })), "app=web");
    const resumed = await wsWatch(path(ns, `watch=1&${selector}&resourceVersion=${from}&compact=true`));
    const events = await resumed.events.take(2);
    expect(events.map((e) => [e.type, nameOf(e)])).toEqual([
      ["DELETED", "out"],
      ["BOOKMARK", ""],
    ]);
    expect(apply(apply(new Map(), taken), events)).toEqual(await upstreamState(ns, "app=web"));
    resumed.close();
  });

  it("from before the tombstones' horizon: 410 Expired, as the API server answers a compacted resourceVersion", async () => {
    const ns = uniqueNamespace("nh");
    const names = Array.from({ length: 25 }, (_, i) => `p${i}`);
    for (const name of names) await sim.createPod(ns, name);
    const sub = await wsWatch(path(ns, "watch=1"));
    const from = Math.max(...(await sub.events.take(names.length)).map(rvOf));
    sub.close();
    // TOMBSTONES_MAX is 20 in tests: the 21st deletion drops the first tombstone.
    let last = 0;
    for (const name of names) last = rvOf(await sim.deletePod(ns, name));
    await hubReached(ns, last);
    const tooOld = await httpWatch(path(ns, `watch=1&resourceVersion=${from}&compact=true`));
    expect((await tooOld.events.next()).object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    await tooOld.events.closed();
    const recent = await httpWatch(path(ns, `watch=1&resourceVersion=${last - 3}&compact=true`));
    expect((await recent.events.take(4)).map((e) => e.type)).toEqual(["DELETED", "DELETED", "DELETED", "BOOKMARK"]);
    recent.close();
  });
});
