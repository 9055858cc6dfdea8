/**
 * @module
 * The issue's targets, checked against one run's rows. Reported, never asserted: a missed
 * target is a finding, stated with how far off it is.
 */
import { idleMemory, type FanoutRow, type Row, type StormRow } from "./rows.ts";
import type { SystemName } from "./systems/system.ts";

export interface TargetResult {
  target: string;
  measured: string;
  /** `undefined` when the run did not measure it (a system or scenario left out). */
  met: boolean | undefined;
}

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** A relay that delivered (nearly) everything it was offered meets a throughput target whatever the baseline did. */
const KEPT_UP_PCT = 95;

/** `relay` delivered at least `share` of what `baseline` delivered. */
function throughput(target: string, relay: FanoutRow | undefined, baseline: FanoutRow | undefined, share: number): TargetResult {
  if (!relay || !baseline || baseline.deliveredPerSec <= 0) return { target, measured: "not measured", met: undefined };
  const ratio = relay.deliveredPerSec / baseline.deliveredPerSec;
  const keptUp = relay.deliveredPct >= KEPT_UP_PCT;
  const shown = share === 1 ? `${ratio.toFixed(2)}×` : `${(ratio * 100).toFixed(0)}%`;
  const short = share === 1 ? `short by ${((1 - ratio) * 100).toFixed(0)}%` : `short by ${((share - ratio) * 100).toFixed(0)} points`;
  const verdict = keptUp ? " (kept up: delivered what was offered)" : ratio < share ? ` (${short})` : "";
  return { target, measured: `${fmt(relay.deliveredPerSec)}/s vs ${fmt(baseline.deliveredPerSec)}/s: ${shown}${verdict}`, met: keptUp || ratio >= share };
}

export function checkTargets(rows: readonly Row[]): TargetResult[] {
  const fanout = rows.filter((r): r is FanoutRow => r.scenario === "fanout");
  const storms = rows.filter((r): r is StormRow => r.scenario === "storm");
  // The targets name 1,000 subscribers; a smaller run is judged at its largest size.
  const sizes = [...new Set(fanout.map((r) => r.subscribers))];
  const size = sizes.includes(1000) ? 1000 : Math.max(0, ...sizes);
  const at = (system: SystemName, rate: number) => fanout.find((r) => r.system === system && r.subscribers === size && r.eventsPerSec === rate);
  const results: TargetResult[] = [];

  const rates = [...new Set(fanout.map((r) => r.eventsPerSec))].sort((a, b) => a - b);
  for (const rate of rates) {
    const relay = at("relay", rate);
    const node = at("node-relay", rate);
    const raw = at("raw-ws", rate);
    const direct = at("direct", rate);
    results.push(throughput(`fanout S=${size}, ${rate} ev/s: relay delivered events/s ≥ node-relay's`, relay, node, 1));
    results.push(throughput(`fanout S=${size}, ${rate} ev/s: relay delivered ≥ 50% of raw-ws's`, relay, raw, 0.5));
    // The latency target names 100 events/s, the lowest rate of a quick or full run.
    if (rate === rates[0]) {
      const p99 = relay?.p99Ms ?? null;
      results.push({
        target: `fanout S=${size}, ${rate} ev/s: relay p99 ≤ 100 ms`,
        measured: relay === undefined ? "not measured" : p99 === null ? "no events delivered" : `p99 ${fmt(p99)} ms${p99 > 100 ? ` (${(p99 / 100).toFixed(1)}× the target)` : ""}`,
        met: relay === undefined ? undefined : p99 !== null && p99 <= 100,
      });
    }
    results.push({
      target: `fanout S=${size}, ${rate} ev/s: exactly 1 upstream connection (direct: S)`,
      measured: relay === undefined ? "not measured" : `relay ${relay.upstreamConnections}${direct ? `, direct ${direct.upstreamConnections}` : ""}`,
      met: relay === undefined ? undefined : relay.upstreamConnections === 1,
    });
  }

  const relayStorm = storms.find((r) => r.system === "relay");
  results.push({
    target: "storm: 0 upstream requests",
    measured: relayStorm ? `${relayStorm.upstreamRequests}` : "not measured",
    met: relayStorm ? relayStorm.upstreamRequests === 0 : undefined,
  });
  results.push({
    target: `storm: all ${relayStorm?.subscribers ?? ""} caught up within 2 s`,
    measured: !relayStorm
      ? "not measured"
      : relayStorm.catchUpMs === null
        ? `${relayStorm.caughtUp} of ${relayStorm.subscribers} caught up before the timeout`
        : `${fmt(relayStorm.catchUpMs)} ms${relayStorm.catchUpMs > 2000 ? ` (${(relayStorm.catchUpMs / 2000).toFixed(1)}× the target)` : ""}`,
    met: relayStorm ? relayStorm.catchUpMs !== null && relayStorm.catchUpMs <= 2000 : undefined,
  });

  const memory = idleMemory(fanout, "relay", size);
  results.push({
    target: "relay memory ≤ 20 KB per idle subscriber (RSS)",
    measured: !memory
      ? "not measured"
      : `${fmt(memory.rssKB)} KB RSS at S=${memory.subscribers}${memory.rssKB > 20 ? ` (${(memory.rssKB / 20).toFixed(1)}× the target)` : ""}, of which JS heap ${fmt(memory.heapKB)} KB`,
    met: memory ? memory.rssKB <= 20 : undefined,
  });
  return results;
}
