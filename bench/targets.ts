/**
 * @module
 * The issue's targets, checked against one run's rows. Reported, never asserted: a missed
 * target is a finding, stated with how far off it is.
 */
import { idleMemory, type FanoutRow, type Row, type StormRow } from "./rows.ts";
import { RELAY_MODES, type SystemName } from "./systems/system.ts";

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

/** Every target the relay is held to, each checked for both of its framings (`RELAY_MODES`), side by side. */
export function checkTargets(rows: readonly Row[]): TargetResult[] {
  const fanout = rows.filter((r): r is FanoutRow => r.scenario === "fanout");
  const storms = rows.filter((r): r is StormRow => r.scenario === "storm");
  // The targets name 1,000 subscribers; a smaller run is judged at its largest size.
  const sizes = [...new Set(fanout.map((r) => r.subscribers))];
  const size = sizes.includes(1000) ? 1000 : Math.max(0, ...sizes);
  const at = (system: SystemName, rate: number) => fanout.find((r) => r.system === system && r.subscribers === size && r.eventsPerSec === rate);
  const results: TargetResult[] = [];
  const each = (target: (mode: SystemName) => TargetResult) => results.push(...RELAY_MODES.map(target));

  const rates = [...new Set(fanout.map((r) => r.eventsPerSec))].sort((a, b) => a - b);
  for (const rate of rates) {
    const direct = at("direct", rate);
    const prefix = `fanout S=${size}, ${rate} ev/s:`;
    each((mode) => throughput(`${prefix} ${mode} delivered events/s ≥ node-relay's`, at(mode, rate), at("node-relay", rate), 1));
    each((mode) => throughput(`${prefix} ${mode} delivered ≥ 50% of raw-ws's`, at(mode, rate), at("raw-ws", rate), 0.5));
    // The latency target names 100 events/s, the lowest rate of a quick or full run.
    if (rate === rates[0]) {
      each((mode) => {
        const relay = at(mode, rate);
        const p99 = relay?.p99Ms ?? null;
        return {
          target: `${prefix} ${mode} p99 ≤ 100 ms`,
          measured: relay === undefined ? "not measured" : p99 === null ? "no events delivered" : `p99 ${fmt(p99)} ms${p99 > 100 ? ` (${(p99 / 100).toFixed(1)}× the target)` : ""}`,
          met: relay === undefined ? undefined : p99 !== null && p99 <= 100,
        };
      });
    }
    each((mode) => {
      const relay = at(mode, rate);
      return {
        target: `${prefix} ${mode} holds exactly 1 upstream connection (direct: S)`,
        measured: relay === undefined ? "not measured" : `${mode} ${relay.upstreamConnections}${direct ? `, direct ${direct.upstreamConnections}` : ""}`,
        met: relay === undefined ? undefined : relay.upstreamConnections === 1,
      };
    });
  }

  const stormOf = (mode: SystemName) => storms.find((r) => r.system === mode);
  each((mode) => {
    const storm = stormOf(mode);
    return { target: `storm, ${mode}: 0 upstream requests`, measured: storm ? `${storm.upstreamRequests}` : "not measured", met: storm ? storm.upstreamRequests === 0 : undefined };
  });
  each((mode) => {
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

  each((mode) => {
    const memory = idleMemory(fanout, mode, size);
    return {
      target: `${mode} memory ≤ 20 KB per idle subscriber (RSS)`,
      measured: !memory
        ? "not measured"
        : `${fmt(memory.rssKB)} KB RSS at S=${memory.subscribers}${memory.rssKB > 20 ? ` (${(memory.rssKB / 20).toFixed(1)}× the target)` : ""}, of which JS heap ${fmt(memory.heapKB)} KB`,
      met: memory ? memory.rssKB <= 20 : undefined,
    };
  });
  return results;
}
