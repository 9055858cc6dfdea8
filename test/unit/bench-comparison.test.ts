import { describe, expect, it } from "vitest";
import { compareRuns, comparisonTable, sameMeasurement } from "../../bench/comparison.ts";
import type { Row } from "../../bench/rows.ts";

const keys = (cpuUsPerEvent: number, deliveredPerSec: number, extra: Partial<Record<string, unknown>> = {}) =>
  ({ scenario: "keys", system: "relay", transport: "ws", keys: 100, subscribers: 300, eventsPerSec: 20, cpuUsPerEvent, deliveredPerSec, p99Ms: 1000, ...extra }) as unknown as Row;

describe("comparing two revisions' benchmarks pair by pair", () => {
  it("sets each of the current tree's figures against the base's of the same pair, with the median ratio", () => {
    const base = [[keys(280, 2600)], [keys(260, 2500)], [keys(300, 2400)]];
    const current = [[keys(140, 6000)], [keys(156, 5000)], [keys(120, 6000)]];
    const cpu = compareRuns(base, current).find((c) => c.figure === "CPU µs/event");
    expect(cpu?.pairs.map((p) => p.ratio)).toEqual([0.5, 0.6, 0.4]);
    expect(cpu?.median).toBe(0.5);
    expect(compareRuns(base, current).map((c) => c.figure)).toEqual(["delivered/s", "CPU µs/event", "p99 ms"]);
  });

  it("tells measurements apart by every dimension, but not by one a base from before it lacks", () => {
    const old = keys(280, 2600, { transport: undefined });
    expect(sameMeasurement(old, keys(140, 6000))).toBe(true);
    expect(sameMeasurement(keys(140, 6000), keys(140, 6000, { transport: "http" }))).toBe(false);
    expect(sameMeasurement(keys(140, 6000), keys(140, 6000, { keys: 1000 }))).toBe(false);
    const compared = compareRuns([[old, keys(400, 500, { keys: 1000, transport: undefined })]], [[keys(140, 6000, { keys: 1000 }), keys(120, 6000)]]);
    expect(compared.filter((c) => c.figure === "CPU µs/event").map((c) => [c.measurement, c.pairs[0]?.base])).toEqual([
      ["keys, relay, ws, subscribers 300, eventsPerSec 20, keys 1000", 400],
      ["keys, relay, ws, subscribers 300, eventsPerSec 20, keys 100", 280],
    ]);
  });

  it("tells a relay split across two workerds from one on a single thread, whether or not the base measured the split", () => {
    const socket = (p99Ms: number, split: boolean) =>
      ({ scenario: "sockets", system: "relay-socket", transport: "ws", clients: 200, eventsPerSec: 40, deliveredPerSec: 40_000, p99Ms, ...(split ? { muxWorkerd: true } : {}) }) as unknown as Row;
    expect(sameMeasurement(socket(500, false), socket(300, true))).toBe(false);
    const p99 = (base: Row[], current: Row[]) =>
      compareRuns([base], [current])
        .filter((c) => c.figure === "p99 ms")
        .map((c) => [c.measurement.endsWith("muxWorkerd true"), c.pairs[0]?.base, c.pairs[0]?.current]);
    expect(p99([socket(500, false), socket(300, true)], [socket(550, false), socket(250, true)])).toEqual([
      [false, 500, 550],
      [true, 300, 250],
    ]);
    // A base from before the split: its one-thread row is no baseline for the split one.
    expect(p99([socket(500, false)], [socket(550, false), socket(250, true)])).toEqual([[false, 500, 550]]);
  });

  it("takes a snapshot from before paged lists for a whole list, and compares a step's JS heap", () => {
    const snapshot = (list: string | undefined, ms: number) => ({ scenario: "snapshot", system: "relay", transport: "http", objects: 200, ms, ...(list ? { list } : {}) }) as unknown as Row;
    expect(sameMeasurement(snapshot(undefined, 5), snapshot("full", 4))).toBe(true);
    expect(sameMeasurement(snapshot(undefined, 5), snapshot("paged", 4))).toBe(false);
    const step = (heapMaxMB: number) => ({ scenario: "big", system: "relay", transport: "http", objects: 1000, step: "first list", ms: 900, heapMaxMB }) as unknown as Row;
    const heap = compareRuns([[step(40)]], [[step(20)]]).find((c) => c.figure === "JS heap max MB");
    expect([heap?.measurement, heap?.median]).toEqual(["big, relay, http, objects 1000, step first list", 0.5]);
  });

  it("leaves out what only one revision measured, and a pair where a figure is missing", () => {
    const compared = compareRuns([[keys(280, 2600)], []], [[keys(140, 6000), keys(1, 1, { system: "relay-batched" })], [keys(150, 6000)]]);
    expect(compared.some((c) => c.measurement.includes("relay-batched"))).toBe(false);
    expect(compared.find((c) => c.figure === "CPU µs/event")?.pairs).toHaveLength(1);
  });

  it("writes a table with every pair and the median", () => {
    const table = comparisonTable(compareRuns([[keys(280, 2600)]], [[keys(140, 6000)]]), "base");
    expect(table).toContain("| keys, relay, ws, subscribers 300, eventsPerSec 20, keys 100 | CPU µs/event | 280 → 140 (0.50×) | 0.50× |");
    expect(table).toContain("| delivered/s | 2,600 → 6,000 (2.31×) | 2.31× |");
  });
});
