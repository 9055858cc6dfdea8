/**
 * @module
 * `bench/results/latest.json`: flat rows, one per (scenario, system, transport, size), and the
 * lookups into them the report and the targets share. CPU is % of one core.
 */
import type { Machine } from "./machine.ts";
import type { Mode, ProfileWorkload, Sizes } from "./modes.ts";
import { percentileOf } from "./stats.ts";
import type { SystemName, Transport } from "./systems/system.ts";

export interface TargetResult {
  target: string;
  measured: string;
  /** `undefined` when the run did not measure it (a system or scenario left out). */
  met: boolean | undefined;
}

interface Base {
  system: SystemName;
  transport: Transport;
  /** With `--rounds`: every round's measurement, in order (this row is the median one). */
  rounds?: Row[];
}

interface Common extends Base {
  /** CPU of the system's own processes (for `direct`, the API server's). */
  serverCpuPct: number;
  upstreamCpuPct: number;
  loadGenCpuPct: number;
  loadGenMaxCpuPct: number;
  /** CPU of processes outside the bench meanwhile (the machine is shared). */
  otherLoadPct: number;
}

interface Receipt {
  /** Mean size of a delivered event: the relay strips `managedFields` by default, the baselines forward objects whole. */
  eventBytes: number | null;
  wireEventBytes: number | null;
  /** Bytes per MODIFIED received (as a delta when it came as one). */
  modifiedBytes: number | null;
  eventsPerMessage: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** µs: unlike events/s, independent of how much of the shared machine the system got. */
  cpuUsPerEvent: number | null;
  cutOffs: number;
  errors: number;
}

interface Delivery extends Receipt {
  eventsPerSec: number;
  upstreamEventsPerSec: number;
  deliveredPerSec: number;
  deliveredMBps: number;
  deliveredPct: number;
  /** Subscribers short of the window's last resourceVersion `reachEndMs` after it (null: not waited for). */
  behindAtEnd: number | null;
}

export interface FanoutRow extends Common, Delivery {
  scenario: "fanout";
  subscribers: number;
  upstreamConnections: number;
  upstreamWatchRequests: number;
  /** Idle memory, before any load, at `memorySubscribers` only: with one subscriber and with all. */
  memBeforeMB: number | null;
  memAfterMB: number | null;
  memPerSubscriberKB: number | null;
  heapPerSubscriberKB: number | null;
}

export interface BurstRow extends Common, Receipt {
  scenario: "burst";
  subscribers: number;
  changes: number;
  /** The upstream wrote each change as a chunk of its own (absent: all together, in one). */
  chunkPerEvent?: boolean;
  delivered: number;
  deliveredPct: number;
  caughtUp: number;
  durationMs: number | null;
  deliveredPerSec: number;
}

export interface StormRow extends Common {
  scenario: "storm";
  subscribers: number;
  missedEvents: number;
  catchUpMs: number | null;
  catchUpP50Ms: number | null;
  caughtUp: number;
  objects: number;
  bytesPerSubscriber: number | null;
  upstreamRequests: number;
  upstreamWatches: number;
  upstreamLists: number;
  errors: number;
  settledMs: number | null;
}

export interface KeysRow extends Common, Delivery {
  scenario: "keys";
  keys: number;
  subscribersPerKey: number;
  subscribers: number;
  upstreamWatches: number;
  /** Resident memory added per key (its hub or watch, and its subscribers). */
  memPerKeyKB: number;
  heapPerKeyKB: number;
}

export interface SocketsRow extends Common, Delivery {
  scenario: "sockets";
  clients: number;
  watchesPerClient: number;
  sockets: number;
  upstreamWatches: number;
  memPerClientKB: number;
  heapPerClientKB: number;
  /** Measured on a relay whose mux objects run in a second workerd (`scripts/runtime.ts`). */
  muxWorkerd?: true;
}

export interface SnapshotRow extends Base {
  scenario: "snapshot";
  transport: "http";
  objects: number;
  /** Whole, paged, or timed in pairs: `resourceVersion` unset (consistent) and `=0` (any). */
  list: "full" | "paged" | "consistent" | "any";
  limit?: number;
  /** Asked for gzip and sent it (`bytes` are then the coded bytes); absent: uncompressed. */
  coding?: "gzip";
  cpuMs?: number;
  /** First list (the relay builds its hub: an upstream list); then the median of the repeats, to the last byte. */
  coldMs: number;
  ms: number;
  firstByteMs?: number;
  bytes: number;
  MBps: number;
  /** Upstream requests made by the repeated (warm) lists. */
  upstreamRequests: number;
  /** Of those, lists (a consistent read's probe is a watch-list; a list would be a relist). */
  upstreamLists?: number;
  /** Consistent and any-state lists: how many were timed (`ms` and `firstByteMs` are their medians), and their p99s. */
  samples?: number;
  p99Ms?: number;
  firstByteP99Ms?: number;
}

/** One hub of a hot key's tree over a measurement (`/_relay/stats`, and `?replica=` for a replica). */
export interface TreeHub {
  /** `root`, or the replica's name after its root's (`local-1`). */
  hub: string;
  /** Its own (the root's: not its replicas' watches). */
  subscribers: number;
  /** Where it sends each event: its subscribers, and for the root its replicas too. */
  destinations: number;
  messagesPerEvent: number | null;
}

/** One hot key's subscribers on one hub (`replicas` 0) or spread over replica hubs; then a storm. */
export interface HotRow extends Common, Delivery {
  scenario: "hot";
  subscribers: number;
  replicas: number;
  replicasLive: number;
  replicaWorkerd?: true;
  /** The root first, then each replica. */
  hubs: TreeHub[];
  upstreamWatches: number;
  refused: number;
  missedEvents: number | null;
  catchUpMs: number | null;
  catchUpP50Ms: number | null;
  caughtUp: number | null;
  stormUpstreamRequests: number | null;
  stormErrors: number | null;
  stormOnReplicas: number | null;
}

/** A view's first frame, timed: the first view of its order (which builds the order's index), then a second window of it. */
export interface ViewOpen {
  sort: string;
  filter: string | null;
  coldMs: number;
  warmMs: number;
  socketMs?: number;
  bytes: number;
}

/** One collection under churn, read by one kind of client a window (`measurement`). */
export interface ViewsRow extends Base, Pick<Common, "serverCpuPct" | "upstreamCpuPct" | "loadGenCpuPct" | "otherLoadPct">, Pick<Receipt, "p50Ms" | "p99Ms" | "maxMs" | "cpuUsPerEvent" | "errors"> {
  scenario: "views";
  /** `ws`: the live views as ops on relay sockets. */
  transport: "http" | "ws";
  objects: number;
  measurement: "watch" | "views" | "socket-views" | "refetch";
  clients: number;
  eventsPerSec: number;
  upstreamEventsPerSec: number;
  deliveredPerSec: number;
  messagesPerEvent: number | null;
  changesPerEvent: number | null;
  bytesPerClientPerMin: number | null;
  watchBytesPerMin: number | null;
  latencySamples: number;
  rowsWrittenPerEvent: number | null;
  /** On the `views` row: the collection listed through the relay (the first list builds the hub), and views' first frames by order. */
  listColdMs: number | null;
  listMs: number | null;
  listBytes: number | null;
  opens: ViewOpen[] | null;
}

/** What a step took: the isolate's JS heap (sampled after full collections), workerd's RSS, the hub's writes. */
export interface StepCost {
  heapMaxMB: number | null;
  heapAfterMB: number | null;
  rssMaxMB: number | null;
  rowsWritten: number | null;
  storageMB: number | null;
  linesMB: number | null;
}

/** A step of a scenario that measures one by one what a hub does. */
interface Step extends Base {
  step: string;
  objects: number;
  /** How long the step took; null if it did not finish. */
  ms: number | null;
  deliveredPerSec?: number;
  p99Ms?: number | null;
  cpuUsPerEvent?: number | null;
}

/** `big`: one collection through one hub, step by step; `direct`: the API server's own lists. */
export interface BigRow extends Step, StepCost {
  scenario: "big";
  subscribers?: number;
  firstByteMs?: number | null;
  bytes?: number | null;
  MBps?: number | null;
  pages?: number;
  upstreamRequests?: number;
  /** The hub's slowest answer to the step's polls of its stats (every 250 ms, as it relists): how long its thread was held at most. */
  slowestAnswerMs?: number;
  note?: string;
}

/** `hubs`: `keys` hubs of `objects` pods each in one workerd, a subscriber on each. */
export interface HubsRow extends Step, StepCost {
  scenario: "hubs";
  keys: number;
  subscribers: number;
  upstreamWatches: number;
}

/** `fleet`: one watch across `clusters` simulated clusters (a merged key), step by step. */
export interface FleetRow extends Step {
  scenario: "fleet";
  clusters: number;
  subscribers?: number;
  /** Watches they held (subscribers × clusters on per-cluster keys). */
  watches?: number;
  firstByteMs?: number | null;
  bytes?: number | null;
  upstreamWatches?: number;
  upstreamRequests?: number;
  p50Ms?: number | null;
  serverCpuPct?: number;
  errors?: number;
  note?: string;
}

export type Row = FanoutRow | BurstRow | StormRow | KeysRow | SocketsRow | SnapshotRow | HotRow | ViewsRow | BigRow | HubsRow | FleetRow;

export interface Skipped {
  scenario: Row["scenario"];
  system: SystemName;
  transport: Transport;
  subscribers: number;
  eventsPerSec: number;
  reason: string;
}

export interface Results {
  machine: Machine;
  mode: Mode;
  sizes: Sizes;
  command: string;
  startedAt: string;
  durationMs: number;
  /** How many times each scenario was measured (`--rounds`); 1 when absent. */
  rounds?: number;
  /** The processes measured, so a test can check none outlived the run. */
  processes: Array<{ role: string; pid: number }>;
  rows: Row[];
  skipped: Skipped[];
  /** CPU profiles of the relay under the two kinds of load; empty with `--no-profile`. */
  profiles: ProfileSummary[];
  /** Later runs (`--merge`) whose rows (and profiles) replaced some of this run's. */
  amendments?: Array<{ command: string; startedAt: string; durationMs: number; scenarios: Array<Row["scenario"]>; rounds?: number; profiles?: boolean; machine?: Machine }>;
}

export function rowOf<T extends Row>(rows: readonly T[], system: SystemName, transport: Transport, matches: (row: T) => boolean = () => true): T | undefined {
  return rows.find((r) => r.system === system && r.transport === transport && matches(r));
}

/** A system's idle memory per subscriber: at `size` if measured there, else at the largest size measured. */
export function idleMemory(rows: readonly FanoutRow[], system: SystemName, size: number): { subscribers: number; rssKB: number; heapKB: number } | undefined {
  const measured = rows.filter((r) => r.system === system && r.memPerSubscriberKB !== null && r.heapPerSubscriberKB !== null);
  const row = measured.find((r) => r.subscribers === size) ?? measured.sort((a, b) => b.subscribers - a.subscribers)[0];
  return row ? { subscribers: row.subscribers, rssKB: row.memPerSubscriberKB as number, heapKB: row.heapPerSubscriberKB as number } : undefined;
}

export interface ProfileSummary {
  workload: ProfileWorkload;
  durationMs: number;
  deliveredPerSec: number;
  /** CPU time of the relay's workerd process meanwhile (all threads, kernel time included). */
  processCpuMs: number;
  isolateBusyMs: number;
  isolateIdleMs: number;
  /** Process CPU no isolate sample accounts for: workerd's work outside the isolate, and the kernel's. */
  outsideIsolateMs: number;
  /** Share of the wall time workerd's main thread waited in fsync; null where `/proc` would not say. */
  syncWaitPct: number | null;
  /** Busy time by source module (native functions folded into their caller), largest first. */
  modules: Array<{ module: string; ms: number; pctOfBusy: number }>;
  functions: Array<{ name: string; module: string; ms: number; pctOfBusy: number }>;
  stages: Array<{ stage: Stage; ms: number; pctOfBusy: number; usPerEvent: number }>;
}

export type Stage =
  | "fan-out loop (JS)"
  | "relay socket's hop (mux object)"
  | "sending (native: WebSocket send, HTTP stream)"
  | "acknowledgements"
  | "upstream intake (read, parse, cache, window)"
  | "SQLite writes"
  | "workerd natives under the lock"
  | "workerd natives with no JS caller"
  | "garbage collection"
  | "other";

/** The hot sizes the issue names: the tree's, and the hop's. */
const TREE_SUBSCRIBERS = 2000;
const HOP_SUBSCRIBERS = 1000;

export const rootOf = (row: HotRow) => row.hubs.find((h) => h.hub === "root");
export const replicasOf = (row: HotRow) => row.hubs.filter((h) => h.hub !== "root");
export const fullest = (row: HotRow) => replicasOf(row).sort((a, b) => b.subscribers - a.subscribers)[0];

/** The row of a system at a size and replica count, on one workerd or (`split`) with the replicas in a second. */
export const atOf =
  (rows: readonly HotRow[]) =>
  (system: SystemName, subscribers: number | undefined, replicas: number, split = false): HotRow | undefined =>
    rows.find((r) => r.system === system && r.subscribers === subscribers && r.replicas === replicas && (r.replicaWorkerd ?? false) === split);

/** Both rows of a pair measured, and each delivered what was asked (95%): its p50s are not a saturated thread's queue. */
export const keptUp = (pair: ReadonlyArray<HotRow | undefined>): pair is readonly [HotRow, HotRow] => pair.every((r) => r !== undefined && r.deliveredPct >= 95);

/** The tree's size (the main size, the largest measured) and the hop's (the smaller), as a run measured them. */
export function sizesOf(rows: readonly HotRow[]) {
  const sizes = [...new Set(rows.map((r) => r.subscribers))].sort((a, b) => b - a);
  const tree = sizes.includes(TREE_SUBSCRIBERS) ? TREE_SUBSCRIBERS : sizes[0];
  const hop = sizes.includes(HOP_SUBSCRIBERS) ? HOP_SUBSCRIBERS : (sizes[1] ?? sizes[0]);
  return { tree, hop };
}

/** Each round's p50 without replicas and with: back to back, so least disturbed by noise. */
function roundPairs(solo: HotRow, tree: HotRow): Array<[number, number]> {
  const [a, b] = solo.rounds && tree.rounds && solo.rounds.length === tree.rounds.length ? [solo.rounds as HotRow[], tree.rounds as HotRow[]] : [[solo], [tree]];
  return a.flatMap((row, i) => {
    const [x, y] = [row.p50Ms, b[i]?.p50Ms];
    return x === null || x === undefined || y === null || y === undefined ? [] : [[x, y] as [number, number]];
  });
}

/** What the hop added to p50: the median of the rounds' differences, and each round's pair. */
export function hopAdded(solo: HotRow, tree: HotRow): { pairs: Array<[number, number]>; added: number | undefined } {
  const pairs = roundPairs(solo, tree);
  const differences = pairs.map(([a, b]) => b - a);
  return { pairs, added: percentileOf(differences, 50) };
}

export function windowsOf(rows: readonly ViewsRow[]) {
  const of = (m: ViewsRow["measurement"]) => rows.find((r) => r.measurement === m);
  return { watch: of("watch"), views: of("views"), socketViews: of("socket-views"), refetch: of("refetch") };
}

export function heapPeak<T extends BigRow | HubsRow>(rows: readonly T[]): { row: T; mb: number } | undefined {
  let best: { row: T; mb: number } | undefined;
  for (const row of rows) if (row.heapMaxMB !== null && (!best || row.heapMaxMB > best.mb)) best = { row, mb: row.heapMaxMB };
  return best;
}
