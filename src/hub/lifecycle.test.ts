import { describe, expect, it } from "vitest";
import { Lifecycle, type Clock, type LifecycleParts } from "./lifecycle.ts";

/** A hub's parts that record what the lifecycle asks of them, on a clock the test moves. */
function hub(subscribers: number) {
  const calls: string[] = [];
  let now = 0;
  const clock: Clock = { now: () => now, every: () => () => undefined };
  const parts: LifecycleParts = {
    upstream: { watching: true, start: () => void calls.push("start"), stop: () => void calls.push("stop"), renew: () => void calls.push("renew") },
    subscribers: () => subscribers,
    bookmarks: () => undefined,
    quotas: { renew: () => void calls.push("quotas.renew"), releaseHub: () => void calls.push("quotas.release") },
    metrics: { watching: (n) => void calls.push(`metrics.watching ${n}`), beat: () => void calls.push("metrics.beat"), stopped: () => void calls.push("metrics.stopped") },
    alarm: { get: async () => null, set: async () => undefined },
  };
  const lifecycle = new Lifecycle(parts, { idleGraceMs: 60_000, bookmarkIntervalMs: 60_000 }, () => undefined, clock);
  return { lifecycle, calls, advance: (ms: number) => void (now += ms) };
}

describe("Lifecycle", () => {
  it("settling a watching hub tells the metrics reporter, with its subscribers", () => {
    const { lifecycle, calls } = hub(3);
    lifecycle.settle();
    expect(calls).toEqual(["metrics.watching 3"]);
  });

  it("each heartbeat renews an old upstream stream from its own invocation, renews the quotas and reports", async () => {
    const { lifecycle, calls } = hub(1);
    await lifecycle.alarm();
    expect(calls).toEqual(["start", "renew", "quotas.renew", "metrics.beat"]);
  });

  it("the heartbeat that stops an idle hub reports that it stopped, and renews nothing", async () => {
    const { lifecycle, calls, advance } = hub(0);
    lifecycle.settle();
    advance(60_000);
    calls.length = 0;
    await lifecycle.alarm();
    expect(calls).toEqual(["stop", "quotas.release", "metrics.stopped"]);
  });
});
