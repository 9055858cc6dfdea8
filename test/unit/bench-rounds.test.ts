import { describe, expect, it } from "vitest";
import { inRound, medianRounds } from "../../bench/rounds.ts";
import type { Row } from "../../bench/rows.ts";
import { checkTargets } from "../../bench/targets.ts";
import { hopCost } from "../../bench/report-hot.ts";

const fanout = (system: string, deliveredPerSec: number, extra: Partial<Record<string, unknown>> = {}) =>
  ({
    scenario: "fanout",
    system,
    transport: "ws",
    subscribers: 1000,
    eventsPerSec: 100,
    deliveredPerSec,
    deliveredPct: 50,
    p99Ms: deliveredPerSec / 100,
    memPerSubscriberKB: null,
    heapPerSubscriberKB: null,
    ...extra,
  }) as unknown as Row;
const storm = (catchUpMs: number | null) => ({ scenario: "storm", system: "relay", transport: "ws", subscribers: 1000, missedEvents: 1000, catchUpMs }) as unknown as Row;

describe("the benchmark's rounds", () => {
  it("keeps a measurement made once as it is", () => {
    const row = fanout("relay", 100);
    expect(medianRounds([[row]])).toEqual([row]);
    expect(inRound("fanout-relay-ws-1000-100", 0)).toBe("fanout-relay-ws-1000-100");
    expect(inRound("fanout-relay-ws-1000-100", 2)).toBe("fanout-relay-ws-1000-100-r3");
  });

  it("reports each measurement's median round, with every round in order, apart by system, transport and size", () => {
    const rounds = [
      [fanout("relay", 300), fanout("raw-ws", 10), fanout("relay", 1, { transport: "http" })],
      [fanout("relay", 100), fanout("raw-ws", 30), fanout("relay", 2, { transport: "http" })],
      [fanout("relay", 200), fanout("raw-ws", 20), fanout("relay", 3, { transport: "http" })],
    ];
    const rows = medianRounds(rounds);
    expect(rows.map((r) => [r.system, r.transport, (r as { deliveredPerSec: number }).deliveredPerSec])).toEqual([
      ["relay", "ws", 200],
      ["raw-ws", "ws", 20],
      ["relay", "http", 2],
    ]);
    expect(rows[0]?.rounds?.map((r) => (r as { deliveredPerSec: number }).deliveredPerSec)).toEqual([300, 100, 200]);
    // Of an even count, the lower middle.
    expect((medianRounds([[fanout("relay", 5)], [fanout("relay", 1)]])[0] as { deliveredPerSec: number }).deliveredPerSec).toBe(1);
  });

  it("ranks a storm by its catch-up time, one that never caught up last", () => {
    const [row] = medianRounds([[storm(null)], [storm(900)], [storm(null)]]);
    expect((row as { catchUpMs: number | null }).catchUpMs).toBeNull();
    const [caught] = medianRounds([[storm(null)], [storm(900)], [storm(1500)]]);
    expect((caught as { catchUpMs: number | null }).catchUpMs).toBe(1500);
  });

  it("targets give each round's ratio and judge latency on the median of the rounds' p99", () => {
    const rows = medianRounds([
      [fanout("relay", 300), fanout("node-relay", 100), fanout("raw-ws", 1000)],
      [fanout("relay", 100), fanout("node-relay", 200), fanout("raw-ws", 1000)],
      [fanout("relay", 5000), fanout("node-relay", 250), fanout("raw-ws", 1000)],
    ]);
    const targets = checkTargets(rows);
    const versus = targets.find((t) => t.target === "fanout S=1000, 100 ev/s, WebSocket: relay delivered events/s ≥ node-relay's");
    expect(versus?.measured).toBe("300/s vs 200/s: 1.50×; by round: 3.00×, 0.50×, 20.00×");
    expect(versus?.met).toBe(true);
    const latency = targets.find((t) => t.target === "fanout S=1000, 100 ev/s, WebSocket: relay p99 ≤ 100 ms");
    expect(latency?.measured).toContain("p99 3 ms (the median of its rounds: 3, 1, 50 ms)");
    expect(latency?.met).toBe(true);
  });

  it("judge deltas on bytes per MODIFIED over every fan-out measurement, each paired with the same size and rate", () => {
    const bytes = (system: string, subscribers: number, eventsPerSec: number, modifiedBytes: number) => fanout(system, 1, { subscribers, eventsPerSec, modifiedBytes });
    const rows = [
      bytes("relay", 100, 100, 3600),
      bytes("relay-delta", 100, 100, 600),
      bytes("relay", 1000, 100, 3600),
      bytes("relay-delta", 1000, 100, 800),
      // HTTP rows carry no deltas, and are not paired.
      fanout("relay", 1, { subscribers: 1000, eventsPerSec: 100, modifiedBytes: 9000, transport: "http" }),
    ];
    const [met] = checkTargets(rows).filter((t) => t.target.includes("bytes per MODIFIED"));
    expect(met?.measured).toBe("700 B vs 3,600 B: 5.1× fewer; by measurement: 6×, 4.5×");
    expect(met?.met).toBe(true);
    const [missed] = checkTargets([...rows.slice(0, 3), bytes("relay-delta", 1000, 100, 900)]).filter((t) => t.target.includes("bytes per MODIFIED"));
    expect(missed?.met).toBe(false);
  });

  it("judge the hot key's hop on the median of each round's difference, where its replicas had a workerd of their own and both kept up", () => {
    const hot = (replicas: number, p50Ms: number, deliveredPerSec: number, own = true, deliveredPct = 100) =>
      ({
        scenario: "hot",
        system: "relay-batched",
        transport: "ws",
        subscribers: 1000,
        replicas,
        eventsPerSec: 100,
        deliveredPerSec,
        deliveredPct,
        p50Ms,
        hubs: [],
        ...(own ? { replicaWorkerd: true } : {}),
      }) as unknown as Row;
    const judged = (rows: Row[]) => checkTargets(rows).find((t) => t.target.includes("relay-batched: 4 replicas") && t.target.includes("second workerd"));
    // Median rows by delivery: 171 without, 123 with (-48 ms); the rounds' differences: +304, -20, +80.
    const rows = medianRounds([
      [hot(0, 171, 2), hot(4, 475, 1)],
      [hot(0, 143, 1), hot(4, 123, 2)],
      [hot(0, 117, 3), hot(4, 197, 3)],
    ]);
    const hop = judged(rows);
    expect(hop?.measured).toBe("+80 ms, the median of each round's difference (p50 without replicas, then with: 171, 475 ms; 143, 123 ms; 117, 197 ms)");
    expect(hop?.met).toBe(false);
    // One round: its two rows.
    const once = judged(medianRounds([[hot(0, 100, 1), hot(4, 120, 1)]]));
    expect(once?.measured).toBe("p50 100 ms without replicas, 120 ms with: +20 ms");
    expect(once?.met).toBe(true);
    // Either fell behind: both p50s are a saturated thread's queue.
    expect(judged(medianRounds([[hot(0, 2000, 1, true, 60), hot(4, 1500, 1, true, 70)]]))?.met).toBeUndefined();
    // Every hub on one thread: said, not judged.
    const shared = checkTargets(medianRounds([[hot(0, 100, 1, false), hot(4, 120, 1, false)]]));
    expect(shared.find((t) => t.target.includes("second workerd"))).toBeUndefined();
    const said = shared.find((t) => t.target.includes("relay-batched: 4 replicas") && t.target.includes("one workerd thread"));
    expect(said?.measured).toBe("p50 100 ms without replicas, 120 ms with: +20 ms");
    expect(said?.met).toBeUndefined();
  });

  it("say the hop's CPU did not show when the tree cost less than one hub, rather than give a negative cost", () => {
    expect(hopCost(190, 4, 1000)).toBe(
      "the extra hop cost 190 µs of CPU per upstream event for 4 replicas (47.5 µs a replica: the root's message and the replica's intake), measured at 1,000 subscribers where both kept up",
    );
    expect(hopCost(-1118, 4, 1000)).toBe(
      "the extra hop's CPU did not show: the tree used 1,118 µs less per upstream event than one hub, measured at 1,000 subscribers where both kept up, which is this run's noise (or one hub's own batching) and not a saving",
    );
  });
});
