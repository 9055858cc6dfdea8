/**
 * `/metrics` and `/_relay/hubs` (AUTH_MODE=none): the text parses as Prometheus parses it, and
 * the numbers move as faults are driven through a simulated API server of this file's own —
 * a relist after the upstream compacts its history, a cut-off of a slow subscriber, events in
 * and deliveries out, refusals in the Worker — once the hubs have reported (on their heartbeat,
 * which the tests run at once).
 */
import { env, exports } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FAMILIES } from "../../src/metrics/catalog.ts";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import { seriesKey } from "../../src/metrics/metric-set.ts";
import { REGISTRY, SAVED_TOTALS, type SavedTotals } from "../../src/metrics/registry.ts";
import type { HubIndexEntry } from "../../src/metrics/report.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { histogramOf, sampleOf, scrape, metricValue, type Scrape } from "./metrics-helpers.ts";
import { podsPath } from "../kit/paths.ts";

const cluster = "metrics";
const sim = new Sim(cluster);
const relayPath = (ns: string, query = "watch=1") => `/clusters/${cluster}${podsPath(ns)}?${query}`;
const inCluster = { cluster };

function hubOf(namespace: string) {
  const key = watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector: null, fieldSelector: null });
  return env.WATCH_HUB.getByName(hubName(key));
}

/** A namespace of this test's own with pod `a`, and a WebSocket subscriber that has its ADDED. */
async function watching(prefix: string) {
  const ns = uniqueNamespace(prefix);
  await sim.createPod(ns, "a");
  const sub = await wsWatch(relayPath(ns));
  return { ns, sub, added: await sub.events.next() };
}

/** Run the hub's heartbeat now (it reports), and again, until a scrape shows what `ready` wants. */
async function afterHeartbeat(namespace: string, ready: (s: Scrape) => boolean, what: string): Promise<Scrape> {
  return eventually(async () => {
    await runDurableObjectAlarm(hubOf(namespace));
    const s = await scrape();
    return ready(s) ? s : undefined;
  }, what);
}

describe("/metrics", () => {
  it("is the Prometheus text format: every family typed and described, units in names, counters in _total", async () => {
    const { ns, sub } = await watching("m");
    const families = await afterHeartbeat(ns, (s) => metricValue(s, "kube_watch_relay_upstream_watches", inCluster) >= 1, "the hub's report on its heartbeat");
    for (const family of families) {
      expect(family.help, family.name).not.toBe("");
      expect(family.name).toMatch(/^kube_watch_relay_[a-z_]+$/);
      if (family.type === "COUNTER") expect(family.name).toMatch(/_total$/);
      const known = Object.values(FAMILIES).find((f) => f.name === family.name);
      expect(known, `${family.name} is in the catalog`).toBeDefined();
      // (The parser drops histograms' labels: see histogramOf.)
      if (family.type !== "HISTOGRAM") for (const sample of family.metrics) expect(Object.keys(sample.labels ?? {}).sort()).toEqual([...known!.labels].sort());
    }
    expect(metricValue(families, "kube_watch_relay_hubs", { ...inCluster, upstream_state: "watching" })).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, "kube_watch_relay_upstream_watches", inCluster)).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, "kube_watch_relay_cache_objects", inCluster)).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, "kube_watch_relay_upstream_watch_requests_total", inCluster)).toBeGreaterThanOrEqual(1);
    // Known outcomes are there before they happen, so a rate has a start.
    expect(sampleOf(families, "kube_watch_relay_resumes_total", { ...inCluster, outcome: "compacted" })?.value).toBe("0");
    sub.close();
  });

  it("counts a relist after the upstream compacts its history, with the 410 that caused it, and the events it emitted", async () => {
    const { ns, sub } = await watching("r");
    const before = await scrape();
    await sim.faults({ stallWatches: true });
    const modified = await sim.patchPod(ns, "a", { metadata: { labels: { during: "gap" } } });
    await sim.faults({ compact: true, dropWatches: true });
    expect(rvOf(await sub.events.next("the relist's difference"))).toBe(rvOf(modified));
    const delivered = (s: Scrape) => metricValue(s, "kube_watch_relay_delivered_events_total", { ...inCluster, transport: "websocket" });
    const after = await afterHeartbeat(
      ns,
      (s) => metricValue(s, "kube_watch_relay_upstream_relists_total", inCluster) > metricValue(before, "kube_watch_relay_upstream_relists_total", inCluster),
      "the relist counter to move",
    );
    expect(metricValue(after, "kube_watch_relay_upstream_expired_total", inCluster)).toBeGreaterThan(metricValue(before, "kube_watch_relay_upstream_expired_total", inCluster));
    expect(metricValue(after, "kube_watch_relay_events_total", inCluster)).toBeGreaterThan(metricValue(before, "kube_watch_relay_events_total", inCluster));
    expect(delivered(after)).toBeGreaterThan(delivered(before));
    sub.close();
  });

  it("counts a slow subscriber's cut-off, with how far behind it was", async () => {
    const ns = uniqueNamespace("s");
    await sim.createPod(ns, "big");
    // Acknowledges once (so the hub measures it), then never again.
    const slow = await wsWatch(relayPath(ns));
    slow.socket.send(JSON.stringify({ type: "ACK", received: 0 }));
    await slow.events.next();
    // 40 events of ~10 KB: 400 KB, beyond the 256 KiB budget of the tests.
    const padding = "x".repeat(10_000);
    for (let i = 0; i < 40; i++) await sim.patchPod(ns, "big", { metadata: { annotations: { padding: `${i}${padding}` } } });
    expect(await slow.events.closed()).toMatchObject({ code: 4008 });
    const labels = { ...inCluster, transport: "websocket", reason: "slow" };
    const after = await afterHeartbeat(ns, (s) => metricValue(s, "kube_watch_relay_subscriber_cutoffs_total", labels) >= 1, "the cut-off counter to move");
    // Every subscriber of this file's relay is a WebSocket on this cluster: one series.
    const lag = histogramOf(after, "kube_watch_relay_subscriber_lag_bytes")?.buckets ?? {};
    // Cut off past the 256 KiB budget: one observation, at least, above the 256 KiB bucket.
    expect(Number(lag["+Inf"])).toBeGreaterThan(Number(lag["262144"]));
  });

  it("counts resumes by outcome: from the window, and expired", async () => {
    const { ns, sub, added } = await watching("o");
    const before = await scrape();
    const resumed = await wsWatch(relayPath(ns, `watch=1&resourceVersion=${rvOf(added)}`));
    const expired = await wsWatch(relayPath(ns, "watch=1&resourceVersion=1"));
    expect((await expired.events.next()).type).toBe("ERROR");
    const outcome = (s: Scrape, o: string) => metricValue(s, "kube_watch_relay_resumes_total", { ...inCluster, outcome: o });
    const after = await afterHeartbeat(ns, (s) => outcome(s, "expired") > outcome(before, "expired"), "the expired resume to be counted");
    expect(outcome(after, "window")).toBeGreaterThan(outcome(before, "window"));
    sub.close();
    resumed.close();
  });

  it("counts the Worker's refusals by reason", async () => {
    const before = metricValue(await scrape(), "kube_watch_relay_auth_refusals_total", { reason: "host" });
    const refused = await exports.default.fetch(new Request("http://elsewhere.example/api/v1/pods"));
    await refused.body?.cancel();
    expect(refused.status).toBe(403);
    expect(metricValue(await scrape(), "kube_watch_relay_auth_refusals_total", { reason: "host" })).toBe(before + 1);
  });
});

describe("the metrics registry", () => {
  it("keeps its counters and their start time when the runtime evicts it", async () => {
    const registry = env.METRICS.getByName(REGISTRY);
    const refusals = (s: Scrape) => metricValue(s, "kube_watch_relay_auth_refusals_total", { reason: "host" });
    const refused = await exports.default.fetch(new Request("http://elsewhere.example/api/v1/pods"));
    await refused.body?.cancel();
    const counted = await scrape();
    expect(refusals(counted)).toBeGreaterThanOrEqual(1);
    // Saved within seconds of the count.
    const series = seriesKey("authRefusals", { reason: "host" });
    await eventually(() => runInDurableObject(registry, (_, state) => state.storage.kv.get<SavedTotals>(SAVED_TOTALS)?.values[series] === refusals(counted)), "the registry to save its totals");
    await evictDurableObject(registry);
    const after = await scrape();
    expect(refusals(after)).toBe(refusals(counted));
    expect(metricValue(after, "kube_watch_relay_metrics_start_time_seconds")).toBe(metricValue(counted, "kube_watch_relay_metrics_start_time_seconds"));
  });
});

describe("/_relay/hubs", () => {
  it("lists live keys with their subscribers, upstream state and window, and drops a hub that stops", async () => {
    const { ns, sub } = await watching("h");
    const key = `${cluster}:${podsPath(ns)}`;
    const entryOf = async (): Promise<HubIndexEntry | undefined> => {
      const response = await relay("/_relay/hubs");
      expect(response.status).toBe(200);
      return ((await response.json()) as { hubs: HubIndexEntry[] }).hubs.find((h) => h.key === key);
    };
    const entry = await eventually(entryOf, "the key in the hub index");
    expect(entry).toMatchObject({ cluster, watching: true, subscribers: { websocket: 1, http: 0 }, objects: 1 });
    expect(entry.window.head).toBeGreaterThan(0);
    expect(entry.reportAgeSeconds).toBeGreaterThanOrEqual(0);

    // Its last subscriber gone and the idle grace (3 s in the tests) over, the heartbeat stops the
    // hub, which says so in its last report.
    sub.close();
    await eventually(async () => {
      await runDurableObjectAlarm(hubOf(ns));
      return (await entryOf()) === undefined;
    }, "the stopped hub to leave the index");
  });
});
