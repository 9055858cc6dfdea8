import { describe, expect, it } from "vitest";
import { EASE_MS, Gather, gatherMs, LATE_MS, MAX_EXTRA_MS } from "./gather.ts";

describe("how long a hub gathers events before a commit", () => {
  it("grows its base with the subscribers: 1 ms per 20, between 1 and 50 ms", () => {
    expect([0, 3, 20, 100, 500, 1000, 5000].map(gatherMs)).toEqual([1, 1, 1, 5, 25, 50, 50]);
  });

  it("keeps to the base while its timers fire on time", () => {
    const gather = new Gather(() => 5);
    for (let i = 0; i < 10; i++) gather.fired(LATE_MS);
    expect(gather.ms).toBe(5);
  });

  it("gathers longer while the runtime is late, never more than the bound", () => {
    const gather = new Gather(() => 1);
    gather.fired(LATE_MS + 10);
    expect(gather.ms).toBe(LATE_MS + 10);
    gather.fired(LATE_MS + 1);
    expect(gather.ms).toBe(2 * LATE_MS + 11);
    gather.fired(10_000);
    expect(gather.ms).toBe(MAX_EXTRA_MS);
  });

  it("eases back to the base once timers are on time again, a step per commit", () => {
    let base = 1;
    const gather = new Gather(() => base);
    gather.fired(10_000);
    gather.fired(0);
    expect(gather.ms).toBe(MAX_EXTRA_MS - EASE_MS);
    for (let i = 0; i < MAX_EXTRA_MS / EASE_MS; i++) gather.fired(0);
    expect(gather.ms).toBe(1);
    // The base still follows the hub: more subscribers, a longer base.
    base = 25;
    expect(gather.ms).toBe(25);
  });
});
