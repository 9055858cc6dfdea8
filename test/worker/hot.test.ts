/**
 * A hot key: once its root hub has its share of subscribers (two, on the `hot` cluster), new
 * ones go to replica hubs, which watch the root, not the API server. Every subscriber, on the
 * root or a replica, gets the same history at the same resourceVersions, and resumes anywhere;
 * the upstream sees one watch; a replica or the root lost mid-burst costs nobody an event.
 */
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeContinue, encodeContinue } from "../../src/hub/snapshots.ts";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import type { WatchEvent } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import type { HubIndexEntry } from "../../src/metrics/report.ts";
import { metricValue, scrape, type Scrape } from "./metrics-helpers.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace, wsWatch, type Subscription } from "./helpers.ts";

const cluster = "hot";
const sim = new Sim(cluster);
const path = (ns: string, query = "watch=1") => `/clusters/${cluster}${podsPath(ns)}?${query}`;

/** A replica that keeps up, on one machine: its commit follows the root's by milliseconds; the rest is slack for a loaded machine. */
const NEAR_ZERO_S = 0.5;

const keyOf = (ns: string) => watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace: ns, namespaced: true, labelSelector: null, fieldSelector: null });

interface Sent {
  events: number;
  messages: number;
}
interface RootStats {
  subscribers: number;
  eventsCommitted: number;
  sent: { websocket: Sent; http: Sent };
  replicas: Array<{ name: string; subscribers: number; head: number }>;
}
const rootOf = (ns: string) => env.WATCH_HUB.getByName(hubName(keyOf(ns)));
const rootStats = async (ns: string) => (await (await relay(`/_relay/stats/clusters/${cluster}${podsPath(ns)}`)).json()) as RootStats;
/** One replica hub's own stats, by the name its root gives it. */
const replicaStats = async (ns: string, name: string) => (await (await relay(`/_relay/stats/clusters/${cluster}${podsPath(ns)}?replica=${encodeURIComponent(name)}`)).json()) as RootStats;

/** `n` watches of `ns`, each once it has the initial state. */
async function subscribe(ns: string, n: number, query?: string): Promise<Subscription[]> {
  const subs: Subscription[] = [];
  for (let i = 0; i < n; i++) {
    const sub = await wsWatch(path(ns, query));
    await sub.events.next();
    subs.push(sub);
  }
  return subs;
}

async function touch(ns: string, n: number, tag: string): Promise<number[]> {
  const rvs: number[] = [];
  for (let i = 0; i < n; i++) rvs.push(rvOf(await sim.patchPod(ns, "a", { metadata: { labels: { step: `${tag}${i}` } } })));
  return rvs;
}

describe("a hot key: a tree of hubs", () => {
  it("past its root's share, subscribers go to a replica; one upstream watch; every subscriber gets the same history", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    const subs = await subscribe(ns, 6);
    const stats = await eventually(async () => {
      const s = await rootStats(ns);
      return s.replicas.reduce((n, r) => n + r.subscribers, 0) === 4 ? s : undefined;
    }, "the replica to report its subscribers");
    // The root serves its first two and the replica; the replica the other four.
    expect(stats.subscribers).toBe(3);
    expect(stats.replicas).toHaveLength(1);
    const expected = await touch(ns, 5, "x");
    for (const sub of subs) expect((await sub.events.take(5)).map(rvOf)).toEqual(expected);
    expect(await sim.watchesOn(podsPath(ns))).toHaveLength(1);
    // The tree as operators see it, once both hubs have reported on their heartbeat: six
    // subscribers, all WebSocket clients; the replica is one of the replica hubs, not a
    // subscriber of its root (nor an HTTP one), and in the hub index with its root.
    const name = stats.replicas[0]!.name;
    const subscribers = (s: Scrape, transport: string) => metricValue(s, "kube_watch_relay_subscribers", { cluster, transport });
    const families = await eventually(async () => {
      await runDurableObjectAlarm(rootOf(ns));
      await runDurableObjectAlarm(env.WATCH_HUB.getByName(name));
      const s = await scrape();
      return subscribers(s, "websocket") === 6 ? s : undefined;
    }, "both hubs' reports of their subscribers");
    expect(subscribers(families, "http")).toBe(0);
    expect(metricValue(families, "kube_watch_relay_replica_hubs", { cluster })).toBe(1);
    const hubs = ((await (await relay("/_relay/hubs")).json()) as { hubs: HubIndexEntry[] }).hubs;
    const root = hubs.find((h) => h.hub === hubName(keyOf(ns)));
    expect(root?.subscribers).toEqual({ websocket: 2, http: 0 });
    expect(root?.replicas).toMatchObject([{ hub: name, subscribers: 4 }]);
    const replica = hubs.find((h) => h.hub === name);
    expect(replica?.root).toBe(hubName(keyOf(ns)));
    expect(replica?.subscribers).toEqual({ websocket: 4, http: 0 });
    for (const sub of subs) sub.close();
  });

  it("replica_lag_seconds is how long after the root a replica committed an event: near zero while it keeps up", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    const subs = await subscribe(ns, 3);
    const { replicas } = await eventually(async () => {
      const s = await rootStats(ns);
      return s.replicas.reduce((n, r) => n + r.subscribers, 0) === 1 ? s : undefined;
    }, "the replica to report its subscriber");
    const name = replicas[0]!.name;
    const expected = await touch(ns, 5, "l");
    for (const sub of subs) expect((await sub.events.take(5)).map(rvOf)).toEqual(expected);
    const lagOf = (hubs: HubIndexEntry[]) => hubs.find((h) => h.hub === hubName(keyOf(ns)))?.replicas?.find((r) => r.hub === name)?.lagSeconds;
    /** The root's report on its heartbeat, as the index and /metrics have it. */
    const reported = async () => {
      await runDurableObjectAlarm(rootOf(ns));
      const hubs = ((await (await relay("/_relay/hubs")).json()) as { hubs: HubIndexEntry[] }).hubs;
      return { lag: lagOf(hubs), gauge: metricValue(await scrape(), "kube_watch_relay_replica_lag_seconds", { cluster }) };
    };
    // Every client has every event, and time passes: what passes is what is tested (a lag that
    // grew with it since the replica's last report would be no lag at all), so it is waited out.
    await new Promise((r) => setTimeout(r, 1_500));
    const idle = await reported();
    expect(idle.lag).toBeLessThan(NEAR_ZERO_S);
    expect(idle.gauge).toBeLessThan(NEAR_ZERO_S);
    // The replica's heartbeat tells its root what it committed, and when: measured, near zero.
    await runDurableObjectAlarm(env.WATCH_HUB.getByName(name));
    await eventually(async () => (await rootStats(ns)).replicas.find((r) => r.name === name)?.head === expected.at(-1), "the replica's report of its head");
    const measured = await reported();
    expect(measured.lag).toBeGreaterThanOrEqual(0);
    expect(measured.lag).toBeLessThan(NEAR_ZERO_S);
    expect(measured.gauge).toBeLessThan(NEAR_ZERO_S);
    for (const sub of subs) sub.close();
  });

  it("each hub of the tree says what it sent: the root one message per event to its replica, the replica one to each of its subscribers", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    const subs = await subscribe(ns, 4);
    const { replicas } = await eventually(async () => {
      const s = await rootStats(ns);
      return s.replicas.reduce((n, r) => n + r.subscribers, 0) === 2 ? s : undefined;
    }, "the replica to report its subscribers");
    const name = replicas[0]!.name;
    const [root0, replica0] = [await rootStats(ns), await replicaStats(ns, name)];
    const changes = 5;
    await touch(ns, changes, "s");
    for (const sub of subs) await sub.events.take(changes);
    const [root1, replica1] = [await rootStats(ns), await replicaStats(ns, name)];
    const delta = (after: Sent, before: Sent) => ({ events: after.events - before.events, messages: after.messages - before.messages });
    // Both committed the five changes; the replica is the hub of its own two subscribers.
    expect(root1.eventsCommitted - root0.eventsCommitted).toBe(changes);
    expect(replica1.eventsCommitted - replica0.eventsCommitted).toBe(changes);
    expect(replica1.subscribers).toBe(2);
    // The root sent its two subscribers each change (bookmarks, every second here, may add a few),
    // and the replica's HTTP watch each change, in as many chunks or fewer: never to the
    // replica's subscribers, which would be twice as many WebSocket messages.
    const rootWs = delta(root1.sent.websocket, root0.sent.websocket);
    expect(rootWs.messages).toBeGreaterThanOrEqual(2 * changes);
    expect(rootWs.messages).toBeLessThan(4 * changes);
    const rootHttp = delta(root1.sent.http, root0.sent.http);
    expect(rootHttp.events).toBeGreaterThanOrEqual(changes);
    expect(rootHttp.messages).toBeGreaterThanOrEqual(1);
    expect(rootHttp.messages).toBeLessThanOrEqual(rootHttp.events);
    // The replica sent its two subscribers each change, over WebSocket only.
    expect(delta(replica1.sent.websocket, replica0.sent.websocket).messages).toBeGreaterThanOrEqual(2 * changes);
    expect(delta(replica1.sent.http, replica0.sent.http)).toEqual({ events: 0, messages: 0 });
    // Only a hub of this key's tree is reachable that way.
    const other = await relay(`/_relay/stats/clusters/${cluster}${podsPath(ns)}?replica=${encodeURIComponent(`${hubName(keyOf("elsewhere"))}#local-1`)}`);
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ kind: "Status", code: 400, message: expect.stringContaining("is not one of this key's replica hubs") });
    for (const sub of subs) sub.close();
  });

  it("a resourceVersion from the root resumes exactly on a replica", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    const [onRoot, , onReplica] = await subscribe(ns, 3);
    const before = await touch(ns, 2, "b");
    expect((await onRoot!.events.take(2)).map(rvOf)).toEqual(before);
    expect((await onReplica!.events.take(2)).map(rvOf)).toEqual(before);
    onRoot!.close();
    const missed = await touch(ns, 3, "m");
    // The root has its share: this resume goes to the replica.
    const resumed = await wsWatch(path(ns, `watch=1&resourceVersion=${before.at(-1)}`));
    expect((await resumed.events.take(3)).map(rvOf)).toEqual(missed);
    resumed.close();
    onReplica!.close();
  });

  it("placement costs no client a relist: a new replica that does not hold a resume point or a continue token sends the request to its root", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    await sim.createPod(ns, "b");
    // A paged list, from the root (nobody watches yet), and where it stands.
    const first = (await (await relay(path(ns, "limit=1"))).json()) as { metadata: { resourceVersion: string; continue: string }; items: Array<{ metadata: { name: string } }> };
    const from = first.metadata.resourceVersion;
    const missed = await touch(ns, 3, "r");
    // Four resume from the list: the root takes two, the other two are placed on a replica made after `from`.
    const subs: Subscription[] = [];
    for (let i = 0; i < 4; i++) subs.push(await wsWatch(path(ns, `watch=1&resourceVersion=${from}`)));
    for (const [i, sub] of subs.entries()) expect((await sub.events.take(3)).map(rvOf), `subscriber ${i}`).toEqual(missed);
    // The replica sent those two back to the root, which held where they resumed from: the root
    // serves the four and the replica's own watch of it.
    expect((await rootStats(ns)).subscribers).toBe(5);
    // The list's next page goes on at the root, whose snapshot its token names; a token that
    // names no hub is placed on the replica, whose snapshots began after the root's, and the
    // replica sends it back to the root.
    const cursor = decodeContinue(first.metadata.continue);
    expect(cursor?.hub).toBe(hubName(keyOf(ns)));
    for (const token of [first.metadata.continue, encodeContinue({ ...cursor!, hub: undefined })]) {
      const response = await relay(path(ns, `limit=1&continue=${encodeURIComponent(token)}`));
      const next = (await response.json()) as typeof first;
      expect([response.status, next.metadata.resourceVersion, next.items?.map((pod) => pod.metadata.name)]).toEqual([200, from, ["b"]]);
    }
    for (const sub of subs) sub.close();
  });

  it("the replicas and the root lost mid-burst: every subscriber resumes and gets every change once", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    let subs = await subscribe(ns, 5);
    const seen: number[][] = subs.map(() => []);
    const all: number[] = [];
    for (const round of ["r1", "r2"]) {
      all.push(...(await touch(ns, 3, `${round}a`)));
      // Every hub of the process goes, mid-burst: replicas and root alike.
      await abortAllDurableObjects();
      all.push(...(await touch(ns, 3, `${round}b`)));
      // Each subscriber takes what it had, then resumes from its last resourceVersion.
      subs = await Promise.all(
        subs.map(async (sub, i) => {
          await sub.events.closed();
          const got = sub.events.drain().filter((e: WatchEvent) => e.type !== "BOOKMARK");
          seen[i]!.push(...got.map(rvOf));
          const resumed = await wsWatch(path(ns, `watch=1&resourceVersion=${seen[i]!.at(-1) ?? all[0]! - 1}`));
          return resumed;
        }),
      );
    }
    all.push(...(await touch(ns, 2, "end")));
    for (const [i, sub] of subs.entries()) {
      const rest = await sub.events.until((e) => rvOf(e) === all.at(-1), "the last change");
      seen[i]!.push(...rest.filter((e) => e.type !== "BOOKMARK").map(rvOf));
      expect(seen[i], `subscriber ${i}`).toEqual(all);
      sub.close();
    }
    expect(await sim.watchesOn(podsPath(ns))).toHaveLength(1);
  });

  it("a replica's hub watches the root, not the cluster: the root's one watch, whatever the replicas", async () => {
    const ns = uniqueNamespace("h");
    await sim.createPod(ns, "a");
    const subs = await subscribe(ns, 4);
    const root = env.WATCH_HUB.getByName(hubName(keyOf(ns)));
    const stats = await eventually(async () => {
      const s = await root.stats();
      return s && s.replicas.length > 0 ? s : undefined;
    }, "a replica");
    expect(stats.upstream).toBe("watching");
    expect(await sim.watchesOn(podsPath(ns))).toHaveLength(1);
    for (const sub of subs) sub.close();
  });
});
