/**
 * @module
 * The issue's targets, checked against one run's rows: one table (`TARGETS`) of what each
 * scenario's rows are held to, the thresholds above it and the comparisons they share. Reported,
 * never asserted: a missed target is a finding, stated with how far off it is. The report's
 * sections read the thresholds from here; nothing here reads the report.
 */
import { HEAP_LIMIT_MB } from "../scripts/heap-limit.ts";
import { fmt, memoryGrowthText, num } from "./tables.ts";
import {
  atOf,
  fullest,
  heapPeak,
  hopAdded,
  idleMemory,
  keptUp,
  replicasOf,
  rootOf,
  rowOf,
  sizesOf,
  windowsOf,
  type BigRow,
  type BurstRow,
  type FanoutRow,
  type FleetRow,
  type HotRow,
  type HubsRow,
  type Row,
  type SnapshotRow,
  type SocketsRow,
  type StormRow,
  type TargetResult,
  type ViewsRow,
} from "./rows.ts";
import { headline, middle } from "./rounds.ts";
import { RELAY_MODES, type SystemName, type Transport } from "./systems/system.ts";

// The thresholds.

/** A relay that delivered (nearly) everything it was offered meets a throughput target whatever the baseline did. */
const KEPT_UP_PCT = 95;
/** Per-event WebSocket delivery within this share of workerd-floor's is at the runtime's own cost of one message per event: the relay adds nothing that could be taken away. */
export const AT_FLOOR = 0.9;
/** The latency a burst's changes may take to reach every subscriber, at p99. */
export const BURST_P99_MS = 1000;
/** Batched delivery of a burst the upstream streams a chunk per event, against raw-ws's: batches must form as when it comes in one chunk. */
const CHUNKED_BURST_SHARE = 2;
/** Per-event WebSocket fan-out's CPU per delivered event against raw-ws's, at most. */
const PER_EVENT_CPU_MAX = 1.1;
/** HTTP watches against raw-http: at least as many events delivered. */
const HTTP_SHARE = 1;
/** How much faster than the API server's own a consistent list from the relay must stay. */
const CONSISTENT_LIST_FASTER = 3;
/** How many times fewer bytes a gzip-coded list of the relay must be than the same list uncoded. */
const GZIP_FEWER_BYTES = 5;
/** The most of the relay's CPU a gzip-coded list may cost, against the same list uncoded. */
const GZIP_CPU_MAX = 1.2;
/** How many times fewer bytes on the wire relay-gzip must take than relay-batched: for an initial state, and per event under churn. */
const GZIP_INITIAL_FEWER = 5;
const GZIP_CHURN_FEWER = 2;
/** The most of the relay's CPU per delivered event relay-gzip may cost, against relay-batched's. */
const GZIP_WATCH_CPU_MAX = 1.2;
/** A view opens within this, and a visible row's change reaches it within that at p99; a view client receives this many times fewer bytes than a full watch. */
const VIEW_OPEN_MS = 300;
const VIEW_P99_MS = 500;
const VIEW_BYTES_RATIO = 50;
/** A relay socket's watches against the same watches on a WebSocket each (relay-batched): delivered events/s at least, CPU per delivered event and p99 at most. */
const SOCKET_DELIVERED_SHARE = 0.9;
const SOCKET_CPU_MAX = 1.25;
const SOCKET_P99_RATIO = 2;
/** The most a view's row change may take over a relay socket at p99, against the same views each on a stream of its own in the same run (the sockets scenario's bound for watches). */
const SOCKET_VIEW_P99_RATIO = 2;
/** The issue's bound on what the extra hop may add to p50. */
const HOP_P50_MS = 25;
/** The most one hub's isolate heap may reach at any step, after a collection: half the platform's. */
export const HEAP_TARGET_MB = 64;
/** How soon a full list of a large collection must start arriving. */
const FIRST_BYTE_TARGET_MS = 100;

const kb = (bytes: number) => `${fmt(bytes / 1024)} KB`;

// The comparisons targets share.

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

/** A latency target. `beside`: the same measurement of a baseline in the same run, shown with it, so a target that the baseline misses too on this machine reads as such (it is judged alone). */
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

/** `value` at most `max`× `baseline`, both in `unit` (`per`: what they are of), side by side with their ratio. */
function atMost(target: string, value: number | null | undefined, baseline: number | null | undefined, max: number, unit: string, per = ""): TargetResult {
  if (value === null || value === undefined || !baseline) return { target, measured: "not measured", met: undefined };
  const ratio = value / baseline;
  return { target, measured: `${fmt(value)} ${unit} against ${fmt(baseline)} ${unit}${per}: ${ratio.toFixed(2)}×`, met: ratio <= max };
}

/** The size a target names, or the largest the run measured (a smaller mode is judged there). */
export function sizeFor(rows: ReadonlyArray<{ subscribers: number }>, named: number): number {
  const sizes = new Set(rows.map((r) => r.subscribers));
  return sizes.has(named) ? named : Math.max(0, ...sizes);
}

const TRANSPORT_NAMES: Record<Transport, string> = { ws: "WebSocket", http: "HTTP" };

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

/** `gzip` took `fewer`× fewer bytes than `batched`, at most; and its CPU per event at most `GZIP_WATCH_CPU_MAX`× batched's. */
function pair(
  prefix: string,
  fewer: number,
  bytes: (r: { gzip: number; batched: number }) => string,
  gzip: { bytes: number | null; cpu: number | null } | undefined,
  batched: typeof gzip,
): TargetResult[] {
  const shrunk = gzip?.bytes && batched?.bytes ? batched.bytes / gzip.bytes : undefined;
  return [
    {
      target: `${prefix} relay-gzip ≥ ${fewer}× fewer bytes on the wire than relay-batched`,
      measured: shrunk === undefined ? "not measured" : `${bytes({ gzip: gzip?.bytes ?? 0, batched: batched?.bytes ?? 0 })}: ${shrunk.toFixed(1)}× fewer`,
      met: shrunk === undefined ? undefined : shrunk >= fewer,
    },
    atMost(`${prefix} relay-gzip CPU per delivered event ≤ ${GZIP_WATCH_CPU_MAX}× relay-batched's`, gzip?.cpu, batched?.cpu, GZIP_WATCH_CPU_MAX, "µs"),
  ];
}

export const ofLimit = (mb: number) => `${fmt((100 * mb) / HEAP_LIMIT_MB)}% of the platform's ${HEAP_LIMIT_MB} MB`;

// Each scenario's targets, as the table below lists them.

/** The size fan-out's targets name (1,000 subscribers), as this run measured it. */
const fanoutSize = (fanout: readonly FanoutRow[]) => sizeFor(fanout, 1000);
/** A target for each WebSocket framing of the relay (`RELAY_MODES`), side by side. */
const eachMode = (target: (mode: SystemName) => TargetResult) => RELAY_MODES.map(target);
/** A relay framing against raw-ws: per event, half of it or the runtime's floor; batched, all of it. */
const wsShare = (mode: SystemName) => (mode === "relay" ? { share: 0.5, wording: `≥ 50% of raw-ws's, or ≥ ${AT_FLOOR * 100}% of workerd-floor's` } : { share: 1, wording: "≥ raw-ws's" });

/** Fan-out at each rate: throughput against node-relay and raw-ws (and workerd-floor), p99 at the lowest rate, one upstream connection; HTTP watches against raw-http. */
function fanoutTargets(fanout: readonly FanoutRow[]): TargetResult[] {
  const size = fanoutSize(fanout);
  const at = (system: SystemName, transport: Transport, rate: number) => rowOf(fanout, system, transport, (r) => r.subscribers === size && r.eventsPerSec === rate);
  const results: TargetResult[] = [];
  const each = (target: (mode: SystemName) => TargetResult) => results.push(...eachMode(target));
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
    const [relay, raw] = [at("relay", "ws", rate), at("raw-ws", "ws", rate)];
    results.push(atMost(`${prefix} relay CPU per delivered event ≤ ${PER_EVENT_CPU_MAX}× raw-ws's`, relay?.cpuUsPerEvent, raw?.cpuUsPerEvent, PER_EVENT_CPU_MAX, "µs"));
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
    results.push(throughput(`fanout S=${size}, ${httpRate} ev/s, HTTP: relay delivered ≥ raw-http's`, at("relay", "http", httpRate), at("raw-http", "http", httpRate), HTTP_SHARE, { steady: true }));
  }
  return results;
}

/** A burst, the upstream's in one chunk: throughput against raw-http and raw-ws (and workerd-floor), p99 within 1 s; streamed a chunk per event, batched against raw-ws. */
function burstTargets(allBursts: readonly BurstRow[]): TargetResult[] {
  // The upstream's burst in one chunk; and as an API server streams it, a chunk per event.
  const bursts = allBursts.filter((r) => !r.chunkPerEvent);
  const chunked = allBursts.filter((r) => r.chunkPerEvent);
  const results: TargetResult[] = [];
  const each = (target: (mode: SystemName) => TargetResult) => results.push(...eachMode(target));
  // The targets name 500 subscribers in the burst.
  const burstSize = sizeFor(bursts, 500);
  const burstOf = (system: SystemName, transport: Transport) => rowOf(bursts, system, transport, (r) => r.subscribers === burstSize);
  if (bursts.length > 0) {
    const changes = bursts[0]?.changes ?? 0;
    const prefix = (transport: Transport) => `burst S=${burstSize}, ${changes} changes at once, ${TRANSPORT_NAMES[transport]}:`;
    results.push(throughput(`${prefix("http")} relay delivered ≥ raw-http's events/s`, burstOf("relay", "http"), burstOf("raw-http", "http"), HTTP_SHARE, { steady: false }));
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
  return results;
}

/** A storm of resumes: no upstream request, all caught up within 2 s, per event as fast as a plain server. */
function stormTargets(storms: readonly StormRow[]): TargetResult[] {
  const results: TargetResult[] = [];
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
  for (const transport of ["ws", "http"] as const) {
    const raw = `raw-${transport}` as const;
    results.push(stormWithin(`storm, relay ${TRANSPORT_NAMES[transport]}: all caught up within ${raw}'s time`, stormOf("relay", transport), stormOf(raw, transport), raw));
  }
  return results;
}

/**
 * Deltas: bytes per MODIFIED on the simulator's churn. One measurement sees a few hundred
 * MODIFIEDs whose mix (a label change's patch is 300 B, a status change's 1.4 KB) moves its mean
 * by ±8% from run to run, so the target takes the mean over every WebSocket fan-out measurement.
 */
function deltaTargets(fanout: readonly FanoutRow[]): TargetResult[] {
  const pairs = fanout
    .filter((r) => r.system === "relay-delta" && r.transport === "ws" && r.modifiedBytes)
    .flatMap((d) => {
      const whole = rowOf(fanout, "relay", "ws", (r) => r.subscribers === d.subscribers && r.eventsPerSec === d.eventsPerSec);
      return whole?.modifiedBytes ? [{ deltas: d.modifiedBytes!, whole: whole.modifiedBytes }] : [];
    });
  if (!fanout.some((r) => r.system === "relay-delta")) return [];
  const deltaBytes = pairs.reduce((sum, p) => sum + p.deltas, 0) / pairs.length;
  const wholeBytes = pairs.reduce((sum, p) => sum + p.whole, 0) / pairs.length;
  const ratio = pairs.length === 0 ? undefined : wholeBytes / deltaBytes;
  return [
    {
      target: "fanout, every S and ev/s: relay-delta bytes per MODIFIED ≥ 5× fewer than relay's (merge patches)",
      measured:
        ratio === undefined
          ? "not measured"
          : `${fmt(Math.round(deltaBytes))} B vs ${fmt(Math.round(wholeBytes))} B: ${fmt(ratio)}× fewer; by measurement: ${pairs.map((p) => `${fmt(p.whole / p.deltas)}×`).join(", ")}`,
      met: ratio === undefined ? undefined : ratio >= 5,
    },
  ];
}

/** Many watches on one relay socket against a socket each (relay-batched) in the same run: throughput, CPU per delivered event and p99. */
function socketsTargets(sockets: readonly SocketsRow[]): TargetResult[] {
  const socket = sockets.find((r) => r.system === "relay-socket");
  const separate = sockets.find((r) => r.system === "relay-batched");
  if (!socket && !separate) return [];
  const prefix = `sockets ${socket?.clients ?? separate?.clients} clients × ${socket?.watchesPerClient ?? separate?.watchesPerClient} watches: relay-socket`;
  return [
    throughput(`${prefix} delivered ≥ ${SOCKET_DELIVERED_SHARE * 100}% of relay-batched's events/s`, socket, separate, SOCKET_DELIVERED_SHARE, { steady: true }),
    atMost(`${prefix} CPU per delivered event ≤ ${SOCKET_CPU_MAX}× relay-batched's`, socket?.cpuUsPerEvent, separate?.cpuUsPerEvent, SOCKET_CPU_MAX, "µs"),
    atMost(`${prefix} p99 ≤ ${SOCKET_P99_RATIO}× relay-batched's`, socket && medianP99(socket), separate && medianP99(separate), SOCKET_P99_RATIO, "ms", " (the median of each's rounds)"),
  ];
}

/** Each relay framing's idle memory per subscriber (RSS), at fan-out's size. */
function memoryTargets(fanout: readonly FanoutRow[]): TargetResult[] {
  const size = fanoutSize(fanout);
  return eachMode((mode) => {
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
}

/**
 * A consistent list (`resourceVersion` unset) of a hub that is watching: still at least 3× faster
 * than the API server's own, what it adds over a list of any state (`resourceVersion=0`), and at
 * most one small upstream request each, never a list (DESIGN.md, invariant 8).
 */
function snapshotTargets(snapshots: readonly SnapshotRow[]): TargetResult[] {
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

/**
 * The relay's whole list gzip-coded for a client that takes it (issue 45): at least 5× fewer
 * bytes than uncoded, at most 1.2× the relay's CPU a list (each page compressed once, the repeats
 * reading that compression).
 */
function gzipListTargets(rows: readonly SnapshotRow[]): TargetResult[] {
  const snapshots = rows.filter((r) => r.system === "relay" && r.list === "full");
  const [plain, coded] = [snapshots.find((r) => !r.coding), snapshots.find((r) => r.coding === "gzip")];
  if (!plain || !coded) return [];
  const prefix = `snapshot of ${fmt(plain.objects)} pods, the relay's whole list gzip-coded:`;
  const fewer = plain.bytes / coded.bytes;
  return [
    {
      target: `${prefix} ≥ ${GZIP_FEWER_BYTES}× fewer bytes than uncoded`,
      measured: `${fmt(coded.bytes)} B against ${fmt(plain.bytes)} B: ${fewer.toFixed(1)}× fewer`,
      met: fewer >= GZIP_FEWER_BYTES,
    },
    atMost(`${prefix} ≤ ${GZIP_CPU_MAX}× the relay's CPU a list`, coded.cpuMs, plain.cpuMs, GZIP_CPU_MAX, "ms", " a list"),
  ];
}

/** The compressed WebSocket framing under churn (issue 45): relay-gzip against relay-batched, at each fan-out size and rate. */
function gzipChurnTargets(rows: readonly FanoutRow[]): TargetResult[] {
  const fanout = rows.filter((r) => r.transport === "ws");
  return fanout
    .filter((r) => r.system === "relay-gzip")
    .flatMap((gzip) => {
      const batched = fanout.find((r) => r.system === "relay-batched" && r.subscribers === gzip.subscribers && r.eventsPerSec === gzip.eventsPerSec);
      const of = (r: FanoutRow | undefined) => r && { bytes: r.wireEventBytes, cpu: r.cpuUsPerEvent };
      return pair(`fanout S=${gzip.subscribers}, ${gzip.eventsPerSec} ev/s, WebSocket (churn):`, GZIP_CHURN_FEWER, (b) => `${kb(b.gzip)} against ${kb(b.batched)} an event`, of(gzip), of(batched));
    });
}

/** The compressed WebSocket framing for an initial state (big's): relay-gzip against relay-batched. */
function gzipInitialTargets(rows: readonly BigRow[]): TargetResult[] {
  const initial = rows.filter((r) => r.transport === "ws" && r.step.startsWith("initial state"));
  const gzip = initial.find((r) => r.system === "relay-gzip");
  if (!gzip) return [];
  const batched = initial.find((r) => r.system === "relay-batched");
  const subscribers = gzip.subscribers ?? 1;
  const of = (r: BigRow | undefined) => r && { bytes: r.bytes ?? null, cpu: r.cpuUsPerEvent ?? null };
  const prefix = `big, ${fmt(gzip.objects)} pods, the initial state to ${fmt(subscribers)} subscribers at once, WebSocket:`;
  const perSubscriber = (bytes: number) => `${fmt(bytes / subscribers / 2 ** 20)} MB`;
  return pair(prefix, GZIP_INITIAL_FEWER, (b) => `${perSubscriber(b.gzip)} against ${perSubscriber(b.batched)} a subscriber`, of(gzip), of(batched));
}

function viewsTargets(rows: readonly ViewsRow[]): TargetResult[] {
  if (rows.length === 0) return [];
  const { watch, views, socketViews } = windowsOf(rows);
  const objects = num(views?.objects ?? watch?.objects ?? 0);
  const opens = views?.opens ?? [];
  const worst = (pick: (o: (typeof opens)[number]) => number) => opens.reduce<(typeof opens)[number] | undefined>((w, o) => (!w || pick(o) > pick(w) ? o : w), undefined);
  const openTarget = (which: string, pick: (o: (typeof opens)[number]) => number): TargetResult => {
    const o = worst(pick);
    return {
      target: `views at ${objects} objects: a view opens (its first frame) ≤ ${VIEW_OPEN_MS} ms, ${which}`,
      measured: !o
        ? "not measured"
        : `slowest ${fmt(pick(o))} ms (sort ${o.sort}${o.filter ? `, filter ${o.filter}` : ""})${pick(o) > VIEW_OPEN_MS ? ` (${(pick(o) / VIEW_OPEN_MS).toFixed(1)}× the target)` : ""}; all: ${opens.map((x) => fmt(pick(x))).join(", ")} ms`,
      met: o ? pick(o) <= VIEW_OPEN_MS : undefined,
    };
  };
  const times = views?.watchBytesPerMin && views.bytesPerClientPerMin ? views.watchBytesPerMin / views.bytesPerClientPerMin : undefined;
  const first = views && views.listBytes !== null && views.bytesPerClientPerMin !== null && views.watchBytesPerMin !== null ? firstMinute(views) : undefined;
  return [
    openTarget("the first of its order (which builds the order's index)", (o) => o.coldMs),
    openTarget("a second window of an order", (o) => o.warmMs),
    {
      target: `views at ${objects} objects, ${num(views?.eventsPerSec ?? 0)} ev/s: a visible row's change reaches its view ≤ ${VIEW_P99_MS} ms p99`,
      measured: views?.p99Ms === null || views?.p99Ms === undefined ? "not measured" : `p99 ${fmt(views.p99Ms)} ms, p50 ${fmt(views.p50Ms ?? 0)} ms (${num(views.latencySamples)} row changes)`,
      met: views?.p99Ms === null || views?.p99Ms === undefined ? undefined : views.p99Ms <= VIEW_P99_MS,
    },
    {
      target: `views at ${objects} objects: a view client receives ≥ ${VIEW_BYTES_RATIO}× fewer bytes than a full watch of the collection`,
      measured:
        times === undefined || !views
          ? "not measured"
          : `live: ${fmt((views.bytesPerClientPerMin ?? 0) / 1024)} KB/min against ${fmt((views.watchBytesPerMin ?? 0) / 1024)} KB/min, ${fmt(times)}× fewer` +
            (first ? `; over the first minute, the watch's initial list and the view's first frame included: ${fmt(first)}× fewer` : ""),
      met: times === undefined ? undefined : times >= VIEW_BYTES_RATIO,
    },
    socketViewTarget(objects, views, socketViews),
  ];
}

/** The same views as ops on relay sockets: a visible row's change at p99, against the views on streams of their own in the same run. */
function socketViewTarget(objects: string, views: ViewsRow | undefined, overSockets: ViewsRow | undefined): TargetResult {
  const target = `views at ${objects} objects over relay sockets: a visible row's change p99 ≤ ${SOCKET_VIEW_P99_RATIO}× the same views' on streams of their own`;
  if (!views || !overSockets || views.p99Ms === null || overSockets.p99Ms === null) return { target, measured: "not measured", met: undefined };
  const ratio = overSockets.p99Ms / Math.max(1, views.p99Ms);
  return {
    target,
    measured: `p99 ${fmt(overSockets.p99Ms)} ms against ${fmt(views.p99Ms)} ms (${ratio.toFixed(2)}×); p50 ${fmt(overSockets.p50Ms ?? 0)} against ${fmt(views.p50Ms ?? 0)} ms`,
    met: ratio <= SOCKET_VIEW_P99_RATIO,
  };
}

/** The first minute of each: the full watch's initial state (a list's bytes) and events, against the view's first frame and frames. */
function firstMinute(views: ViewsRow): number | undefined {
  const frame = views.opens?.[0]?.bytes ?? 0;
  return ((views.listBytes ?? 0) + (views.watchBytesPerMin ?? 0)) / (frame + (views.bytesPerClientPerMin ?? 1));
}

/** The issue's targets for a hot key: at the tree's size with the most replicas measured, and at the hop's size. */
function hotTargets(rows: readonly HotRow[]): TargetResult[] {
  if (rows.length === 0) return [];
  const { tree, hop } = sizesOf(rows);
  const most = Math.max(...rows.filter((r) => r.subscribers === tree).map((r) => r.replicas));
  const at = atOf(rows);
  const out: TargetResult[] = [];
  for (const system of ["relay", "relay-batched"] as const) {
    const row = at(system, tree, most);
    const root = row && rootOf(row);
    const share = tree === undefined ? 0 : tree / most;
    out.push({
      target: `hot S=${num(tree ?? 0)}, ${most} replicas, ${system}: the root sends ≤ ${most} messages per event (its replicas), not ${num(tree ?? 0)}`,
      measured: !root
        ? "not measured"
        : `sends to ${root.destinations} (${root.subscribers} subscribers of its own); ${root.messagesPerEvent === null ? "–" : fmt(root.messagesPerEvent)} messages per event committed`,
      met: !root ? undefined : root.destinations <= most && root.messagesPerEvent !== null && root.messagesPerEvent <= most * 1.05,
    });
    const top = row && fullest(row);
    out.push({
      target: `hot S=${num(tree ?? 0)}, ${most} replicas, ${system}: no replica sends to more than its share (${num(share)} subscribers) per event`,
      measured:
        !row || !top
          ? "not measured"
          : `${row.replicasLive} replicas serving ${replicasOf(row)
              .map((h) => num(h.subscribers))
              .join(
                ", ",
              )}; the fullest sent ${top.messagesPerEvent === null ? "–" : fmt(top.messagesPerEvent)} messages per event${top.subscribers > share ? ` (${(top.subscribers / share).toFixed(1)}× its share: see the placement note below)` : ""}`,
      met: !row || !top ? undefined : top.subscribers <= share,
    });
  }
  const hopReplicas = Math.max(0, ...rows.filter((r) => r.subscribers === hop).map((r) => r.replicas));
  for (const split of [true, false]) {
    for (const system of ["relay", "relay-batched"] as const) {
      const [solo, treeRow] = [at(system, hop, 0, split), at(system, hop, hopReplicas, split)];
      if (!split || (solo && treeRow)) out.push(hopTarget(system, hop ?? 0, hopReplicas, split, solo, treeRow));
    }
  }
  return out;
}

/**
 * What the hop added to p50, judged where the tree has a thread per tier as deployed (`split`:
 * the replicas in a second workerd) and both kept up. On one workerd for all it is said, not
 * judged: there the difference is one thread's queue, which the tree lengthens by its replica's
 * turns; nor where either fell behind, when both p50s are a saturated thread's queue.
 */
function hopTarget(system: SystemName, hop: number, replicas: number, split: boolean, solo: HotRow | undefined, treeRow: HotRow | undefined): TargetResult {
  const rate = treeRow?.eventsPerSec ?? solo?.eventsPerSec ?? 0;
  const { pairs, added } = solo && treeRow ? hopAdded(solo, treeRow) : { pairs: [], added: undefined };
  const kept = keptUp([solo, treeRow]);
  const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${num(ms)} ms`;
  const where = split ? "replicas in a second workerd" : "every hub on one workerd thread, said, not judged";
  return {
    target: `hot S=${num(hop)}, ${num(rate)} ev/s, ${system}: ${replicas} replicas (every subscriber on one) add ≤ ${HOP_P50_MS} ms to p50 (${where})`,
    measured:
      added === undefined || !solo || !treeRow
        ? "not measured"
        : (pairs.length === 1
            ? `p50 ${num(solo.p50Ms ?? 0)} ms without replicas, ${num(treeRow.p50Ms ?? 0)} ms with: ${signed(added)}`
            : `${signed(added)}, the median of each round's difference (p50 without replicas, then with: ${pairs.map(([a, b]) => `${num(a)}, ${num(b)} ms`).join("; ")})`) +
          (kept ? "" : `; delivered ${num(solo.deliveredPct)}% and ${num(treeRow.deliveredPct)}% of what was asked, so both p50s measure the queue of a saturated thread, not the hop`),
    met: added === undefined || !split || !kept ? undefined : added <= HOP_P50_MS,
  };
}

/** A big collection's hub: its JS heap within 64 MB at every step, its full lists' first bytes within 100 ms. */
function bigHeapTargets(rows: readonly BigRow[]): TargetResult[] {
  const big = rows.filter((r) => r.system === "relay");
  if (big.length === 0) return [];
  const top = heapPeak(big);
  const objects = big[0]?.objects ?? 0;
  const unfinished = big.filter((r) => r.ms === null && r.heapMaxMB !== null && !r.step.startsWith("idle"));
  const full = big.filter((r) => r.step.startsWith("full list") && typeof r.firstByteMs === "number");
  const slowest = Math.max(...full.map((r) => r.firstByteMs as number));
  return [
    {
      target: `big, ${num(objects)} pods: JS heap ≤ ${HEAP_TARGET_MB} MB after a collection, at every step`,
      measured: top ? `at most ${fmt(top.mb)} MB (${top.row.step}), ${ofLimit(top.mb)}${unfinished.length > 0 ? `; unfinished: ${unfinished.map((r) => r.step).join(", ")}` : ""}` : "not measured",
      met: top ? top.mb <= HEAP_TARGET_MB && unfinished.length === 0 : undefined,
    },
    {
      target: `big, ${num(objects)} pods: the first bytes of a full list through the relay within ${FIRST_BYTE_TARGET_MS} ms`,
      measured: full.length > 0 ? full.map((r) => `${r.step.replace("full list, ", "")}: ${fmt(r.firstByteMs as number)} ms`).join("; ") : "not measured",
      met: full.length > 0 ? slowest <= FIRST_BYTE_TARGET_MS : undefined,
    },
  ];
}

/** Many hubs in one isolate: its JS heap within the platform's 128 MB. */
function hubsHeapTargets(hubs: readonly HubsRow[]): TargetResult[] {
  const [first] = hubs;
  if (!first) return [];
  const top = heapPeak(hubs);
  return [
    {
      target: `hubs, ${num(first.keys)} keys × ${num(first.objects)} pods in one workerd: JS heap ≤ ${HEAP_LIMIT_MB} MB`,
      measured: top ? `at most ${fmt(top.mb)} MB (${top.row.step})` : "not measured",
      met: top ? top.mb <= HEAP_LIMIT_MB && hubs.every((r) => r.ms !== null) : undefined,
    },
  ];
}

/**
 * One watch across clusters (issue 43): one upstream watch per cluster however the fleet is
 * watched, a storm of resumes on the merged key served without the clusters, and a view on it
 * as quick as on one cluster's key; what the merged key costs against per-cluster keys, and the
 * others' delivery while a member is down, reported beside them.
 */
function fleetTargets(rows: readonly FleetRow[]): TargetResult[] {
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

/** One target check: the scenario whose rows it reads (only those are handed to it), and what it holds them to. */
interface Check {
  scenario: Row["scenario"];
  check(rows: readonly Row[]): TargetResult[];
}
const on = <T extends Row>(scenario: T["scenario"], check: (rows: readonly T[]) => TargetResult[]): Check => ({ scenario, check: (rows) => check(rows as readonly T[]) });

/** Every target the relay is held to, in the order the report lists them. */
const TARGETS: readonly Check[] = [
  on<FanoutRow>("fanout", fanoutTargets),
  on<BurstRow>("burst", burstTargets),
  on<StormRow>("storm", stormTargets),
  on<FanoutRow>("fanout", deltaTargets),
  on<SocketsRow>("sockets", socketsTargets),
  on<FanoutRow>("fanout", memoryTargets),
  on<SnapshotRow>("snapshot", snapshotTargets),
  on<SnapshotRow>("snapshot", gzipListTargets),
  on<FanoutRow>("fanout", gzipChurnTargets),
  on<BigRow>("big", gzipInitialTargets),
  on<ViewsRow>("views", viewsTargets),
  on<HotRow>("hot", hotTargets),
  on<BigRow>("big", bigHeapTargets),
  on<HubsRow>("hubs", hubsHeapTargets),
  on<FleetRow>("fleet", fleetTargets),
];

/** Every target, checked against a run's rows. */
export function checkTargets(rows: readonly Row[]): TargetResult[] {
  return TARGETS.flatMap(({ scenario, check }) => check(rows.filter((r) => r.scenario === scenario)));
}
