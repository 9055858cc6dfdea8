/**
 * @module
 * The run's tables, one per scenario plus the relay's ratios to every other system (for each of
 * its framings, on each transport), as markdown padded so that it also reads as plain text on
 * a terminal.
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

/**
 * Memory added per subscriber or per key (KB), for a table cell. It is the growth of a whole
 * process divided by what was added, so when what was added is small beside the process's own
 * swings (a collection, an allocator returning pages) the figure can come out negative: that
 * says the measurement could not see it, not that memory shrank.
 */
export function memoryGrowth(kb: number | null): number | string | null {
  return kb !== null && kb < 0 ? NOISE : kb;
}

/** `memoryGrowth` for a sentence: "257 KB", or that it was not measurable. */
export function memoryGrowthText(kb: number): string {
  return kb < 0 ? NOISE : `${num(kb)} KB`;
}

/** Three significant figures, with k/M past ten thousand. */
/** A figure as the targets and the sentences under the tables state it: up to one decimal. */
export const fmt = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

export function num(n: number): string {
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toPrecision(3)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toPrecision(3)}k`;
  return n.toLocaleString("en-US", { maximumFractionDigits: Math.abs(n) < 10 ? 2 : Math.abs(n) < 100 ? 1 : 0 });
}

export const rowsOf = <T extends Row>(results: Results, scenario: T["scenario"]): T[] => results.rows.filter((r): r is T => r.scenario === scenario);

const cpu = (total: number, busiest: number) => `${num(total)} (${num(busiest)})`;

export function fanoutTable(rows: FanoutRow[]): string {
  return table(
    [
      "S",
      "ev/s",
      "system",
      "transport",
      "delivered/s",
      "% of S×upstream",
      "KB/event",
      "wire KB/event",
      "B/MODIFIED",
      "events/msg",
      "p50 ms",
      "p99 ms",
      "max ms",
      "upstream conns",
      "re-watches",
      "CPU µs/event",
      "server CPU %",
      "API server CPU %",
      "loadgen CPU % (busiest)",
      "others' CPU %",
      "RSS/sub KB",
      "heap/sub KB",
      "cut-offs",
    ],
    rows.map((r) => [
      r.subscribers,
      r.eventsPerSec,
      r.system,
      r.transport,
      r.deliveredPerSec,
      r.deliveredPct,
      r.eventBytes === null ? null : r.eventBytes / 1024,
      // Absent from runs from before it was counted.
      typeof r.wireEventBytes === "number" ? r.wireEventBytes / 1024 : null,
      r.modifiedBytes,
      r.eventsPerMessage,
      r.p50Ms,
      r.p99Ms,
      r.maxMs,
      r.upstreamConnections,
      r.upstreamWatchRequests,
      r.cpuUsPerEvent,
      r.serverCpuPct,
      r.upstreamCpuPct,
      cpu(r.loadGenCpuPct, r.loadGenMaxCpuPct),
      r.otherLoadPct,
      memoryGrowth(r.memPerSubscriberKB),
      memoryGrowth(r.heapPerSubscriberKB),
      r.cutOffs,
    ]),
  );
}

const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : "–");

/** What the relay's rows on each transport are set against: a system on a transport, named as its column says. */
const COMPARED: Record<Transport, { delivered: Array<[SystemName, Transport]>; cpu: Array<[SystemName, Transport]> }> = {
  ws: {
    delivered: [
      ["relay", "ws"],
      ["workerd-floor", "ws"],
      ["node-relay", "ws"],
      ["raw-ws", "ws"],
      ["direct", "http"],
      ["relay-proxied", "ws"],
    ],
    cpu: [
      ["relay", "ws"],
      ["workerd-floor", "ws"],
      ["node-relay", "ws"],
      ["raw-ws", "ws"],
    ],
  },
  http: {
    delivered: [
      ["relay", "ws"],
      ["node-relay", "http"],
      ["raw-http", "http"],
      ["direct", "http"],
      ["relay-proxied", "http"],
    ],
    cpu: [
      ["relay", "ws"],
      ["node-relay", "http"],
      ["raw-http", "http"],
      ["direct", "http"],
    ],
  },
};

/** For each size and rate: each relay framing's delivery and CPU per event over `transport` against each other system's. */
export function fanoutRatios(rows: FanoutRow[], transport: Transport): string {
  const { delivered, cpu } = COMPARED[transport];
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

/** Each burst, with its delivery rate against the raw baseline's on the same transport. */
export function burstTable(rows: BurstRow[]): string {
  return table(
    [
      "S",
      "changes",
      "upstream",
      "system",
      "transport",
      "delivered/s",
      "÷ raw",
      "delivered %",
      "caught up",
      "first change → last receipt ms",
      "KB/event",
      "events/msg",
      "p50 ms",
      "p99 ms",
      "max ms",
      "CPU µs/event",
      "server CPU %",
      "API server CPU %",
      "loadgen CPU % (busiest)",
      "others' CPU %",
      "cut-offs",
    ],
    rows.map((r) => [
      r.subscribers,
      r.changes,
      r.chunkPerEvent ? "a chunk per event" : "one chunk",
      r.system,
      r.transport,
      r.deliveredPerSec,
      ratio(
        r.deliveredPerSec,
        rowOf(rows, r.transport === "ws" ? "raw-ws" : "raw-http", r.transport, (b) => b.subscribers === r.subscribers && !b.chunkPerEvent === !r.chunkPerEvent)?.deliveredPerSec,
      ),
      r.deliveredPct,
      r.caughtUp,
      r.durationMs,
      r.eventBytes === null ? null : r.eventBytes / 1024,
      r.eventsPerMessage,
      r.p50Ms,
      r.p99Ms,
      r.maxMs,
      r.cpuUsPerEvent,
      r.serverCpuPct,
      r.upstreamCpuPct,
      cpu(r.loadGenCpuPct, r.loadGenMaxCpuPct),
      r.otherLoadPct,
      r.cutOffs,
    ]),
  );
}

export function stormTable(rows: StormRow[]): string {
  return table(
    [
      "system",
      "transport",
      "S",
      "objects",
      "missed",
      "all caught up ms",
      "p50 ms",
      "caught up",
      "KB per subscriber",
      "upstream requests",
      "watch/list",
      "server CPU %",
      "API server CPU %",
      "loadgen CPU % (busiest)",
      "others' CPU %",
      "idle again after ms",
    ],
    rows.map((r) => [
      r.system,
      r.transport,
      r.subscribers,
      r.objects,
      r.missedEvents,
      r.catchUpMs,
      r.catchUpP50Ms,
      r.caughtUp,
      r.bytesPerSubscriber == null ? null : r.bytesPerSubscriber / 1024, // runs from before it was measured have none
      r.upstreamRequests,
      `${r.upstreamWatches}/${r.upstreamLists}`,
      r.serverCpuPct,
      r.upstreamCpuPct,
      cpu(r.loadGenCpuPct, r.loadGenMaxCpuPct),
      r.otherLoadPct,
      r.settledMs,
    ]),
  );
}

/** The live-delivery columns the keys and sockets tables share; `per` names who the offered rate is multiplied by (S subscribers, W watches). */
const deliveryHeaders = (per: string) => ["delivered/s", `% of ${per}×upstream`, "events/msg", "p50 ms", "p99 ms", "CPU µs/event", "server CPU %"];
const deliveryCells = (r: KeysRow | SocketsRow): Cell[] => [r.deliveredPerSec, r.deliveredPct, r.eventsPerMessage, r.p50Ms, r.p99Ms, r.cpuUsPerEvent, r.serverCpuPct];

export function keysTable(rows: KeysRow[]): string {
  return table(
    ["system", "transport", "keys", "subscribers", "upstream watches", "RSS/key KB", "heap/key KB", ...deliveryHeaders("S"), "API server CPU %", "others' CPU %"],
    rows.map((r) => [
      r.system,
      r.transport,
      r.keys,
      r.subscribers,
      r.upstreamWatches,
      memoryGrowth(r.memPerKeyKB),
      memoryGrowth(r.heapPerKeyKB),
      ...deliveryCells(r),
      r.upstreamCpuPct,
      r.otherLoadPct,
    ]),
  );
}

export function socketsTable(rows: SocketsRow[]): string {
  return table(
    ["system", "clients", "watches/client", "WebSockets", "upstream watches", "RSS/client KB", "heap/client KB", ...deliveryHeaders("W"), "cut off", "others' CPU %"],
    rows.map((r) => [
      r.system,
      r.clients,
      r.watchesPerClient,
      r.sockets,
      r.upstreamWatches,
      memoryGrowth(r.memPerClientKB),
      memoryGrowth(r.heapPerClientKB),
      ...deliveryCells(r),
      r.cutOffs,
      r.otherLoadPct,
    ]),
  );
}

export function snapshotTable(rows: SnapshotRow[]): string {
  return table(
    ["system", "objects", "list", "first list ms", "list ms (median)", "p99 ms", "first byte ms", "first byte p99 ms", "MB", "MB/s", "CPU ms a list", "upstream requests (repeats)", "of them lists"],
    rows.map((r) => [
      r.system,
      r.objects,
      snapshotKind(r),
      r.list === "full" || r.list === undefined ? r.coldMs : null,
      r.ms,
      r.p99Ms,
      r.firstByteMs,
      r.firstByteP99Ms,
      r.bytes / 2 ** 20,
      r.MBps,
      r.cpuMs,
      r.upstreamRequests,
      r.upstreamLists,
    ]),
  );
}

/** How a snapshot row's list was read; runs from before paged lists were measured have only whole ones. */
function snapshotKind(r: SnapshotRow): string {
  return r.coding ? `${listKind(r)}, gzip` : listKind(r);
}

function listKind(r: SnapshotRow): string {
  switch (r.list) {
    case "paged":
      return `paged, limit=${r.limit}`;
    case "consistent":
      return `whole, resourceVersion unset, ${r.samples} timed`;
    case "any":
      return `whole, resourceVersion=0, ${r.samples} timed`;
    default:
      return "whole";
  }
}

/** The columns of what a step cost the relay, shared by the big and hubs tables. */
const costHeaders = ["JS heap max MB", "JS heap after MB", "workerd RSS max MB", "rows written", "storage MB", "lines in memory MB"];
const costCells = (r: BigRow | HubsRow): Cell[] => [r.heapMaxMB, r.heapAfterMB, r.rssMaxMB, r.rowsWritten, r.storageMB, r.linesMB];

export function bigTable(rows: BigRow[]): string {
  return table(
    ["step", "system", "transport", "S", "ms", "first byte ms", "MB", "MB/s", "upstream requests", ...costHeaders, "notes"],
    rows.map((r) => [
      r.step,
      r.system,
      r.transport,
      r.subscribers,
      r.ms,
      r.firstByteMs,
      typeof r.bytes === "number" ? r.bytes / 2 ** 20 : null,
      r.MBps,
      r.upstreamRequests,
      ...costCells(r),
      [
        ...(r.deliveredPerSec === undefined ? [] : [`${num(r.deliveredPerSec)} events/s delivered, p99 ${r.p99Ms ?? "–"} ms, ${r.cpuUsPerEvent ?? "–"} µs CPU per event`]),
        ...(r.deliveredPerSec === undefined && typeof r.cpuUsPerEvent === "number" ? [`${r.cpuUsPerEvent} µs CPU per event delivered`] : []),
        ...(r.note ? [r.note] : []),
      ].join("; "),
    ]),
  );
}

export function hubsTable(rows: HubsRow[]): string {
  return table(
    ["step", "keys", "objects a key", "subscribers", "ms", "upstream watches", "delivered/s", "p99 ms", "CPU µs/event", "JS heap max KB per hub", ...costHeaders],
    rows.map((r) => [
      r.step,
      r.keys,
      r.objects,
      r.subscribers,
      r.ms,
      r.upstreamWatches,
      r.deliveredPerSec,
      r.p99Ms,
      r.cpuUsPerEvent,
      r.heapMaxMB === null ? null : (r.heapMaxMB * 1024) / r.keys,
      ...costCells(r),
    ]),
  );
}

export function fleetTable(rows: FleetRow[]): string {
  return table(
    ["step", "transport", "clusters", "objects", "S", "watches", "ms", "first byte ms", "MB", "upstream watches", "upstream requests", "delivered/s", "p50 ms", "p99 ms", "CPU µs/event", "notes"],
    rows.map((r) => [
      r.step,
      r.transport,
      r.clusters,
      r.objects,
      r.subscribers,
      r.watches,
      r.ms,
      r.firstByteMs,
      typeof r.bytes === "number" ? r.bytes / 2 ** 20 : null,
      r.upstreamWatches,
      r.upstreamRequests,
      r.deliveredPerSec,
      r.p50Ms,
      r.p99Ms,
      r.cpuUsPerEvent,
      r.note,
    ]),
  );
}
