/**
 * @module
 * The run's tables, one per scenario plus the relay's ratios to every other system (for each of
 * its two framings), as markdown padded so that it also reads as plain text on a terminal.
 */
import type { FanoutRow, KeysRow, Results, Row, SnapshotRow, StormRow } from "./rows.ts";
import { RELAY_MODES, type SystemName } from "./systems/system.ts";

type Cell = string | number | null | undefined;

export function table(headers: string[], rows: Cell[][]): string {
  const text = rows.map((r) => r.map((c) => (c === null || c === undefined ? "–" : typeof c === "number" ? num(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  return [line(headers), `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`, ...text.map(line)].join("\n");
}

/** Three significant figures, with k/M past ten thousand. */
export function num(n: number): string {
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toPrecision(3)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toPrecision(3)}k`;
  return n.toLocaleString("en-US", { maximumFractionDigits: Math.abs(n) < 10 ? 2 : Math.abs(n) < 100 ? 1 : 0 });
}

export const rowsOf = <T extends Row>(results: Results, scenario: T["scenario"]): T[] => results.rows.filter((r): r is T => r.scenario === scenario);

const cpu = (total: number, busiest: number) => `${num(total)} (${num(busiest)})`;

export function fanoutTable(rows: FanoutRow[]): string {
  return table(
    ["S", "ev/s", "system", "delivered/s", "% of S×upstream", "KB/event", "events/msg", "p50 ms", "p99 ms", "max ms", "upstream conns", "re-watches", "CPU µs/event", "server CPU %", "API server CPU %", "loadgen CPU % (busiest)", "others' CPU %", "RSS/sub KB", "heap/sub KB", "cut-offs"],
    rows.map((r) => [
      r.subscribers, r.eventsPerSec, r.system, r.deliveredPerSec, r.deliveredPct, r.eventBytes === null ? null : r.eventBytes / 1024, r.eventsPerMessage, r.p50Ms, r.p99Ms, r.maxMs, r.upstreamConnections, r.upstreamWatchRequests, r.cpuUsPerEvent, r.serverCpuPct,
      r.upstreamCpuPct, cpu(r.loadGenCpuPct, r.loadGenMaxCpuPct), r.otherLoadPct, r.memPerSubscriberKB, r.heapPerSubscriberKB, r.cutOffs,
    ]),
  );
}

/** For each size and rate: each relay framing's delivery and CPU per event against each other system's. */
export function fanoutRatios(rows: FanoutRow[]): string {
  const others: SystemName[] = ["relay", "workerd-floor", "node-relay", "raw-ws", "direct", "relay-proxied"];
  const cpuOthers = others.slice(0, 4);
  const cells: Cell[][] = [];
  for (const relay of rows.filter((r) => RELAY_MODES.includes(r.system))) {
    const at = (system: SystemName) => (system === relay.system ? undefined : rows.find((r) => r.system === system && r.subscribers === relay.subscribers && r.eventsPerSec === relay.eventsPerSec));
    const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : "–");
    cells.push([
      relay.subscribers,
      relay.eventsPerSec,
      relay.system,
      ...others.map((s) => ratio(relay.deliveredPerSec, at(s)?.deliveredPerSec)),
      ...cpuOthers.map((s) => ratio(relay.cpuUsPerEvent, at(s)?.cpuUsPerEvent)),
    ]);
  }
  return table(["S", "ev/s", "system", ...others.map((s) => `delivered ÷ ${s}`), ...cpuOthers.map((s) => `CPU/event ÷ ${s}`)], cells);
}

export function stormTable(rows: StormRow[]): string {
  return table(
    ["system", "S", "missed", "all caught up ms", "p50 ms", "caught up", "upstream requests", "watch/list", "server CPU %", "API server CPU %", "loadgen CPU % (busiest)", "others' CPU %", "idle again after ms"],
    rows.map((r) => [r.system, r.subscribers, r.missedEvents, r.catchUpMs, r.catchUpP50Ms, r.caughtUp, r.upstreamRequests, `${r.upstreamWatches}/${r.upstreamLists}`, r.serverCpuPct, r.upstreamCpuPct, cpu(r.loadGenCpuPct, r.loadGenMaxCpuPct), r.otherLoadPct, r.settledMs]),
  );
}

export function keysTable(rows: KeysRow[]): string {
  return table(
    ["system", "keys", "subscribers", "upstream watches", "RSS/key KB", "heap/key KB", "delivered/s", "% of S×upstream", "events/msg", "p50 ms", "p99 ms", "CPU µs/event", "server CPU %", "API server CPU %", "others' CPU %"],
    rows.map((r) => [r.system, r.keys, r.subscribers, r.upstreamWatches, r.memPerKeyKB, r.heapPerKeyKB, r.deliveredPerSec, r.deliveredPct, r.eventsPerMessage, r.p50Ms, r.p99Ms, r.cpuUsPerEvent, r.serverCpuPct, r.upstreamCpuPct, r.otherLoadPct]),
  );
}

export function snapshotTable(rows: SnapshotRow[]): string {
  return table(
    ["system", "objects", "first list ms", "list ms (median)", "MB", "MB/s", "upstream requests (repeats)"],
    rows.map((r) => [r.system, r.objects, r.coldMs, r.ms, r.bytes / 2 ** 20, r.MBps, r.upstreamRequests]),
  );
}
