/**
 * The hub's own life: eviction (invariant 4), slow subscribers (invariant 5), bookmarks to
 * subscribers, and idle shutdown that keeps state for returning subscribers.
 */
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import { BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { eventually, httpWatch, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";
import { PAGE_SIZE } from "../../src/hub/reflector.ts";

function hubOf(cluster: string, namespace: string) {
  const key = watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector: null, fieldSelector: null });
  return env.WATCH_HUB.getByName(hubName(key));
}

describe("hub restarts", () => {
  const sim = new Sim("evict");
  const path = (ns: string, query: string) => `/clusters/evict${podsPath(ns)}?${query}`;
  const touch = (ns: string, label: string) => sim.patchPod(ns, "a", { metadata: { labels: { step: label } } }).then(rvOf);

  /** Resume over both transports from `rv`; each must get exactly `expected`, in order. */
  async function resumeBoth(ns: string, rv: number, expected: number[]): Promise<void> {
    for (const open of [httpWatch, wsWatch]) {
      const resumed = await open(path(ns, `watch=1&resourceVersion=${rv}`));
      expect((await resumed.events.take(expected.length)).map(rvOf)).toEqual(expected);
      expect(resumed.events.size).toBe(0);
      resumed.close();
    }
  }

  it("evicted while its upstream stream is live: resuming subscribers lose nothing", async () => {
    const ns = uniqueNamespace("e");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(path(ns, "watch=1"));
    await sub.events.next();
    const before = [await touch(ns, "b0"), await touch(ns, "b1")];
    expect((await sub.events.take(2)).map(rvOf)).toEqual(before);
    // A connected subscriber keeps the object referenced (and unevictable) in this runtime, so
    // it leaves first; the hub is evicted within its idle grace, its upstream stream still live.
    sub.close();
    const during = [await touch(ns, "d0")];
    await evictDurableObject(hubOf("evict", ns));
    during.push(await touch(ns, "d1"), await touch(ns, "d2"));
    // The hub comes back from storage, resumes upstream from its stored resourceVersion and replays exactly.
    await resumeBoth(ns, before.at(-1)!, during);
  });

  it("restored from a checkpoint plus the window's later events, it has exactly the upstream's objects", async () => {
    const ns = uniqueNamespace("cp");
    for (const name of ["a", "b", "c"]) await sim.createPod(ns, name);
    const sub = await wsWatch(path(ns, "watch=1"));
    await sub.events.take(3);
    // WINDOW_EVENTS is 500: evicting past the last checkpoint forces a new one, then more events follow it.
    for (let i = 0; i < 520; i++) await sim.patchPod(ns, ["a", "b", "c"][i % 3]!, { metadata: { labels: { i: String(i) } } });
    await sim.deletePod(ns, "b");
    await sim.createPod(ns, "d");
    const seen = await sub.events.take(522);
    sub.close();
    await abortAllDurableObjects();

    const listed = (await (await relay(path(ns, "resourceVersion=0"))).json()) as { items: KubeObject[] };
    const upstream = await sim.list(`/api/v1/namespaces/${ns}/pods`);
    expect(listed.items.map((o) => [o.metadata!.name, o.metadata!.resourceVersion])).toEqual(upstream.items.map((o) => [o.metadata!.name, o.metadata!.resourceVersion]));
    const last = [await touch(ns, "after")];
    await resumeBoth(ns, rvOf(seen.at(-1)!), last);
  });

  it("crashed with subscribers connected (reset without warning): they see the drop and resume exactly", async () => {
    const ns = uniqueNamespace("c");
    await sim.createPod(ns, "a");
    const ws = await wsWatch(path(ns, "watch=1"));
    const http = await httpWatch(path(ns, "watch=1"));
    await ws.events.next();
    await http.events.next();
    const before = [await touch(ns, "b0")];
    expect((await ws.events.take(1)).map(rvOf)).toEqual(before);
    expect((await http.events.take(1)).map(rvOf)).toEqual(before);

    await abortAllDurableObjects();
    expect((await ws.events.closed()).code).toBe(1006);
    await http.events.closed();
    const after = [await touch(ns, "a0"), await touch(ns, "a1")];
    await resumeBoth(ns, before[0]!, after);
  });
});

describe("slow subscribers", () => {
  const sim = new Sim("slow");
  const path = (ns: string, query: string) => `/clusters/slow${podsPath(ns)}?${query}`;

  /** A WebSocket subscriber that acknowledges everything it receives at once. */
  async function prompt(ns: string) {
    const sub = await wsWatch(path(ns, "watch=1"));
    let received = 0;
    sub.socket.addEventListener("message", (m) => {
      received += (m.data as string).length;
      sub.socket.send(JSON.stringify({ type: "ACK", received }));
    });
    return sub;
  }

  it("one slow subscriber among 100 is cut off with a reason, the others are not held back, and it resumes", async () => {
    const ns = uniqueNamespace("s");
    await sim.createPod(ns, "big");
    const others = await Promise.all(Array.from({ length: 99 }, () => prompt(ns)));
    // Acknowledges once (so the hub measures it), then never again.
    const slow = await wsWatch(path(ns, "watch=1"));
    slow.socket.send(JSON.stringify({ type: "ACK", received: 0 }));
    // An HTTP subscriber that never reads: its unread bytes are its backlog.
    const stalled = await relay(path(ns, "watch=1"));
    for (const s of [...others, slow]) await s.events.next();

    // 40 events of ~10 KB each: 400 KB, beyond the 256 KiB budget of the tests.
    const padding = "x".repeat(10_000);
    const written: number[] = [];
    for (let i = 0; i < 40; i++) written.push(rvOf(await sim.patchPod(ns, "big", { metadata: { annotations: { padding: `${i}${padding}` } } })));

    for (const s of others) expect((await s.events.take(40)).map(rvOf)).toEqual(written);
    const closed = await slow.events.closed();
    expect(closed).toMatchObject({ code: 4008, reason: expect.stringContaining("slow subscriber") });
    const got = slow.events.drain();
    expect(got.length).toBeLessThan(40);
    expect(got.map(rvOf)).toEqual(written.slice(0, got.length));

    const resumed = await wsWatch(path(ns, `watch=1&resourceVersion=${rvOf(got.at(-1)!)}`));
    expect((await resumed.events.take(40 - got.length)).map(rvOf)).toEqual(written.slice(got.length));

    // The HTTP subscriber was cut off too: its stream ends before the last event.
    const text = await stalled.text();
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as WatchEvent);
    expect(lines.length).toBeLessThan(41);
    [...others, resumed].forEach((s) => s.close());
  });
});

describe("subscribers that fall behind", () => {
  const sim = new Sim("slow");
  const path = (ns: string, query: string) => `/clusters/slow${podsPath(ns)}?${query}`;

  it("a batched subscriber that stops acknowledging is sent nothing more, then gets what it missed in one message when it acknowledges", async () => {
    const ns = uniqueNamespace("lag");
    await sim.createPod(ns, "big");
    const lagging = await wsWatch(path(ns, "watch=1"), { "sec-websocket-protocol": BATCH_PROTOCOL });
    lagging.socket.send(JSON.stringify({ type: "ACK", received: 0 }));
    await lagging.events.next();
    // On the same hub, a prompt subscriber: once it has every change, so has the hub.
    const prompt = await wsWatch(path(ns, "watch=1"));
    await prompt.events.next();

    // 20 changes of ~10 KB: past half the tests' 256 KiB budget unacknowledged, the hub stops sending.
    // Each is written once the prompt subscriber has the one before, so each is a commit (and a
    // message) of its own, however long the hub gathers: what ends up ready together is sent whole.
    const padding = "x".repeat(10_000);
    const written: number[] = [];
    for (let i = 0; i < 20; i++) {
      written.push(rvOf(await sim.patchPod(ns, "big", { metadata: { annotations: { padding: `${i}${padding}` } } })));
      expect(rvOf(await prompt.events.next())).toBe(written.at(-1));
    }
    const before = lagging.events.drain();
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(19);
    expect(before.map(rvOf)).toEqual(written.slice(0, before.length));

    const messages = lagging.raw.length;
    lagging.socket.send(JSON.stringify({ type: "ACK", received: lagging.raw.reduce((n, m) => n + m.length, 0) }));
    const rest = await lagging.events.take(20 - before.length);
    expect(rest.map(rvOf)).toEqual(written.slice(before.length));
    expect(lagging.raw.length).toBe(messages + 1);
    expect(lagging.socket.readyState).toBe(WebSocket.OPEN);
    [lagging, prompt].forEach((s) => s.close());
  });
});

describe("bookmarks to subscribers", () => {
  const sim = new Sim();

  it("a quiet subscriber that asked for bookmarks gets a fresh resume point, and it resumes exactly", async () => {
    const ns = uniqueNamespace("b");
    const pod = await sim.createPod(ns, "quiet");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1&allowWatchBookmarks=true`);
    const added = await sub.events.next();
    expect(rvOf(added)).toBe(rvOf(pod));
    // Writes elsewhere move the cluster's resourceVersion; upstream bookmarks carry it to the hub.
    const elsewhere = uniqueNamespace("other");
    const moved = await sim.createPod(elsewhere, "noise");
    const bookmark = await eventually(async () => {
      const event = await sub.events.next("a bookmark");
      return event.type === "BOOKMARK" && rvOf(event) >= rvOf(moved) ? event : undefined;
    }, "a bookmark past the other namespace's write");
    expect(bookmark.object).toMatchObject({ kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } });
    sub.close();

    const resumed = await wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${rvOf(bookmark)}`);
    const change = await sim.patchPod(ns, "quiet", { metadata: { labels: { woke: "up" } } });
    const next = await resumed.events.next();
    expect([next.type, rvOf(next)]).toEqual(["MODIFIED", rvOf(change)]);
    resumed.close();
  });

  it("subscribers that did not ask get no bookmarks", async () => {
    const ns = uniqueNamespace("nb");
    await sim.createPod(ns, "p");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    const probe = await wsWatch(`${podsPath(ns)}?watch=1&allowWatchBookmarks=true`);
    await sub.events.next();
    await probe.events.next();
    await sim.createPod(uniqueNamespace("other"), "noise");
    // Once the probe on the same hub has had a bookmark, the other would have had one too.
    await eventually(async () => ((await probe.events.next("a bookmark")).type === "BOOKMARK" ? true : undefined), "a bookmark to the probe");
    expect(sub.events.drain().filter((e) => e.type === "BOOKMARK")).toEqual([]);
    sub.close();
    probe.close();
  });
});

describe("idle shutdown", () => {
  const sim = new Sim();

  it("stops the upstream watch after the grace period and keeps state for subscribers that come back", async () => {
    const ns = uniqueNamespace("i");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    const last = rvOf(await sub.events.next());
    expect(await sim.watchesOn(podsPath(ns))).toHaveLength(1);
    sub.close();
    // IDLE_GRACE_SECONDS is 3 in tests. (The upstream's own count can drop for a moment while a
    // loaded machine makes the hub re-watch, so the hub's word comes first.)
    await eventually(async () => !((await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { watching: boolean }).watching, "the hub to stop its upstream watch");
    expect(await (await relay(`/_relay/stats${podsPath(ns)}`)).json()).toMatchObject({ subscribers: 0, watching: false, objects: 1 });
    await eventually(async () => (await sim.watchesOn(podsPath(ns))).length === 0, "the upstream to see the watch closed");

    const change = await sim.patchPod(ns, "a", { metadata: { labels: { while: "idle" } } });
    const back = await wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${last}`);
    const event = await back.events.next();
    expect([event.type, rvOf(event)]).toEqual(["MODIFIED", rvOf(change)]);
    back.close();
  });

  it("finishes a first list that outlasts its first request and the grace, though nobody subscribes", async () => {
    const ns = uniqueNamespace("i");
    // Two pages of the hub's list (PAGE_SIZE is 500).
    const pods = PAGE_SIZE + 1;
    for (let i = 0; i < pods; i += 50) await Promise.all(Array.from({ length: Math.min(50, pods - i) }, (_, j) => sim.createPod(ns, `p-${i + j}`)));
    // The API server takes 15 s over the first page: the request that starts the hub waits for
    // it SYNC_WAIT_SECONDS (5 in tests) and is answered 503, then IDLE_GRACE_SECONDS (3 in
    // tests) pass with nobody subscribed, while the page is still on its way.
    await sim.faults({ delayRequests: { count: 1, ms: 15_000, verbs: ["list"], path: podsPath(ns) } });
    const before = await sim.requests(podsPath(ns));
    expect((await relay(podsPath(ns))).status).toBe(503);
    const stats = async () => (await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { objects: number; watching: boolean };
    await eventually(async () => (await stats()).objects === pods, "the hub to finish its list", 20_000);
    // Read once, page after page: the list was not given up and asked for again. (A consistent
    // read asks the upstream's resourceVersion too, with a list of one.)
    const pages = (await sim.requests(podsPath(ns), before.next)).requests.filter((r) => r.verb === "list" && new URLSearchParams(r.query).get("limit") !== "1");
    expect(pages.map((r) => new URLSearchParams(r.query).has("continue"))).toEqual([false, true]);
    // Then the watch stops: the grace ran out while the hub listed.
    await eventually(async () => !(await stats()).watching, "the hub to stop its upstream watch");
    expect(await stats()).toMatchObject({ subscribers: 0, watching: false, objects: pods });
  }, 60_000);

  it("notices an HTTP subscriber that went away, and stops the upstream watch", async () => {
    const ns = uniqueNamespace("i");
    await sim.createPod(ns, "a");
    const sub = await httpWatch(`${podsPath(ns)}?watch=1`);
    await sub.events.next();
    expect(await (await relay(`/_relay/stats${podsPath(ns)}`)).json()).toMatchObject({ subscribers: 1, watching: true });
    sub.close();
    await eventually(async () => (await sim.watchesOn(podsPath(ns))).length === 0, "the upstream watch to stop");
    expect(await (await relay(`/_relay/stats${podsPath(ns)}`)).json()).toMatchObject({ subscribers: 0, watching: false });
  });
});

describe("what a hub stores, and for how long", () => {
  const sim = new Sim();
  /** The hub's own tables in its SQLite database (not the runtime's `_cf_` ones): none while it stores nothing. */
  const tablesOf = (cluster: string, ns: string) =>
    runInDurableObject(
      hubOf(cluster, ns),
      (_: unknown, state: DurableObjectState) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 4) != '_cf_'").one().n,
    );

  it("asked about, or refused before it ever synced, a hub stores nothing", async () => {
    const asked = uniqueNamespace("s");
    expect(await (await relay(`/_relay/stats${podsPath(asked)}`)).json()).toMatchObject({ subscribers: 0, watching: false });
    expect(await tablesOf("default", asked)).toBe(0);

    const refused = uniqueNamespace("s");
    await sim.faults({ failRequests: { count: 1000, status: 403, verbs: ["list"], path: podsPath(refused) } });
    try {
      expect((await relay(podsPath(refused))).status).toBe(403);
    } finally {
      await sim.faults({ failRequests: { count: 0, status: 403 } });
    }
    expect(await tablesOf("default", refused)).toBe(0);
  });

  it("stopped for HUB_RETENTION_SECONDS, a hub deletes its storage; the next subscriber lists afresh", async () => {
    const ns = uniqueNamespace("s");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    await sub.events.next();
    expect(await tablesOf("default", ns)).toBeGreaterThan(0);
    const before = await sim.requests(podsPath(ns));
    sub.close();
    // IDLE_GRACE_SECONDS is 3 and HUB_RETENTION_SECONDS 8 in tests: the watch stops, then the storage goes.
    await eventually(async () => (await tablesOf("default", ns)) === 0, "the stopped hub to delete its storage", 30_000);
    expect(await (await relay(`/_relay/stats${podsPath(ns)}`)).json()).toMatchObject({ subscribers: 0, watching: false, upstream: "stopped" });

    const back = await wsWatch(`${podsPath(ns)}?watch=1`);
    expect((await back.events.next()).object.metadata?.name).toBe("a");
    back.close();
    const verbs = (await sim.requests(podsPath(ns), before.next)).requests.map((r) => r.verb);
    expect(verbs).toContain("list");
  });
});
