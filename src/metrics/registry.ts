/**
 * @module
 * The MetricsRegistry Durable Object: one for the relay (`relay`), where the numbers of every
 * hub and Worker isolate meet, since Durable Objects share no memory. Hubs report when they
 * first watch, when they gain their first subscriber or lose their last, on every heartbeat and
 * when they stop; Worker isolates send their counts in batches. The registry adds
 * the counts into relay-wide totals, keeps each live hub's latest snapshot for the gauges and
 * the hub index, and renders `/metrics`.
 *
 * Its totals outlive it: the runtime evicts an object that has had no request for a minute or
 * two, and a deploy restarts it, and a counter that went back to zero would break every
 * `rate()` over it. They are saved in one storage row, at most every few seconds while they
 * change (a row per report would cost more than the relay's own events), with the time they
 * started from zero (`kube_watch_relay_metrics_start_time_seconds`), and restored when the
 * registry starts again. The hubs' snapshots stay in memory: after a restart the gauges and the
 * index fill again within a heartbeat. With an `ANALYTICS` binding, each report and batch is
 * also written to Workers Analytics Engine, for history beyond a scrape.
 */
import { DurableObject } from "cloudflare:workers";
import type { Vars } from "../vars.ts";
import { HEARTBEAT_MS } from "../heartbeat.ts";
import { FAMILIES, type FamilyId } from "./catalog.ts";
import { exposition } from "./exposition.ts";
import { inCatalog, MetricSet, parseSeries, type MetricValues } from "./metric-set.ts";
import type { HubIndexEntry, HubReport, HubSnapshot, LogHubReport, LogHubSnapshot } from "./report.ts";

/** The one registry's name. */
export const REGISTRY = "relay";

/**
 * A hub not heard from for three heartbeats is gone (evicted or crashed without a last report):
 * it leaves the gauges and the index. Its counts up to its last report stay in the totals.
 */
const HUB_REPORT_STALE_MS = 3 * HEARTBEAT_MS;

/**
 * How long changed totals wait to be saved: a storage row at most this often, and what a crash
 * may lose (DESIGN.md, "Observability"; its rows: docs/cost.md).
 */
const SAVE_DELAY_MS = 5_000;

/** The storage key of the saved totals. */
export const SAVED_TOTALS = "totals";

/** The totals as saved: the counts, and when they started from zero (ms since the epoch). */
export interface SavedTotals extends MetricValues {
  started: number;
}

export class MetricsRegistry extends DurableObject<Vars> {
  readonly #totals = new MetricSet();
  readonly #hubs = new Map<string, { snapshot: HubSnapshot; at: number }>();
  readonly #logHubs = new Map<string, { snapshot: LogHubSnapshot; at: number }>();
  readonly #started: number;
  #saving: ReturnType<typeof setTimeout> | undefined;

  constructor(ctx: DurableObjectState, env: Vars) {
    super(ctx, env);
    const saved = ctx.storage.kv.get<SavedTotals>(SAVED_TOTALS);
    this.#started = saved?.started ?? Date.now();
    if (saved) this.#totals.merge(inCatalog(saved));
  }

  /** A hub's report: its counts join the totals; its snapshot replaces the last. */
  report(report: HubReport): void {
    const { delta, stopped, ...snapshot } = report;
    this.#add(delta);
    if (stopped) this.#hubs.delete(snapshot.hub);
    else this.#hubs.set(snapshot.hub, { snapshot, at: Date.now() });
    this.#analytics(snapshot.cluster, stopped ? "hub-stopped" : "hub", delta, snapshot);
  }

  /** A log hub's report (`src/logs`): its counts join the totals; its snapshot replaces the last. */
  reportLog(report: LogHubReport): void {
    const { delta, stopped, ...snapshot } = report;
    this.#add(delta);
    if (stopped) this.#logHubs.delete(snapshot.hub);
    else this.#logHubs.set(snapshot.hub, { snapshot, at: Date.now() });
    this.#analytics(snapshot.cluster, stopped ? "log-stopped" : "log", delta);
  }

  /** A Worker isolate's batch of counts. */
  count(delta: MetricValues): void {
    this.#add(delta);
    this.#analytics("", "worker", delta);
  }

  /** The Prometheus text of everything. */
  scrape(): string {
    const now = Date.now();
    const live = this.#live(now);
    const gauges = new MetricSet();
    gauges.add("startTime", {}, Math.floor(this.#started / 1000));
    gauges.add(
      "reportAge",
      {},
      live.reduce((oldest, h) => Math.max(oldest, (now - h.at) / 1000), 0),
    );
    for (const { snapshot: s } of live) {
      const cluster = { cluster: s.cluster };
      gauges.add("hubs", { ...cluster, upstream_state: s.upstream });
      if (s.root !== undefined) gauges.add("replicaHubs", cluster);
      else gauges.add("upstreamWatches", cluster, s.upstream === "watching" ? 1 : 0);
      for (const r of s.replicas ?? []) gauges.max("replicaLag", cluster, r.lagSeconds);
      for (const [transport, n] of Object.entries(s.subscribers)) gauges.add("subscribers", { ...cluster, transport }, n);
      gauges.add("views", cluster, s.views ?? 0);
      gauges.add("windowEvents", cluster, s.window.events);
      gauges.add("windowBytes", cluster, s.window.bytes);
      gauges.add("cacheObjects", cluster, s.objects);
      gauges.add("storageBytes", cluster, s.storageBytes ?? 0);
      gauges.add("memoryBytes", cluster, s.memoryBytes ?? 0);
    }
    for (const [hub, { snapshot: s, at }] of this.#logHubs) {
      if (now - at > HUB_REPORT_STALE_MS) {
        this.#logHubs.delete(hub);
        continue;
      }
      const cluster = { cluster: s.cluster };
      for (const [transport, n] of Object.entries(s.followers)) gauges.add("logFollowers", { ...cluster, transport }, n);
      gauges.add("logUpstreamStreams", cluster, s.streaming ? 1 : 0);
      gauges.add("logBufferBytes", cluster, s.bufferBytes);
    }
    const totals = this.#totals.toJSON();
    return exposition({ values: { ...totals.values, ...gauges.toJSON().values }, histograms: totals.histograms });
  }

  /** The live hubs, most subscribed first. */
  hubs(): HubIndexEntry[] {
    const now = Date.now();
    return this.#live(now)
      .map(({ snapshot, at }) => ({
        ...snapshot,
        lastEventAgeSeconds: snapshot.lastEventAt === undefined ? undefined : Math.max(0, (now - snapshot.lastEventAt) / 1000),
        reportAgeSeconds: (now - at) / 1000,
      }))
      .sort((a, b) => total(b) - total(a) || a.key.localeCompare(b.key));
  }

  /** Counts join the totals, which are saved within SAVE_DELAY_MS (once for all that arrive meanwhile). */
  #add(delta: MetricValues): void {
    if (Object.keys(delta.values).length === 0 && Object.keys(delta.histograms).length === 0) return;
    this.#totals.merge(delta);
    this.#saving ??= setTimeout(() => {
      this.#saving = undefined;
      this.ctx.storage.kv.put<SavedTotals>(SAVED_TOTALS, { started: this.#started, ...this.#totals.toJSON() });
    }, SAVE_DELAY_MS);
  }

  #live(now: number): Array<{ snapshot: HubSnapshot; at: number }> {
    for (const [hub, entry] of this.#hubs) if (now - entry.at > HUB_REPORT_STALE_MS) this.#hubs.delete(hub);
    return [...this.#hubs.values()];
  }

  /**
   * One Analytics Engine data point per report or batch: `index1` the cluster; blobs the cluster
   * and the source; doubles the counts of this report by family (in catalog order) and, for a
   * hub, its subscribers, window events and objects.
   */
  #analytics(cluster: string, source: string, delta: MetricValues, snapshot?: HubSnapshot): void {
    const dataset = this.env.ANALYTICS;
    if (!dataset) return;
    const sums = new Map<FamilyId, number>();
    for (const [key, n] of Object.entries(delta.values)) {
      const { id } = parseSeries(key);
      sums.set(id, (sums.get(id) ?? 0) + n);
    }
    const counters = (Object.keys(FAMILIES) as FamilyId[]).filter((id) => FAMILIES[id].type === "counter");
    const doubles = counters.map((id) => sums.get(id) ?? 0);
    if (snapshot) doubles.push(total(snapshot), snapshot.window.events, snapshot.objects);
    dataset.writeDataPoint({ indexes: [cluster], blobs: [cluster, source], doubles });
  }
}

const total = (s: HubSnapshot): number => s.subscribers.websocket + s.subscribers.http;
