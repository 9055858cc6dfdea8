/**
 * @module
 * The run's tables, as markdown padded so that it also reads as plain text on a terminal.
 */
import { rowOf, type BigRow, type BurstRow, type FanoutRow, type FleetRow, type HubsRow, type KeysRow, type Results, type Row, type SnapshotRow, type SocketsRow, type StormRow } from "./rows.ts";
import { labelOf } from "./systems/catalog.ts";
import { RELAY_MODES, type SystemName, type Transport } from "./systems/system.ts";

type Cell = string | number | null | undefined;

export function table(headers: string[], rows: Cell[][]): string {
  const text = rows.map((r) => r.map((c) => (c === null || c === undefined ? "–" : typeof c === "number" ? num(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  return [line(headers), `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`, ...text.map(line)].join("\n");
}

const NOISE = "not measurable (noise)";

/** Memory added per subscriber (KB): a process's growth over what was added, so negative is noise. */
export function memoryGrowth(kb: number | null): number | string | null {
  return kb !== null && kb < 0 ? NOISE : kb;
}

/** `memoryGrowth` for a sentence: "257 KB", or that it was not measurable. */
export function memoryGrowthText(kb: number): string {
  return kb < 0 ? NOISE : `${num(kb)} KB`;
}

/** A figure as the targets and the sentences under the tables state it: up to one decimal. */
export const fmt = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** Three significant figures, with k/M past ten thousand. */
export function num(n: number): string {
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toPrecision(3)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toPrecision(3)}k`;
  return n.toLocaleString("en-US", { maximumFractionDigits: Math.abs(n) < 10 ? 2 : Math.abs(n) < 100 ? 1 : 0 });
}

export const rowsOf = <T extends Row>(results: Results, scenario: T["scenario"]): T[] => results.rows.filter((r): r is T => r.scenario === scenario);

type Columns<T> = ReadonlyArray<readonly [string, (row: T) => Cell]>;
export const columns = <T>(rows: readonly T[], cols: Columns<T>): string =>
  table(
    cols.map(([header]) => header),
    rows.map((r) => cols.map(([, cell]) => cell(r))),
  );

const kb = (bytes: number | null | undefined) => (typeof bytes === "number" ? bytes / 1024 : null);
const mb = (bytes: number | null | undefined) => (typeof bytes === "number" ? bytes / 2 ** 20 : null);
const cpu = (r: { loadGenCpuPct: number; loadGenMaxCpuPct: number }) => `${num(r.loadGenCpuPct)} (${num(r.loadGenMaxCpuPct)})`;
const receiptColumns: Columns<FanoutRow | BurstRow> = [
  ["p50 ms", (r) => r.p50Ms],
  ["p99 ms", (r) => r.p99Ms],
  ["max ms", (r) => r.maxMs],
];
const loadColumns: Columns<FanoutRow | BurstRow | StormRow> = [
  ["server CPU %", (r) => r.serverCpuPct],
  ["API server CPU %", (r) => r.upstreamCpuPct],
  ["loadgen CPU % (busiest)", cpu],
  ["others' CPU %", (r) => r.otherLoadPct],
];

export const fanoutTable = (rows: FanoutRow[]): string =>
  columns(rows, [
    ["S", (r) => r.subscribers],
    ["ev/s", (r) => r.eventsPerSec],
    ["system", (r) => r.system],
    ["transport", (r) => r.transport],
    ["delivered/s", (r) => r.deliveredPerSec],
    ["% of S×upstream", (r) => r.deliveredPct],
    ["KB/event", (r) => kb(r.eventBytes)],
    ["wire KB/event", (r) => kb(r.wireEventBytes)],
    ["B/MODIFIED", (r) => r.modifiedBytes],
    ["events/msg", (r) => r.eventsPerMessage],
    ...receiptColumns,
    ["upstream conns", (r) => r.upstreamConnections],
    ["re-watches", (r) => r.upstreamWatchRequests],
    ["CPU µs/event", (r) => r.cpuUsPerEvent],
    ...loadColumns,
    ["RSS/sub KB", (r) => memoryGrowth(r.memPerSubscriberKB)],
    ["heap/sub KB", (r) => memoryGrowth(r.heapPerSubscriberKB)],
    ["cut-offs", (r) => r.cutOffs],
  ]);

const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : "–");

/** What the relay's rows on each transport are set against: delivery, and (the first four) CPU per event. */
const COMPARED: Record<Transport, Array<[SystemName, Transport]>> = {
  ws: [
    ["relay", "ws"],
    ["workerd-floor", "ws"],
    ["node-relay", "ws"],
    ["raw-ws", "ws"],
    ["direct", "http"],
    ["relay-proxied", "ws"],
  ],
  http: [
    ["relay", "ws"],
    ["node-relay", "http"],
    ["raw-http", "http"],
    ["direct", "http"],
    ["relay-proxied", "http"],
  ],
};

export function fanoutRatios(rows: FanoutRow[], transport: Transport): string {
  const [delivered, cpu] = [COMPARED[transport], COMPARED[transport].slice(0, 4)];
  const cells: Cell[][] = [];
  for (const relay of rows.filter((r) => RELAY_MODES.includes(r.system) && r.transport === transport)) {
    const at = ([system, on]: [SystemName, Transport]) =>
      system === relay.system && on === relay.transport ? undefined : rowOf(rows, system, on, (r) => r.subscribers === relay.subscribers && r.eventsPerSec === relay.eventsPerSec);
    cells.push([
      relay.subscribers,
      relay.eventsPerSec,
      relay.system,
      ...delivered.map((s) => ratio(relay.deliveredPerSec, at(s)?.deliveredPerSec)),
      ...cpu.map((s) => ratio(relay.cpuUsPerEvent, at(s)?.cpuUsPerEvent)),
    ]);
  }
  return table(["S", "ev/s", "system", ...delivered.map((s) => `delivered ÷ ${labelOf(...s)}`), ...cpu.map((s) => `CPU/event ÷ ${labelOf(...s)}`)], cells);
}

export const burstTable = (rows: BurstRow[]): string =>
  columns(rows, [
    ["S", (r) => r.subscribers],
    ["changes", (r) => r.changes],
    ["upstream", (r) => (r.chunkPerEvent ? "a chunk per event" : "one chunk")],
    ["system", (r) => r.system],
    ["transport", (r) => r.transport],
    ["delivered/s", (r) => r.deliveredPerSec],
    [
      "÷ raw",
      (r) =>
        ratio(
          r.deliveredPerSec,
          rowOf(rows, r.transport === "ws" ? "raw-ws" : "raw-http", r.transport, (b) => b.subscribers === r.subscribers && !b.chunkPerEvent === !r.chunkPerEvent)?.deliveredPerSec,
        ),
    ],
    ["delivered %", (r) => r.deliveredPct],
    ["caught up", (r) => r.caughtUp],
    ["first change → last receipt ms", (r) => r.durationMs],
    ["KB/event", (r) => kb(r.eventBytes)],
    ["events/msg", (r) => r.eventsPerMessage],
    ...receiptColumns,
    ["CPU µs/event", (r) => r.cpuUsPerEvent],
    ...loadColumns,
    ["cut-offs", (r) => r.cutOffs],
  ]);

export const stormTable = (rows: StormRow[]): string =>
  columns(rows, [
    ["system", (r) => r.system],
    ["transport", (r) => r.transport],
    ["S", (r) => r.subscribers],
    ["objects", (r) => r.objects],
    ["missed", (r) => r.missedEvents],
    ["all caught up ms", (r) => r.catchUpMs],
    ["p50 ms", (r) => r.catchUpP50Ms],
    ["caught up", (r) => r.caughtUp],
    ["KB per subscriber", (r) => kb(r.bytesPerSubscriber)],
    ["upstream requests", (r) => r.upstreamRequests],
    ["watch/list", (r) => `${r.upstreamWatches}/${r.upstreamLists}`],
    ...loadColumns,
    ["idle again after ms", (r) => r.settledMs],
  ]);

/** `per`: who the offered rate is multiplied by (S subscribers, W watches). */
const deliveryColumns = (per: string): Columns<KeysRow | SocketsRow> => [
  ["delivered/s", (r) => r.deliveredPerSec],
  [`% of ${per}×upstream`, (r) => r.deliveredPct],
  ["events/msg", (r) => r.eventsPerMessage],
  ["p50 ms", (r) => r.p50Ms],
  ["p99 ms", (r) => r.p99Ms],
  ["CPU µs/event", (r) => r.cpuUsPerEvent],
  ["server CPU %", (r) => r.serverCpuPct],
];

export const keysTable = (rows: KeysRow[]): string =>
  columns(rows, [
    ["system", (r) => r.system],
    ["transport", (r) => r.transport],
    ["keys", (r) => r.keys],
    ["subscribers", (r) => r.subscribers],
    ["upstream watches", (r) => r.upstreamWatches],
    ["RSS/key KB", (r) => memoryGrowth(r.memPerKeyKB)],
    ["heap/key KB", (r) => memoryGrowth(r.heapPerKeyKB)],
    ...deliveryColumns("S"),
    ["API server CPU %", (r) => r.upstreamCpuPct],
    ["others' CPU %", (r) => r.otherLoadPct],
  ]);

export const socketsTable = (rows: SocketsRow[]): string =>
  columns(rows, [
    ["system", (r) => `${r.system}${r.muxWorkerd ? ", own workerd" : ""}`],
    ["clients", (r) => r.clients],
    ["watches/client", (r) => r.watchesPerClient],
    ["WebSockets", (r) => r.sockets],
    ["upstream watches", (r) => r.upstreamWatches],
    ["RSS/client KB", (r) => memoryGrowth(r.memPerClientKB)],
    ["heap/client KB", (r) => memoryGrowth(r.heapPerClientKB)],
    ...deliveryColumns("W"),
    ["cut off", (r) => r.cutOffs],
    ["others' CPU %", (r) => r.otherLoadPct],
  ]);

export const snapshotTable = (rows: SnapshotRow[]): string =>
  columns(rows, [
    ["system", (r) => r.system],
    ["objects", (r) => r.objects],
    ["list", snapshotKind],
    ["first list ms", (r) => (r.list === "full" || r.list === undefined ? r.coldMs : null)],
    ["list ms (median)", (r) => r.ms],
    ["p99 ms", (r) => r.p99Ms],
    ["first byte ms", (r) => r.firstByteMs],
    ["first byte p99 ms", (r) => r.firstByteP99Ms],
    ["MB", (r) => mb(r.bytes)],
    ["MB/s", (r) => r.MBps],
    ["CPU ms a list", (r) => r.cpuMs],
    ["upstream requests (repeats)", (r) => r.upstreamRequests],
    ["of them lists", (r) => r.upstreamLists],
  ]);

function snapshotKind(r: SnapshotRow): string {
  const timed = { consistent: "resourceVersion unset", any: "resourceVersion=0" } as Record<string, string>;
  const kind = r.list === "paged" ? `paged, limit=${r.limit}` : timed[r.list] ? `whole, ${timed[r.list]}, ${r.samples} timed` : "whole";
  return r.coding ? `${kind}, gzip` : kind;
}

const costColumns: Columns<BigRow | HubsRow> = [
  ["JS heap max MB", (r) => r.heapMaxMB],
  ["JS heap after MB", (r) => r.heapAfterMB],
  ["workerd RSS max MB", (r) => r.rssMaxMB],
  ["rows written", (r) => r.rowsWritten],
  ["storage MB", (r) => r.storageMB],
  ["lines in memory MB", (r) => r.linesMB],
];

export const bigTable = (rows: BigRow[]): string =>
  columns(rows, [
    ["step", (r) => r.step],
    ["system", (r) => r.system],
    ["transport", (r) => r.transport],
    ["S", (r) => r.subscribers],
    ["ms", (r) => r.ms],
    ["first byte ms", (r) => r.firstByteMs],
    ["MB", (r) => mb(r.bytes)],
    ["MB/s", (r) => r.MBps],
    ["upstream requests", (r) => r.upstreamRequests],
    ...costColumns,
    ["notes", bigNotes],
  ]);

const bigNotes = (r: BigRow) =>
  [
    r.deliveredPerSec === undefined ? "" : `${num(r.deliveredPerSec)} events/s delivered, p99 ${r.p99Ms ?? "–"} ms, ${r.cpuUsPerEvent ?? "–"} µs CPU per event`,
    r.deliveredPerSec === undefined && typeof r.cpuUsPerEvent === "number" ? `${r.cpuUsPerEvent} µs CPU per event delivered` : "",
    r.note ?? "",
  ]
    .filter((note) => note !== "")
    .join("; ");

export const hubsTable = (rows: HubsRow[]): string =>
  columns(rows, [
    ["step", (r) => r.step],
    ["keys", (r) => r.keys],
    ["objects a key", (r) => r.objects],
    ["subscribers", (r) => r.subscribers],
    ["ms", (r) => r.ms],
    ["upstream watches", (r) => r.upstreamWatches],
    ["delivered/s", (r) => r.deliveredPerSec],
    ["p99 ms", (r) => r.p99Ms],
    ["CPU µs/event", (r) => r.cpuUsPerEvent],
    ["JS heap max KB per hub", (r) => (r.heapMaxMB === null ? null : (r.heapMaxMB * 1024) / r.keys)],
    ...costColumns,
  ]);

export const fleetTable = (rows: FleetRow[]): string =>
  columns(rows, [
    ["step", (r) => r.step],
    ["transport", (r) => r.transport],
    ["clusters", (r) => r.clusters],
    ["objects", (r) => r.objects],
    ["S", (r) => r.subscribers],
    ["watches", (r) => r.watches],
    ["ms", (r) => r.ms],
    ["first byte ms", (r) => r.firstByteMs],
    ["MB", (r) => mb(r.bytes)],
    ["upstream watches", (r) => r.upstreamWatches],
    ["upstream requests", (r) => r.upstreamRequests],
    ["delivered/s", (r) => r.deliveredPerSec],
    ["p50 ms", (r) => r.p50Ms],
    ["p99 ms", (r) => r.p99Ms],
    ["CPU µs/event", (r) => r.cpuUsPerEvent],
    ["notes", (r) => r.note],
  ]);
