/**
 * @module
 * The issue's targets, checked against one run's rows (`TARGETS`). Reported, never asserted: a
 * missed target is a finding, stated with how far off it is.
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
import { replicaCounts } from "./report-hot.ts";
import { headline, middle } from "./rounds.ts";
import { RELAY_MODES, type SystemName, type Transport } from "./systems/system.ts";

/** A relay that delivered (nearly) all it was offered meets a throughput target whatever the baseline did. */
const KEPT_UP_PCT = 95;
/** Per-event WebSocket delivery within this share of workerd-floor's is at the runtime's own cost. */
export const AT_FLOOR = 0.9;
export const BURST_P99_MS = 1000;
/** A burst streamed a chunk per event, batched, against raw-ws: batches must form as from one chunk. */
const CHUNKED_BURST_SHARE = 2;
/** Per-event WebSocket fan-out's CPU per delivered event against raw-ws's, at most. */
const PER_EVENT_CPU_MAX = 1.1;
/** HTTP watches against raw-http: at least as many events delivered. */
const HTTP_SHARE = 1;
const CONSISTENT_LIST_FASTER = 3;
/** A gzip-coded list against the same list uncoded: bytes, and the relay's CPU. */
const GZIP_FEWER_BYTES = 5;
const GZIP_CPU_MAX = 1.2;
/** relay-gzip against relay-batched: bytes on the wire (an initial state, per event under churn), CPU. */
const GZIP_INITIAL_FEWER = 5;
const GZIP_CHURN_FEWER = 2;
const GZIP_WATCH_CPU_MAX = 1.2;
const VIEW_OPEN_MS = 300;
const VIEW_P99_MS = 500;
/** A view client receives this many times fewer bytes than a full watch. */
const VIEW_BYTES_RATIO = 50;
/** A relay socket's watches against a WebSocket each (relay-batched): events/s at least, CPU and p99 at most. */
const SOCKET_DELIVERED_SHARE = 0.9;
const SOCKET_CPU_MAX = 1.25;
const SOCKET_P99_RATIO = 2;
/** A view's row change over a relay socket at p99, against the same views on streams of their own. */
const SOCKET_VIEW_P99_RATIO = 2;
const HOP_P50_MS = 25;
/** One hub's isolate heap at any step, after a collection: half the platform's. */
export const HEAP_TARGET_MB = 64;
const FIRST_BYTE_TARGET_MS = 100;

const kb = (bytes: number) => `${fmt(bytes / 1024)} KB`;

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

/** `relay` delivered at least `share` of `baseline`'s; kept up under churn, or in a burst lost nothing. */
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

/** A row's p99, or the median of its rounds' (a round that delivered nothing counts as the longest). */
function medianP99(row: Latency): number | null {
  if (!row.rounds || row.rounds.length < 2) return row.p99Ms;
  const p99s = row.rounds.map((r) => ("p99Ms" in r && typeof r.p99Ms === "number" ? r.p99Ms : Number.POSITIVE_INFINITY));
  const median = middle(p99s, (p99) => p99) as number;
  return Number.isFinite(median) ? median : null;
}

/** A latency target; `beside`, a baseline's shown with it (one it misses too reads as such). */
function p99Target(target: string, row: Latency | undefined, limitMs: number, beside?: { name: string; row: Latency | undefined }): TargetResult {
  const p99 = row ? medianP99(row) : null;
  const baseline = beside?.row ? medianP99(beside.row) : null;
  const compared = beside && baseline !== null ? `; ${beside.name} p99 ${fmt(baseline)} ms` : "";
  const rounds =
    row?.rounds && row.rounds.length > 1 ? ` (the median of its rounds: ${row.rounds.map((r) => ("p99Ms" in r && typeof r.p99Ms === "number" ? fmt(r.p99Ms) : "none")).join(", ")} ms)` : "";
  return {
    target,
    measured: row === undefined ? "not measured" : p99 === null ? "no events delivered" : `p99 ${fmt(p99)} ms${rounds}${over(p99, limitMs)}${compared}`,
    met: row === undefined ? undefined : p99 !== null && p99 <= limitMs,
  };
}

/** `target` judged on `value` (`said`: what was measured, and whether it met the target), or not measured. */
function judge<T>(target: string, value: T | undefined, said: (value: T) => [string, boolean | undefined]): TargetResult {
  if (value === undefined) return { target, measured: "not measured", met: undefined };
  const [measured, met] = said(value);
  return { target, measured, met };
}

/** How far past its target a figure is, as a target's measurement says it. */
const over = (value: number, limit: number) => (value > limit ? ` (${(value / limit).toFixed(1)}× the target)` : "");

/** `value` at most `max`× `baseline`, both in `unit` (`per`: what they are of). */
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

/**
 * A storm's catch-up against a raw baseline's in the same run; beside it, where measured, the
 * runtime's own replay of the same events (workerd-floor), which the target does not excuse.
 */
function stormWithin(target: string, relay: StormRow | undefined, raw: StormRow | undefined, rawName: string, floor?: StormRow): TargetResult {
  if (!relay || !raw) return { target, measured: "not measured", met: undefined };
  const time = (r: StormRow) => (r.catchUpMs === null ? `${r.caughtUp} of ${r.subscribers} caught up before the timeout` : `${fmt(r.catchUpMs)} ms`);
  const ratio = relay.catchUpMs !== null && raw.catchUpMs !== null && raw.catchUpMs > 0 ? relay.catchUpMs / raw.catchUpMs : undefined;
  const floorNote = floor ? `; workerd-floor's, one message per event from workerd with nothing of the relay's, ${time(floor)}` : "";
  return {
    target,
    measured: `${time(relay)} vs ${rawName}'s ${time(raw)}${ratio === undefined ? "" : `: ${ratio.toFixed(2)}×`}${floorNote}`,
    met: raw.catchUpMs === null ? undefined : relay.catchUpMs !== null && relay.catchUpMs <= raw.catchUpMs,
  };
}

/** `value` at least `min`× fewer bytes than `baseline` (`said`: the two, as the target reads them). */
const fewerBytes = (target: string, value: number | null | undefined, baseline: number | null | undefined, min: number, said: string): TargetResult =>
  judge(target, value && baseline ? baseline / value : undefined, (times) => [`${said}: ${times.toFixed(1)}× fewer`, times >= min]);

/** `gzip` took `fewer`× fewer bytes than `batched`, and its CPU per event at most `GZIP_WATCH_CPU_MAX`×. */
type Framed = { bytes: number | null; cpu: number | null } | undefined;
function pair(prefix: string, fewer: number, bytes: (gzip: number, batched: number) => string, gzip: Framed, batched: Framed): TargetResult[] {
  const said = bytes(gzip?.bytes ?? 0, batched?.bytes ?? 0);
  return [
    fewerBytes(`${prefix} relay-gzip ≥ ${fewer}× fewer bytes on the wire than relay-batched`, gzip?.bytes, batched?.bytes, fewer, said),
    atMost(`${prefix} relay-gzip CPU per delivered event ≤ ${GZIP_WATCH_CPU_MAX}× relay-batched's`, gzip?.cpu, batched?.cpu, GZIP_WATCH_CPU_MAX, "µs"),
  ];
}

export const ofLimit = (mb: number) => `${fmt((100 * mb) / HEAP_LIMIT_MB)}% of the platform's ${HEAP_LIMIT_MB} MB`;

/** The size fan-out's targets name (1,000 subscribers), as this run measured it. */
const fanoutSize = (fanout: readonly FanoutRow[]) => sizeFor(fanout, 1000);
const eachMode = (target: (mode: SystemName) => TargetResult) => RELAY_MODES.map(target);
/** A relay framing against raw-ws: per event, half of it or the runtime's floor; batched, all of it. */
function againstRaw(mode: SystemName, target: string, unit: string, steady: boolean, of: (system: SystemName) => Delivery | undefined): TargetResult {
  const [share, wording] = mode === "relay" ? [0.5, `≥ 50% of raw-ws's, or ≥ ${AT_FLOOR * 100}% of workerd-floor's`] : [1, "≥ raw-ws's"];
  return throughput(`${target} ${wording}${unit}`, of(mode), of("raw-ws"), share, { steady, floor: mode === "relay" ? of("workerd-floor") : undefined });
}

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
    each((mode) => againstRaw(mode, `${prefix} ${mode} delivered`, "", true, (system) => at(system, "ws", rate)));
    // The latency target names 100 events/s, the lowest rate of a quick or full run.
    if (rate === rates[0]) each((mode) => p99Target(`${prefix} ${mode} p99 ≤ 100 ms`, at(mode, "ws", rate), 100, { name: "raw-ws", row: at("raw-ws", "ws", rate) }));
    results.push(
      atMost(`${prefix} relay CPU per delivered event ≤ ${PER_EVENT_CPU_MAX}× raw-ws's`, at("relay", "ws", rate)?.cpuUsPerEvent, at("raw-ws", "ws", rate)?.cpuUsPerEvent, PER_EVENT_CPU_MAX, "µs"),
    );
    const directs = direct ? `, direct ${direct.upstreamConnections}` : "";
    const oneConnection =
      (mode: SystemName) =>
      (r: FanoutRow): [string, boolean] => [`${mode} ${r.upstreamConnections}${directs}`, r.upstreamConnections === 1];
    each((mode) => judge(`${prefix} ${mode} holds exactly 1 upstream connection (direct: S)`, at(mode, "ws", rate), oneConnection(mode)));
  }
  // HTTP watches: the target names 100 events/s, the lowest rate they are measured at.
  const httpRate = Math.min(...fanout.filter((r) => r.system === "relay" && r.transport === "http" && r.subscribers === size).map((r) => r.eventsPerSec));
  if (Number.isFinite(httpRate)) {
    results.push(throughput(`fanout S=${size}, ${httpRate} ev/s, HTTP: relay delivered ≥ raw-http's`, at("relay", "http", httpRate), at("raw-http", "http", httpRate), HTTP_SHARE, { steady: true }));
  }
  return results;
}

function burstTargets(allBursts: readonly BurstRow[]): TargetResult[] {
  const bursts = allBursts.filter((r) => !r.chunkPerEvent);
  const chunked = allBursts.filter((r) => r.chunkPerEvent);
  const results: TargetResult[] = [];
  const each = (target: (mode: SystemName) => TargetResult) => results.push(...eachMode(target));
  const burstSize = sizeFor(bursts, 500);
  const burstOf = (system: SystemName, transport: Transport) => rowOf(bursts, system, transport, (r) => r.subscribers === burstSize);
  if (bursts.length > 0) {
    const changes = bursts[0]?.changes ?? 0;
    const prefix = (transport: Transport) => `burst S=${burstSize}, ${changes} changes at once, ${TRANSPORT_NAMES[transport]}:`;
    results.push(throughput(`${prefix("http")} relay delivered ≥ raw-http's events/s`, burstOf("relay", "http"), burstOf("raw-http", "http"), HTTP_SHARE, { steady: false }));
    results.push(p99Target(`${prefix("http")} relay p99 ≤ 1 s`, burstOf("relay", "http"), BURST_P99_MS, { name: "raw-http", row: burstOf("raw-http", "http") }));
    each((mode) => againstRaw(mode, `${prefix("ws")} ${mode} delivered`, " events/s", false, (system) => burstOf(system, "ws")));
    results.push(p99Target(`${prefix("ws")} relay-batched p99 ≤ 1 s`, burstOf("relay-batched", "ws"), BURST_P99_MS, { name: "raw-ws", row: burstOf("raw-ws", "ws") }));
  }
  if (chunked.length > 0) {
    const chunkedOf = (system: SystemName) => rowOf(chunked, system, "ws", (r) => r.subscribers === burstSize);
    const target = `burst S=${burstSize}, ${chunked[0]?.changes ?? 0} changes at once, each in a chunk of its own, WebSocket: relay-batched delivered ≥ ${CHUNKED_BURST_SHARE}× raw-ws's events/s`;
    results.push(throughput(target, chunkedOf("relay-batched"), chunkedOf("raw-ws"), CHUNKED_BURST_SHARE, { steady: false }));
  }
  return results;
}

function stormTargets(storms: readonly StormRow[]): TargetResult[] {
  const results: TargetResult[] = [];
  const stormOf = (mode: SystemName, transport: Transport = "ws") => storms.find((r) => r.system === mode && r.transport === transport);
  // The storm is also run as the project's client resumes: for net changes (relay-delta).
  const eachStorm = (target: (mode: SystemName) => TargetResult) => results.push(...[...RELAY_MODES, "relay-delta" as const].map(target));
  eachStorm((mode) => judge(`storm, ${mode}: 0 upstream requests`, stormOf(mode), (s) => [`${s.upstreamRequests}`, s.upstreamRequests === 0]));
  const caught = (s: StormRow): [string, boolean] =>
    s.catchUpMs === null ? [`${s.caughtUp} of ${s.subscribers} caught up before the timeout`, false] : [`${fmt(s.catchUpMs)} ms${over(s.catchUpMs, 2000)}`, s.catchUpMs <= 2000];
  eachStorm((mode) => judge(`storm, ${mode}: all ${stormOf(mode)?.subscribers ?? ""} caught up within 2 s`, stormOf(mode), caught));
  for (const transport of ["ws", "http"] as const) {
    const raw = `raw-${transport}` as const;
    const floor = transport === "ws" ? stormOf("workerd-floor") : undefined;
    results.push(stormWithin(`storm, relay ${TRANSPORT_NAMES[transport]}: all caught up within ${raw}'s time`, stormOf("relay", transport), stormOf(raw, transport), raw, floor));
  }
  return results;
}

/** Bytes per MODIFIED, the mean over every measurement: one moves ±8% with its mix of changes. */
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
  const byMeasurement = pairs.map((p) => `${fmt(p.whole / p.deltas)}×`).join(", ");
  return [
    judge("fanout, every S and ev/s: relay-delta bytes per MODIFIED ≥ 5× fewer than relay's (merge patches)", ratio, (r) => [
      `${fmt(Math.round(deltaBytes))} B vs ${fmt(Math.round(wholeBytes))} B: ${fmt(r)}× fewer; by measurement: ${byMeasurement}`,
      r >= 5,
    ]),
  ];
}

/**
 * Delivery and p99 judged on the pair whose mux objects had a workerd of their own where it was
 * measured (as deployed, each object has a thread), else on one thread; CPU per event on one
 * thread: between two local workerds each hub-to-mux message also crosses a socket both count.
 */
function socketsTargets(all: readonly SocketsRow[]): TargetResult[] {
  const pairOf = (split: boolean) => {
    const rows = all.filter((r) => (r.muxWorkerd ?? false) === split);
    return { socket: rows.find((r) => r.system === "relay-socket"), separate: rows.find((r) => r.system === "relay-batched") };
  };
  const split = all.some((r) => r.muxWorkerd);
  const { socket, separate } = pairOf(split);
  const one = pairOf(false);
  if (!socket && !separate) return [];
  const prefix = `sockets ${socket?.clients ?? separate?.clients} clients × ${socket?.watchesPerClient ?? separate?.watchesPerClient} watches`;
  const as = `${prefix}${split ? " (socket objects in a workerd of their own, as deployed)" : ""}: relay-socket`;
  return [
    throughput(`${as} delivered ≥ ${SOCKET_DELIVERED_SHARE * 100}% of relay-batched's events/s`, socket, separate, SOCKET_DELIVERED_SHARE, { steady: true }),
    atMost(
      `${prefix}${split ? " (on one thread)" : ""}: relay-socket CPU per delivered event ≤ ${SOCKET_CPU_MAX}× relay-batched's`,
      one.socket?.cpuUsPerEvent,
      one.separate?.cpuUsPerEvent,
      SOCKET_CPU_MAX,
      "µs",
    ),
    atMost(`${as} p99 ≤ ${SOCKET_P99_RATIO}× relay-batched's`, socket && medianP99(socket), separate && medianP99(separate), SOCKET_P99_RATIO, "ms", " (the median of each's rounds)"),
  ];
}

function memoryTargets(fanout: readonly FanoutRow[]): TargetResult[] {
  const size = fanoutSize(fanout);
  // A negative growth is noise: it neither meets nor misses the target.
  const said = (m: { subscribers: number; rssKB: number; heapKB: number }): [string, boolean | undefined] => [
    `RSS ${memoryGrowthText(m.rssKB)} at S=${m.subscribers}${over(m.rssKB, 20)}, of which JS heap ${memoryGrowthText(m.heapKB)}`,
    m.rssKB >= 0 ? m.rssKB <= 20 : undefined,
  ];
  return eachMode((mode) => judge(`${mode} memory ≤ 20 KB per idle subscriber (RSS)`, idleMemory(fanout, mode, size), said));
}

/** A consistent list from a watching hub: one small upstream request at most, never a list (invariant 8). */
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
  const short = (ratio: number) => (ratio < CONSISTENT_LIST_FASTER ? ` (short by ${((1 - ratio / CONSISTENT_LIST_FASTER) * 100).toFixed(0)}%)` : "");
  return [
    judge(`${prefix} ≥ ${CONSISTENT_LIST_FASTER}× faster than the API server's own (p50)`, direct, (d) => [
      `p50 ${fmt(relay.ms)} ms, p99 ${fmt(relay.p99Ms ?? 0)} ms vs the API server's p50 ${fmt(d.ms)} ms: ${(d.ms / relay.ms).toFixed(2)}×${short(d.ms / relay.ms)}${added}`,
      d.ms / relay.ms >= CONSISTENT_LIST_FASTER,
    ]),
    {
      target: `${prefix} at most 1 upstream request each, never a list`,
      measured: `${relay.upstreamRequests} upstream requests for ${relay.samples} lists, ${relay.upstreamLists ?? 0} of them lists`,
      met: relay.upstreamRequests <= (relay.samples ?? 0) && (relay.upstreamLists ?? 0) === 0,
    },
  ];
}

function gzipListTargets(rows: readonly SnapshotRow[]): TargetResult[] {
  const snapshots = rows.filter((r) => r.system === "relay" && r.list === "full");
  const [plain, coded] = [snapshots.find((r) => !r.coding), snapshots.find((r) => r.coding === "gzip")];
  if (!plain || !coded) return [];
  const prefix = `snapshot of ${fmt(plain.objects)} pods, the relay's whole list gzip-coded:`;
  return [
    fewerBytes(`${prefix} ≥ ${GZIP_FEWER_BYTES}× fewer bytes than uncoded`, coded.bytes, plain.bytes, GZIP_FEWER_BYTES, `${fmt(coded.bytes)} B against ${fmt(plain.bytes)} B`),
    atMost(`${prefix} ≤ ${GZIP_CPU_MAX}× the relay's CPU a list`, coded.cpuMs, plain.cpuMs, GZIP_CPU_MAX, "ms", " a list"),
  ];
}

function gzipChurnTargets(rows: readonly FanoutRow[]): TargetResult[] {
  const fanout = rows.filter((r) => r.transport === "ws");
  return fanout
    .filter((r) => r.system === "relay-gzip")
    .flatMap((gzip) => {
      const batched = fanout.find((r) => r.system === "relay-batched" && r.subscribers === gzip.subscribers && r.eventsPerSec === gzip.eventsPerSec);
      const of = (r: FanoutRow | undefined) => r && { bytes: r.wireEventBytes, cpu: r.cpuUsPerEvent };
      return pair(`fanout S=${gzip.subscribers}, ${gzip.eventsPerSec} ev/s, WebSocket (churn):`, GZIP_CHURN_FEWER, (g, b) => `${kb(g)} against ${kb(b)} an event`, of(gzip), of(batched));
    });
}

function gzipInitialTargets(rows: readonly BigRow[]): TargetResult[] {
  const initial = rows.filter((r) => r.transport === "ws" && r.step.startsWith("initial state"));
  const gzip = initial.find((r) => r.system === "relay-gzip");
  if (!gzip) return [];
  const batched = initial.find((r) => r.system === "relay-batched");
  const subscribers = gzip.subscribers ?? 1;
  const of = (r: BigRow | undefined) => r && { bytes: r.bytes ?? null, cpu: r.cpuUsPerEvent ?? null };
  const prefix = `big, ${fmt(gzip.objects)} pods, the initial state to ${fmt(subscribers)} subscribers at once, WebSocket:`;
  const perSubscriber = (bytes: number) => `${fmt(bytes / subscribers / 2 ** 20)} MB`;
  return pair(prefix, GZIP_INITIAL_FEWER, (g, b) => `${perSubscriber(g)} against ${perSubscriber(b)} a subscriber`, of(gzip), of(batched));
}

function viewsTargets(rows: readonly ViewsRow[]): TargetResult[] {
  if (rows.length === 0) return [];
  const { watch, views, socketViews } = windowsOf(rows);
  const objects = num(views?.objects ?? watch?.objects ?? 0);
  const opens = views?.opens ?? [];
  const worst = (pick: (o: (typeof opens)[number]) => number) => opens.reduce<(typeof opens)[number] | undefined>((w, o) => (!w || pick(o) > pick(w) ? o : w), undefined);
  const openTarget = (which: string, pick: (o: (typeof opens)[number]) => number): TargetResult =>
    judge(`views at ${objects} objects: a view opens (its first frame) ≤ ${VIEW_OPEN_MS} ms, ${which}`, worst(pick), (o) => [
      `slowest ${fmt(pick(o))} ms (sort ${o.sort}${o.filter ? `, filter ${o.filter}` : ""})${over(pick(o), VIEW_OPEN_MS)}; all: ${opens.map((x) => fmt(pick(x))).join(", ")} ms`,
      pick(o) <= VIEW_OPEN_MS,
    ]);
  const times = views?.watchBytesPerMin && views.bytesPerClientPerMin ? views.watchBytesPerMin / views.bytesPerClientPerMin : undefined;
  // The first minute of each: the watch's initial list and events, against the view's frames.
  const first =
    views && views.listBytes !== null && views.bytesPerClientPerMin !== null && views.watchBytesPerMin !== null
      ? (views.listBytes + views.watchBytesPerMin) / ((views.opens?.[0]?.bytes ?? 0) + views.bytesPerClientPerMin)
      : undefined;
  const firstMinute = first ? `; over the first minute, the watch's initial list and the view's first frame included: ${fmt(first)}× fewer` : "";
  return [
    openTarget("the first of its order (which builds the order's index)", (o) => o.coldMs),
    openTarget("a second window of an order", (o) => o.warmMs),
    judge(`views at ${objects} objects, ${num(views?.eventsPerSec ?? 0)} ev/s: a visible row's change reaches its view ≤ ${VIEW_P99_MS} ms p99`, views?.p99Ms ?? undefined, (p99) => [
      `p99 ${fmt(p99)} ms, p50 ${fmt(views?.p50Ms ?? 0)} ms (${num(views?.latencySamples ?? 0)} row changes)`,
      p99 <= VIEW_P99_MS,
    ]),
    judge(`views at ${objects} objects: a view client receives ≥ ${VIEW_BYTES_RATIO}× fewer bytes than a full watch of the collection`, times, (t) => [
      `live: ${fmt((views?.bytesPerClientPerMin ?? 0) / 1024)} KB/min against ${fmt((views?.watchBytesPerMin ?? 0) / 1024)} KB/min, ${fmt(t)}× fewer${firstMinute}`,
      t >= VIEW_BYTES_RATIO,
    ]),
    socketViewTarget(objects, views, socketViews),
  ];
}

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
    const perEvent = (hub: { messagesPerEvent: number | null }) => (hub.messagesPerEvent === null ? "–" : fmt(hub.messagesPerEvent));
    out.push(
      judge(`hot S=${num(tree ?? 0)}, ${most} replicas, ${system}: the root sends ≤ ${most} messages per event (its replicas), not ${num(tree ?? 0)}`, root, (r) => [
        `sends to ${r.destinations} (${r.subscribers} subscribers of its own); ${perEvent(r)} messages per event committed`,
        r.destinations <= most && r.messagesPerEvent !== null && r.messagesPerEvent <= most * 1.05,
      ]),
    );
    const top = row && fullest(row);
    out.push({
      target: `hot S=${num(tree ?? 0)}, ${most} replicas, ${system}: no replica sends to more than its share (${num(share)} subscribers) per event`,
      measured:
        !row || !top
          ? "not measured"
          : `${row.replicasLive} replicas serving ${replicaCounts(row)}; the fullest sent ${top.messagesPerEvent === null ? "–" : fmt(top.messagesPerEvent)} messages per event${top.subscribers > share ? ` (${(top.subscribers / share).toFixed(1)}× its share: see the placement note below)` : ""}`,
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

/** What the hop added to p50, judged with a thread per tier (`split`), both kept up: else it is a queue. */
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

function bigHeapTargets(rows: readonly BigRow[]): TargetResult[] {
  const big = rows.filter((r) => r.system === "relay");
  if (big.length === 0) return [];
  const top = heapPeak(big);
  const objects = big[0]?.objects ?? 0;
  const unfinished = big.filter((r) => r.ms === null && r.heapMaxMB !== null && !r.step.startsWith("idle"));
  const full = big.filter((r) => r.step.startsWith("full list") && typeof r.firstByteMs === "number");
  const slowest = Math.max(...full.map((r) => r.firstByteMs as number));
  const stopped = unfinished.length > 0 ? `; unfinished: ${unfinished.map((r) => r.step).join(", ")}` : "";
  const firstBytes = full.map((r) => `${r.step.replace("full list, ", "")}: ${fmt(r.firstByteMs as number)} ms`).join("; ");
  return [
    judge(`big, ${num(objects)} pods: JS heap ≤ ${HEAP_TARGET_MB} MB after a collection, at every step`, top, (t) => [
      `at most ${fmt(t.mb)} MB (${t.row.step}), ${ofLimit(t.mb)}${stopped}`,
      t.mb <= HEAP_TARGET_MB && unfinished.length === 0,
    ]),
    judge(`big, ${num(objects)} pods: the first bytes of a full list through the relay within ${FIRST_BYTE_TARGET_MS} ms`, full.length > 0 ? full : undefined, () => [
      firstBytes,
      slowest <= FIRST_BYTE_TARGET_MS,
    ]),
  ];
}

function hubsHeapTargets(hubs: readonly HubsRow[]): TargetResult[] {
  const [first] = hubs;
  if (!first) return [];
  const target = `hubs, ${num(first.keys)} keys × ${num(first.objects)} pods in one workerd: JS heap ≤ ${HEAP_LIMIT_MB} MB`;
  return [judge(target, heapPeak(hubs), (top) => [`at most ${fmt(top.mb)} MB (${top.row.step})`, top.mb <= HEAP_LIMIT_MB && hubs.every((r) => r.ms !== null)])];
}

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
  const opened = slowest?.ms === null ? undefined : slowest;
  const timed = live?.p99Ms === null || live?.p99Ms === undefined ? undefined : { p99Ms: live.p99Ms, p50Ms: live.p50Ms ?? 0, note: live.note };
  const backAgain = back ? `; back, its hub held what changed there in ${back.ms === null ? "(not within the timeout)" : `${fmt(back.ms)} ms`}: ${back.note}` : "";
  const onStorm = (s: FleetRow): [string, boolean] => [
    `${s.ms === null ? `${s.note} before the timeout` : `${fmt(s.ms)} ms`}, ${s.upstreamRequests ?? 0} upstream requests`,
    s.ms !== null && s.upstreamRequests === 0,
  ];
  return [
    judge(`${prefix} one upstream watch per cluster`, watches.length === 0 ? undefined : watches, (w) => [
      `${w.join(", ")} open watches on the clusters' simulators (each counting its own) for ${first.clusters} clusters`,
      w.every((n) => n === first.clusters),
    ]),
    judge(`${prefix} a storm of resumes on the merged key catches up with no upstream request`, storm, onStorm),
    judge(`${prefix} a view on the merged key opens (its first frame) ≤ ${VIEW_OPEN_MS} ms`, opened, (s) => [
      `slowest ${fmt(s.ms ?? 0)} ms (${s.step.replace("view: first frame, ", "")}); all: ${opens.map((r) => fmt(r.ms ?? 0)).join(", ")} ms`,
      opens.every((r) => r.ms !== null && r.ms <= VIEW_OPEN_MS),
    ]),
    judge(`${prefix} a visible row's change reaches a view on the merged key ≤ ${VIEW_P99_MS} ms p99`, timed, (v) => [
      `p99 ${fmt(v.p99Ms)} ms, p50 ${fmt(v.p50Ms)} ms (${v.note})`,
      v.p99Ms <= VIEW_P99_MS,
    ]),
    {
      target: `${prefix} the merged key against the same subscribers on every cluster's own key (reported)`,
      measured: `merged: ${delivery(merged)}; per-cluster keys: ${delivery(perCluster)}${perCluster?.note ? ` (${perCluster.note})` : ""}`,
      met: undefined,
    },
    judge(`${prefix} a member down blocks nobody (reported)`, down, (d) => [`the others' delivery meanwhile: ${delivery(d)}${backAgain}`, undefined]),
  ];
}

/** One target check: the scenario whose rows (only those) it reads, and what it holds them to. */
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

export function checkTargets(rows: readonly Row[]): TargetResult[] {
  return TARGETS.flatMap(({ scenario, check }) => check(rows.filter((r) => r.scenario === scenario)));
}
