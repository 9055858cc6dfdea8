/**
 * @module
 * The issue's targets, checked against one run's rows. Reported, never asserted: a missed
 * target is a finding, stated with how far off it is.
 */
import { heapTargets } from "./heap.ts";
import { gzipWatchTargets } from "./report-gzip.ts";
import { hotTargets } from "./report-hot.ts";
import { VIEW_OPEN_MS, VIEW_P99_MS, viewsTargets } from "./report-views.ts";
import { memoryGrowthText } from "./tables.ts";
import { idleMemory, rowOf, type BurstRow, type FanoutRow, type FleetRow, type Row, type SnapshotRow, type SocketsRow, type StormRow, type TargetResult } from "./rows.ts";
import { headline, middle } from "./rounds.ts";
import { RELAY_MODES, type SystemName, type Transport } from "./systems/system.ts";

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** A relay that delivered (nearly) everything it was offered meets a throughput target whatever the baseline did. */
const KEPT_UP_PCT = 95;
/**
 * Per-event WebSocket delivery within this share of workerd-floor's is at the runtime's own
 * cost of one message per event: the relay adds nothing that could be taken away.
 */
export const AT_FLOOR = 0.9;
/** The latency a burst's changes may take to reach every subscriber, at p99. */
export const BURST_P99_MS = 1000;
/** Batched delivery of a burst the upstream streams a chunk per event, against raw-ws's: batches must form as when it comes in one chunk. */
const CHUNKED_BURST_SHARE = 2;

/** What a throughput target compares: events/s, and whether the system delivered all it was offered. */
interface Delivery {
  deliveredPerSec: number;
  deliveredPct: number;
  rounds?: readonly Row[];
}

/** With `--rounds`: the same ratio in each round, as each round measured both systems. */
function byRound(relay: Delivery, baseline: Delivery, shown: (ratio: number) => string): string {
  const [mine, theirs] = [relay.rounds ?? [], baseline.rounds ?? []];
  if (mine.length < 2 || mine.length !== theirs.length) return "";
  return `; by round: ${mine.map((row, i) => shown(headline(row) / headline(theirs[i] as Row))).join(", ")}`;
}

/**
 * `relay` delivered at least `share` of what `baseline` delivered. Under steady churn (fan-out)
 * a relay that kept up meets it whatever the baseline did; in a burst, every change must have
 * reached every subscriber.
 */
function throughput(target: string, relay: Delivery | undefined, baseline: Delivery | undefined, share: number, options: { steady: boolean; floor?: Delivery }): TargetResult {
  if (!relay || !baseline || baseline.deliveredPerSec <= 0) return { target, measured: "not measured", met: undefined };
  const ratio = relay.deliveredPerSec / baseline.deliveredPerSec;
  const keptUp = options.steady && relay.deliveredPct >= KEPT_UP_PCT;
  const lost = !options.steady && relay.deliveredPct < 100;
  const floor = options.floor && options.floor.deliveredPerSec > 0 ? relay.deliveredPerSec / options.floor.deliveredPerSec : undefined;
  const atFloor = floor !== undefined && floor >= AT_FLOOR;
  const times = share >= 1;
  const show = (r: number) => (times ? `${r.toFixed(2)}×` : `${(r * 100).toFixed(0)}%`);
  const short = times ? `short by ${((1 - ratio / share) * 100).toFixed(0)}%` : `short by ${((share - ratio) * 100).toFixed(0)} points`;
  const verdict = keptUp ? " (kept up: delivered what was offered)" : ratio < share ? ` (${short})` : "";
  const notes = [
    ...(floor === undefined ? [] : [`${floor.toFixed(2)}× workerd-floor's${atFloor ? ": at the floor" : ""}`]),
    ...(lost ? [`only ${fmt(relay.deliveredPct)}% delivered before the timeout`] : []),
  ];
  return {
    target,
    measured: `${fmt(relay.deliveredPerSec)}/s vs ${fmt(baseline.deliveredPerSec)}/s: ${show(ratio)}${verdict}${notes.map((n) => `; ${n}`).join("")}${byRound(relay, baseline, show)}`,
    met: !lost && (keptUp || ratio >= share || atFloor),
  };
}

interface Latency {
  p99Ms: number | null;
  rounds?: readonly Row[];
}

/** A row's p99, or with `--rounds` the median of its rounds' (a round that delivered nothing counts as the longest). */
function medianP99(row: Latency): number | null {
  if (!row.rounds || row.rounds.length < 2) return row.p99Ms;
  const median = middle(
    row.rounds.map((r) => ("p99Ms" in r && typeof r.p99Ms === "number" ? r.p99Ms : Number.POSITIVE_INFINITY)),
    (p99) => p99,
  ) as number;
  return Number.isFinite(median) ? median : null;
}

/**
 * A latency target. `beside`: the same measurement of a baseline in the same run, shown with it,
 * so a target that the baseline misses too on this machine reads as such (it is judged alone).
 */
function p99Target(target: string, row: Latency | undefined, limitMs: number, beside?: { name: string; row: Latency | undefined }): TargetResult {
  const p99 = row ? medianP99(row) : null;
  const baseline = beside?.row ? medianP99(beside.row) : null;
  const compared = beside && baseline !== null ? `; ${beside.name} p99 ${fmt(baseline)} ms` : "";
  const rounds =
    row?.rounds && row.rounds.length > 1 ? ` (the median of its rounds: ${row.rounds.map((r) => ("p99Ms" in r && typeof r.p99Ms === "number" ? fmt(r.p99Ms) : "none")).join(", ")} ms)` : "";
  return {
    target,
    measured:
      row === undefined ? "not measured" : p99 === null ? "no events delivered" : `p99 ${fmt(p99)} ms${rounds}${p99 > limitMs ? ` (${(p99 / limitMs).toFixed(1)}× the target)` : ""}${compared}`,
    met: row === undefined ? undefined : p99 !== null && p99 <= limitMs,
  };
}

/** The size a target names, or the largest the run measured (a smaller mode is judged there). */
export function sizeFor(rows: ReadonlyArray<{ subscribers: number }>, named: number): number {
  const sizes = new Set(rows.map((r) => r.subscribers));
  return sizes.has(named) ? named : Math.max(0, ...sizes);
}

const TRANSPORT_NAMES: Record<Transport, string> = { ws: "WebSocket", http: "HTTP" };

/** Every target the relay is held to: each WebSocket one for both framings (`RELAY_MODES`) side by side, and the HTTP watch ones. */
export function checkTargets(rows: readonly Row[]): TargetResult[] {
  const fanout = rows.filter((r): r is FanoutRow => r.scenario === "fanout");
  const allBursts = rows.filter((r): r is BurstRow => r.scenario === "burst");
  // The upstream's burst in one chunk; and as an API server streams it, a chunk per event.
  const bursts = allBursts.filter((r) => !r.chunkPerEvent);
  const chunked = allBursts.filter((r) => r.chunkPerEvent);
  const storms = rows.filter((r): r is StormRow => r.scenario === "storm");
  // The targets name 1,000 subscribers in fan-out and 500 in the burst.
  const size = sizeFor(fanout, 1000);
  const at = (system: SystemName, transport: Transport, rate: number) => rowOf(fanout, system, transport, (r) => r.subscribers === size && r.eventsPerSec === rate);
  const results: TargetResult[] = [];
  const each = (target: (mode: SystemName) => TargetResult) => results.push(...RELAY_MODES.map(target));
  /** A relay framing against raw-ws: per event, half of it or the runtime's floor; batched, all of it. */
  const wsShare = (mode: SystemName) => (mode === "relay" ? { share: 0.5, wording: `≥ 50% of raw-ws's, or ≥ ${AT_FLOOR * 100}% of workerd-floor's` } : { share: 1, wording: "≥ raw-ws's" });

  const rates = [...new Set(fanout.map((r) => r.eventsPerSec))].sort((a, b) => a - b);
  for (const rate of rates) {
    const direct = at("direct", "http", rate);
    const prefix = `fanout S=${size}, ${rate} ev/s, WebSocket:`;
    each((mode) => throughput(`${prefix} ${mode} delivered events/s ≥ node-relay's`, at(mode, "ws", rate), at("node-relay", "ws", rate), 1, { steady: true }));
    each((mode) => {
      const { share, wording } = wsShare(mode);
      return throughput(`${prefix} ${mode} delivered ${wording}`, at(mode, "ws", rate), at("raw-ws", "ws", rate), share, {
        steady: true,
        floor: mode === "relay" ? at("workerd-floor", "ws", rate) : undefined,
      });
    });
    // The latency target names 100 events/s, the lowest rate of a quick or full run.
    if (rate === rates[0]) each((mode) => p99Target(`${prefix} ${mode} p99 ≤ 100 ms`, at(mode, "ws", rate), 100, { name: "raw-ws", row: at("raw-ws", "ws", rate) }));
    each((mode) => {
      const relay = at(mode, "ws", rate);
      return {
        target: `${prefix} ${mode} holds exactly 1 upstream connection (direct: S)`,
        measured: relay === undefined ? "not measured" : `${mode} ${relay.upstreamConnections}${direct ? `, direct ${direct.upstreamConnections}` : ""}`,
        met: relay === undefined ? undefined : relay.upstreamConnections === 1,
      };
    });
  }
  // HTTP watches: the target names 100 events/s, the lowest rate they are measured at.
  const httpRate = Math.min(...fanout.filter((r) => r.system === "relay" && r.transport === "http" && r.subscribers === size).map((r) => r.eventsPerSec));
  if (Number.isFinite(httpRate)) {
    results.push(throughput(`fanout S=${size}, ${httpRate} ev/s, HTTP: relay delivered ≥ 50% of raw-http's`, at("relay", "http", httpRate), at("raw-http", "http", httpRate), 0.5, { steady: true }));
  }

  const burstSize = sizeFor(bursts, 500);
  const burstOf = (system: SystemName, transport: Transport) => rowOf(bursts, system, transport, (r) => r.subscribers === burstSize);
  if (bursts.length > 0) {
    const changes = bursts[0]?.changes ?? 0;
    const prefix = (transport: Transport) => `burst S=${burstSize}, ${changes} changes at once, ${TRANSPORT_NAMES[transport]}:`;
    results.push(throughput(`${prefix("http")} relay delivered ≥ 50% of raw-http's events/s`, burstOf("relay", "http"), burstOf("raw-http", "http"), 0.5, { steady: false }));
    results.push(p99Target(`${prefix("http")} relay p99 ≤ 1 s`, burstOf("relay", "http"), BURST_P99_MS, { name: "raw-http", row: burstOf("raw-http", "http") }));
    each((mode) => {
      const { share, wording } = wsShare(mode);
      return throughput(`${prefix("ws")} ${mode} delivered ${wording} events/s`, burstOf(mode, "ws"), burstOf("raw-ws", "ws"), share, {
        steady: false,
        floor: mode === "relay" ? burstOf("workerd-floor", "ws") : undefined,
      });
    });
    results.push(p99Target(`${prefix("ws")} relay-batched p99 ≤ 1 s`, burstOf("relay-batched", "ws"), BURST_P99_MS, { name: "raw-ws", row: burstOf("raw-ws", "ws") }));
  }
  if (chunked.length > 0) {
    const chunkedOf = (system: SystemName) => rowOf(chunked, system, "ws", (r) => r.subscribers === burstSize);
    const target = `burst S=${burstSize}, ${chunked[0]?.changes ?? 0} changes at once, each in a chunk of its own, WebSocket: relay-batched delivered ≥ ${CHUNKED_BURST_SHARE}× raw-ws's events/s`;
    results.push(throughput(target, chunkedOf("relay-batched"), chunkedOf("raw-ws"), CHUNKED_BURST_SHARE, { steady: false }));
  }

  const stormOf = (mode: SystemName, transport: Transport = "ws") => storms.find((r) => r.system === mode && r.transport === transport);
  // The storm is also run as the project's client resumes: for net changes (relay-delta).
  const eachStorm = (target: (mode: SystemName) => TargetResult) => results.push(...[...RELAY_MODES, "relay-delta" as const].map(target));
  eachStorm((mode) => {
    const storm = stormOf(mode);
    return { target: `storm, ${mode}: 0 upstream requests`, measured: storm ? `${storm.upstreamRequests}` : "not measured", met: storm ? storm.upstreamRequests === 0 : undefined };
  });
  eachStorm((mode) => {
    const storm = stormOf(mode);
    return {
      target: `storm, ${mode}: all ${storm?.subscribers ?? ""} caught up within 2 s`,
      measured: !storm
        ? "not measured"
        : storm.catchUpMs === null
          ? `${storm.caughtUp} of ${storm.subscribers} caught up before the timeout`
          : `${fmt(storm.catchUpMs)} ms${storm.catchUpMs > 2000 ? ` (${(storm.catchUpMs / 2000).toFixed(1)}× the target)` : ""}`,
      met: storm ? storm.catchUpMs !== null && storm.catchUpMs <= 2000 : undefined,
    };
  });
  // Per-event resumes as fast as a plain server: every subscriber caught up within the raw baseline's time, in the same run.
  for (const [transport, raw] of [
    ["ws", "raw-ws"],
    ["http", "raw-http"],
  ] as const)
    results.push(stormWithin(`storm, relay ${TRANSPORT_NAMES[transport]}: all caught up within ${raw}'s time`, stormOf("relay", transport), stormOf(raw, transport), raw));

  // Deltas: bytes per MODIFIED on the simulator's churn. One measurement sees a few hundred
  // MODIFIEDs whose mix (a label change's patch is 300 B, a status change's 1.4 KB) moves its mean
  // by ±8% from run to run, so the target takes the mean over every WebSocket fan-out measurement.
  const pairs = fanout
    .filter((r) => r.system === "relay-delta" && r.transport === "ws" && r.modifiedBytes)
    .flatMap((d) => {
      const whole = rowOf(fanout, "relay", "ws", (r) => r.subscribers === d.subscribers && r.eventsPerSec === d.eventsPerSec);
      return whole?.modifiedBytes ? [{ deltas: d.modifiedBytes!, whole: whole.modifiedBytes }] : [];
    });
  if (fanout.some((r) => r.system === "relay-delta")) {
    const deltaBytes = pairs.reduce((sum, p) => sum + p.deltas, 0) / pairs.length;
    const wholeBytes = pairs.reduce((sum, p) => sum + p.whole, 0) / pairs.length;
    const ratio = pairs.length === 0 ? undefined : wholeBytes / deltaBytes;
    results.push({
      target: "fanout, every S and ev/s: relay-delta bytes per MODIFIED ≥ 5× fewer than relay's (merge patches)",
      measured:
        ratio === undefined
          ? "not measured"
          : `${fmt(Math.round(deltaBytes))} B vs ${fmt(Math.round(wholeBytes))} B: ${fmt(ratio)}× fewer; by measurement: ${pairs.map((p) => `${fmt(p.whole / p.deltas)}×`).join(", ")}`,
      met: ratio === undefined ? undefined : ratio >= 5,
    });
  }

  const sockets = rows.filter((r): r is SocketsRow => r.scenario === "sockets");
  const socket = sockets.find((r) => r.system === "relay-socket");
  const separate = sockets.find((r) => r.system === "relay-batched");
  if (socket || separate) {
    const prefix = `sockets ${socket?.clients ?? separate?.clients} clients × ${socket?.watchesPerClient ?? separate?.watchesPerClient} watches:`;
    results.push(throughput(`${prefix} relay-socket delivered ≥ 90% of relay-batched's events/s`, socket, separate, 0.9, { steady: true }));
    results.push(p99Target(`${prefix} relay-socket p99 ≤ 100 ms`, socket, 100, { name: "relay-batched", row: separate }));
  }

  each((mode) => {
    const memory = idleMemory(fanout, mode, size);
    return {
      target: `${mode} memory ≤ 20 KB per idle subscriber (RSS)`,
      measured: !memory
        ? "not measured"
        : `RSS ${memoryGrowthText(memory.rssKB)} at S=${memory.subscribers}${memory.rssKB > 20 ? ` (${(memory.rssKB / 20).toFixed(1)}× the target)` : ""}, of which JS heap ${memoryGrowthText(memory.heapKB)}`,
      // A negative growth is noise: it neither meets nor misses the target.
      met: memory && memory.rssKB >= 0 ? memory.rssKB <= 20 : undefined,
    };
  });
  results.push(...snapshotTargets(rows), ...gzipTargets(rows), ...gzipWatchTargets(rows), ...viewsTargets(rows), ...hotTargets(rows), ...heapTargets(rows), ...fleetTargets(rows));
  return results;
}

/** How much faster than the API server's own a consistent list from the relay must stay. */
const CONSISTENT_LIST_FASTER = 3;

/**
 * A consistent list (`resourceVersion` unset) of a hub that is watching: still at least 3× faster
 * than the API server's own, what it adds over a list of any state (`resourceVersion=0`), and at
 * most one small upstream request each, never a list (DESIGN.md, invariant 8).
 */
function snapshotTargets(rows: readonly Row[]): TargetResult[] {
  const snapshots = rows.filter((r): r is SnapshotRow => r.scenario === "snapshot");
  const of = (system: SystemName, list: SnapshotRow["list"]) => snapshots.find((r) => r.system === system && r.list === list);
  const [relay, any, direct] = [of("relay", "consistent"), of("relay", "any"), of("direct", "consistent")];
  if (!relay) return [];
  const prefix = `snapshot of ${fmt(relay.objects)} pods, a consistent list from a watching hub:`;
  const added = any
    ? `; it adds ${fmt(relay.ms - any.ms)} ms at p50 and ${fmt((relay.p99Ms ?? 0) - (any.p99Ms ?? 0))} ms at p99 to a list at resourceVersion=0 (p50 ${fmt(any.ms)}, p99 ${fmt(any.p99Ms ?? 0)} ms), ` +
      `and to its first byte ${fmt((relay.firstByteMs ?? 0) - (any.firstByteMs ?? 0))} ms at p50 and ${fmt((relay.firstByteP99Ms ?? 0) - (any.firstByteP99Ms ?? 0))} ms at p99 ` +
      `(${fmt(relay.firstByteMs ?? 0)} and ${fmt(relay.firstByteP99Ms ?? 0)} ms against ${fmt(any.firstByteMs ?? 0)} and ${fmt(any.firstByteP99Ms ?? 0)} ms)`
    : "";
  const ratio = direct ? direct.ms / relay.ms : undefined;
  return [
    {
      target: `${prefix} ≥ ${CONSISTENT_LIST_FASTER}× faster than the API server's own (p50)`,
      measured:
        direct && ratio !== undefined
          ? `p50 ${fmt(relay.ms)} ms, p99 ${fmt(relay.p99Ms ?? 0)} ms vs the API server's p50 ${fmt(direct.ms)} ms: ${ratio.toFixed(2)}×${ratio < CONSISTENT_LIST_FASTER ? ` (short by ${((1 - ratio / CONSISTENT_LIST_FASTER) * 100).toFixed(0)}%)` : ""}${added}`
          : "not measured",
      met: ratio === undefined ? undefined : ratio >= CONSISTENT_LIST_FASTER,
    },
    {
      target: `${prefix} at most 1 upstream request each, never a list`,
      measured: `${relay.upstreamRequests} upstream requests for ${relay.samples} lists, ${relay.upstreamLists ?? 0} of them lists`,
      met: relay.upstreamRequests <= (relay.samples ?? 0) && (relay.upstreamLists ?? 0) === 0,
    },
  ];
}

/** How many times fewer bytes a gzip-coded list of the relay must be than the same list uncoded. */
const GZIP_FEWER_BYTES = 5;
/** The most of the relay's CPU a gzip-coded list may cost, against the same list uncoded. */
const GZIP_CPU_MAX = 1.2;

/**
 * The relay's whole list gzip-coded for a client that takes it (issue 45): at least 5× fewer
 * bytes than uncoded, at most 1.2× the relay's CPU a list (each page compressed once, the repeats
 * reading that compression).
 */
function gzipTargets(rows: readonly Row[]): TargetResult[] {
  const snapshots = rows.filter((r): r is SnapshotRow => r.scenario === "snapshot" && r.system === "relay" && r.list === "full");
  const [plain, coded] = [snapshots.find((r) => !r.coding), snapshots.find((r) => r.coding === "gzip")];
  if (!plain || !coded) return [];
  const prefix = `snapshot of ${fmt(plain.objects)} pods, the relay's whole list gzip-coded:`;
  const fewer = plain.bytes / coded.bytes;
  const cpu = plain.cpuMs && coded.cpuMs !== undefined ? coded.cpuMs / plain.cpuMs : undefined;
  return [
    {
      target: `${prefix} ≥ ${GZIP_FEWER_BYTES}× fewer bytes than uncoded`,
      measured: `${fmt(coded.bytes)} B against ${fmt(plain.bytes)} B: ${fewer.toFixed(1)}× fewer`,
      met: fewer >= GZIP_FEWER_BYTES,
    },
    {
      target: `${prefix} ≤ ${GZIP_CPU_MAX}× the relay's CPU a list`,
      measured: cpu === undefined ? "not measured" : `${fmt(coded.cpuMs ?? 0)} ms against ${fmt(plain.cpuMs ?? 0)} ms a list: ${cpu.toFixed(2)}×`,
      met: cpu === undefined ? undefined : cpu <= GZIP_CPU_MAX,
    },
  ];
}

/** A storm's catch-up against a raw baseline's in the same run: the time every subscriber took, as a ratio. */
function stormWithin(target: string, relay: StormRow | undefined, raw: StormRow | undefined, rawName: string): TargetResult {
  if (!relay || !raw) return { target, measured: "not measured", met: undefined };
  const time = (r: StormRow) => (r.catchUpMs === null ? `${r.caughtUp} of ${r.subscribers} caught up before the timeout` : `${fmt(r.catchUpMs)} ms`);
  const ratio = relay.catchUpMs !== null && raw.catchUpMs !== null && raw.catchUpMs > 0 ? relay.catchUpMs / raw.catchUpMs : undefined;
  return {
    target,
    measured: `${time(relay)} vs ${rawName}'s ${time(raw)}${ratio === undefined ? "" : `: ${ratio.toFixed(2)}×`}`,
    met: raw.catchUpMs === null ? undefined : relay.catchUpMs !== null && relay.catchUpMs <= raw.catchUpMs,
  };
}

/**
 * One watch across clusters (issue 43): one upstream watch per cluster however the fleet is
 * watched, a storm of resumes on the merged key served without the clusters, and a view on it
 * as quick as on one cluster's key; what the merged key costs against per-cluster keys, and the
 * others' delivery while a member is down, reported beside them.
 */
function fleetTargets(all: readonly Row[]): TargetResult[] {
  const rows = all.filter((r): r is FleetRow => r.scenario === "fleet");
  if (rows.length === 0) return [];
  const step = (prefix: string) => rows.filter((r) => r.step.startsWith(prefix));
  const [first] = rows as [FleetRow];
  const prefix = `fleet of ${first.clusters} clusters, ${fmt(first.objects)} pods:`;
  const watches = rows.flatMap((r) => (r.upstreamWatches === undefined ? [] : [r.upstreamWatches]));
  const storm = step("storm")[0];
  const opens = step("view: first frame");
  const slowest = opens.reduce<FleetRow | undefined>((w, r) => (!w || (r.ms ?? Infinity) > (w.ms ?? Infinity) ? r : w), undefined);
  const live = step("view: live")[0];
  const [merged, perCluster] = [step("live delivery")[0], step("live delivery")[1]];
  const down = rows.find((r) => r.step.includes(" down for "));
  const back = rows.find((r) => r.step.includes(" back: "));
  const delivery = (r: FleetRow | undefined) =>
    r ? `${fmt(r.deliveredPerSec ?? 0)}/s, p50 ${fmt(r.p50Ms ?? 0)} ms, p99 ${fmt(r.p99Ms ?? 0)} ms, ${fmt(r.cpuUsPerEvent ?? 0)} µs CPU per event` : "not measured";
  return [
    {
      target: `${prefix} one upstream watch per cluster`,
      measured: watches.length === 0 ? "not measured" : `${watches.join(", ")} open watches on the clusters' simulators (each counting its own) for ${first.clusters} clusters`,
      met: watches.length === 0 ? undefined : watches.every((w) => w === first.clusters),
    },
    {
      target: `${prefix} a storm of resumes on the merged key catches up with no upstream request`,
      measured: !storm ? "not measured" : `${storm.ms === null ? `${storm.note} before the timeout` : `${fmt(storm.ms)} ms`}, ${storm.upstreamRequests ?? 0} upstream requests`,
      met: storm ? storm.ms !== null && storm.upstreamRequests === 0 : undefined,
    },
    {
      target: `${prefix} a view on the merged key opens (its first frame) ≤ ${VIEW_OPEN_MS} ms`,
      measured:
        !slowest || slowest.ms === null ? "not measured" : `slowest ${fmt(slowest.ms)} ms (${slowest.step.replace("view: first frame, ", "")}); all: ${opens.map((r) => fmt(r.ms ?? 0)).join(", ")} ms`,
      met: !slowest || slowest.ms === null ? undefined : opens.every((r) => r.ms !== null && r.ms <= VIEW_OPEN_MS),
    },
    {
      target: `${prefix} a visible row's change reaches a view on the merged key ≤ ${VIEW_P99_MS} ms p99`,
      measured: !live || live.p99Ms === null || live.p99Ms === undefined ? "not measured" : `p99 ${fmt(live.p99Ms)} ms, p50 ${fmt(live.p50Ms ?? 0)} ms (${live.note})`,
      met: !live || live.p99Ms === null || live.p99Ms === undefined ? undefined : live.p99Ms <= VIEW_P99_MS,
    },
    {
      target: `${prefix} the merged key against the same subscribers on every cluster's own key (reported)`,
      measured: `merged: ${delivery(merged)}; per-cluster keys: ${delivery(perCluster)}${perCluster?.note ? ` (${perCluster.note})` : ""}`,
      met: undefined,
    },
    {
      target: `${prefix} a member down blocks nobody (reported)`,
      measured: !down
        ? "not measured"
        : `the others' delivery meanwhile: ${delivery(down)}${back ? `; back, its hub held what changed there in ${back.ms === null ? "(not within the timeout)" : `${fmt(back.ms)} ms`}: ${back.note}` : ""}`,
      met: undefined,
    },
  ];
}
