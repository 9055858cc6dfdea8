import { describe, expect, it } from "vitest";
import { FakeClock } from "../hub/clock.fake.ts";
import { HubReporter } from "./hub-reporter.ts";
import type { HubReport } from "./report.ts";
import { CHANGE_REPORT_MS } from "./scheduled-reports.ts";

/** A reporter on a hand-moved clock, whose reports land in `reports`; `state` is the upstream's. */
function reporter() {
  const clock = new FakeClock();
  const reports: HubReport[] = [];
  const hub = { state: "listing" };
  const metrics = new HubReporter({ report: async (r) => void reports.push(r) }, { hub: "h", key: "c:/api/v1/pods", cluster: "c" }, () => undefined, clock);
  metrics.view = {
    snapshot: () => ({ upstream: hub.state, watching: true, window: { start: 0, head: 0, events: 0, bytes: 0 }, objects: 0, storageBytes: 0, memoryBytes: 0 }),
    subscribers: () => [],
  };
  return { clock, reports, hub, metrics };
}

describe("a hub's reports", () => {
  it("tell a change of the upstream's state within a second, at most one such report a second, and nothing of a hub not in the registry", () => {
    const { clock, reports, hub, metrics } = reporter();
    metrics.changed();
    expect(reports).toHaveLength(0);
    metrics.watching(1);
    expect(reports.map((r) => r.upstream)).toEqual(["listing"]);
    // The watch opens just after the first report: told a second after that report, once.
    clock.advance(5);
    hub.state = "watching";
    metrics.changed();
    metrics.changed();
    clock.advance(CHANGE_REPORT_MS - 6);
    expect(reports).toHaveLength(1);
    clock.advance(1);
    expect(reports.map((r) => r.upstream)).toEqual(["listing", "watching"]);
    // A change long after the last report is told at once.
    clock.advance(10 * CHANGE_REPORT_MS);
    hub.state = "backoff";
    metrics.changed();
    expect(reports.at(-1)?.upstream).toBe("backoff");
    // A report made meanwhile (the heartbeat) tells the change: none more is due.
    hub.state = "listing";
    metrics.changed();
    metrics.beat();
    clock.advance(2 * CHANGE_REPORT_MS);
    expect(reports.map((r) => r.upstream)).toEqual(["listing", "watching", "backoff", "listing"]);
    // Stopped, it has left the registry: a change does not bring it back.
    metrics.stopped();
    hub.state = "stopped";
    metrics.changed();
    clock.advance(2 * CHANGE_REPORT_MS);
    expect(reports.map((r) => r.stopped)).toEqual([false, false, false, false, true]);
  });

  it("measure how long after a root its replica committed the same events, and how long a position not yet passed has waited", () => {
    const { clock, metrics } = reporter();
    const first = clock.now();
    metrics.committed(2, 10);
    clock.advance(100);
    metrics.committed(1, 11);
    expect(metrics.lastCommit()).toEqual({ head: 11, at: first + 100 });
    // The replica committed up to 10 (in the root's first commit) 20 ms after the root; up to 11, 5 ms after.
    expect(metrics.commitLagSeconds({ head: 10, at: first + 20 })).toBeCloseTo(0.02);
    expect(metrics.commitLagSeconds({ head: 9, at: first + 20 })).toBeCloseTo(0.02);
    expect(metrics.commitLagSeconds({ head: 11, at: first + 105 })).toBeCloseTo(0.005);
    // Its clock a little behind the root's is no lag; nothing committed yet, none.
    expect(metrics.commitLagSeconds({ head: 11, at: first + 90 })).toBe(0);
    expect(metrics.commitLagSeconds(undefined)).toBe(0);
    // A position the root passed 2 s ago has waited that long; one at the head, not at all.
    clock.advance(1_900);
    expect(metrics.lagSeconds(10)).toBeCloseTo(1.9);
    expect(metrics.lagSeconds(9)).toBeCloseTo(2);
    expect(metrics.lagSeconds(11)).toBe(0);
  });
});
