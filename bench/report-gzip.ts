/**
 * @module
 * The compressed WebSocket framing's targets (issue 45): `relay-gzip` against `relay-batched`,
 * the same relay's batches uncompressed, in the same run — at least 5× fewer bytes on the wire
 * for an initial state (big's), at least 2× fewer under churn (fanout's), each at most 1.2× the
 * relay's CPU per delivered event.
 */
import type { BigRow, FanoutRow, Row, TargetResult } from "./rows.ts";

/** How many times fewer bytes on the wire relay-gzip must take than relay-batched: for an initial state, and per event under churn. */
export const GZIP_INITIAL_FEWER = 5;
export const GZIP_CHURN_FEWER = 2;
/** The most of the relay's CPU per delivered event relay-gzip may cost, against relay-batched's. */
export const GZIP_WATCH_CPU_MAX = 1.2;

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });
const kb = (bytes: number) => `${fmt(bytes / 1024)} KB`;

/** `gzip` took `fewer`× fewer bytes than `batched`, at most; and its CPU per event at most `GZIP_WATCH_CPU_MAX`× batched's. */
function pair(
  prefix: string,
  fewer: number,
  bytes: (r: { gzip: number; batched: number }) => string,
  gzip: { bytes: number | null; cpu: number | null } | undefined,
  batched: typeof gzip,
): TargetResult[] {
  const shrunk = gzip?.bytes && batched?.bytes ? batched.bytes / gzip.bytes : undefined;
  const cpu = gzip?.cpu !== null && gzip?.cpu !== undefined && batched?.cpu ? gzip.cpu / batched.cpu : undefined;
  return [
    {
      target: `${prefix} relay-gzip ≥ ${fewer}× fewer bytes on the wire than relay-batched`,
      measured: shrunk === undefined ? "not measured" : `${bytes({ gzip: gzip?.bytes ?? 0, batched: batched?.bytes ?? 0 })}: ${shrunk.toFixed(1)}× fewer`,
      met: shrunk === undefined ? undefined : shrunk >= fewer,
    },
    {
      target: `${prefix} relay-gzip CPU per delivered event ≤ ${GZIP_WATCH_CPU_MAX}× relay-batched's`,
      measured: cpu === undefined ? "not measured" : `${fmt(gzip?.cpu ?? 0)} µs against ${fmt(batched?.cpu ?? 0)} µs: ${cpu.toFixed(2)}×`,
      met: cpu === undefined ? undefined : cpu <= GZIP_WATCH_CPU_MAX,
    },
  ];
}

export function gzipWatchTargets(rows: readonly Row[]): TargetResult[] {
  const results: TargetResult[] = [];
  const fanout = rows.filter((r): r is FanoutRow => r.scenario === "fanout" && r.transport === "ws");
  for (const gzip of fanout.filter((r) => r.system === "relay-gzip")) {
    const batched = fanout.find((r) => r.system === "relay-batched" && r.subscribers === gzip.subscribers && r.eventsPerSec === gzip.eventsPerSec);
    const of = (r: FanoutRow | undefined) => r && { bytes: r.wireEventBytes, cpu: r.cpuUsPerEvent };
    results.push(
      ...pair(`fanout S=${gzip.subscribers}, ${gzip.eventsPerSec} ev/s, WebSocket (churn):`, GZIP_CHURN_FEWER, (b) => `${kb(b.gzip)} against ${kb(b.batched)} an event`, of(gzip), of(batched)),
    );
  }
  const initial = rows.filter((r): r is BigRow => r.scenario === "big" && r.transport === "ws" && r.step.startsWith("initial state"));
  const gzip = initial.find((r) => r.system === "relay-gzip");
  if (gzip) {
    const batched = initial.find((r) => r.system === "relay-batched");
    const subscribers = gzip.subscribers ?? 1;
    const of = (r: BigRow | undefined) => r && { bytes: r.bytes ?? null, cpu: r.cpuUsPerEvent ?? null };
    const prefix = `big, ${fmt(gzip.objects)} pods, the initial state to ${fmt(subscribers)} subscribers at once, WebSocket:`;
    const perSubscriber = (bytes: number) => `${fmt(bytes / subscribers / 2 ** 20)} MB`;
    results.push(...pair(prefix, GZIP_INITIAL_FEWER, (b) => `${perSubscriber(b.gzip)} against ${perSubscriber(b.batched)} a subscriber`, of(gzip), of(batched)));
  }
  return results;
}
