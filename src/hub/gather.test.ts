import { describe, expect, it } from "vitest";
import { BURST_BASES, BURST_GAP_MS, EASE_MS, FEW_EVENTS, Gather, gatherMs, LATE_MS, MAX_BURST_MS, MAX_EXTRA_MS, MAX_SLOW_EXTRA_MS, replicaGather } from "./gather.ts";

describe("how long a hub gathers events before a commit", () => {
  it("grows its base with the subscribers: 1 ms per 20, between 1 and 50 ms", () => {
    expect([0, 3, 20, 100, 500, 1000, 5000].map(gatherMs)).toEqual([1, 1, 1, 5, 25, 50, 50]);
  });

  it("keeps to the base while its timers fire on time", () => {
    const gather = new Gather(() => 5);
    for (let i = 0; i < 10; i++) gather.fired(LATE_MS, 1, 5 + LATE_MS);
    expect(gather.ms).toBe(5);
  });

  it("gathers longer while the runtime is late, never more than the bound", () => {
    const gather = new Gather(() => 1);
    // A fast hub: many events a gather.
    gather.fired(LATE_MS + 10, 100, LATE_MS + 11);
    expect(gather.ms).toBe(LATE_MS + 10);
    gather.fired(LATE_MS + 1, 100, 2 * LATE_MS + 11);
    expect(gather.ms).toBe(2 * LATE_MS + 11);
    gather.fired(10_000, 100_000, 10_000);
    expect(gather.ms).toBe(MAX_EXTRA_MS);
  });

  it("lets a slow hub's late gathers grow until they carry a few events, within the longer bound", () => {
    // 20 events a second: a few of them take 250 ms.
    const slow = new Gather(() => 1);
    for (let i = 0; i < 20; i++) slow.fired(100, 2, 100);
    expect(slow.ms).toBe(MAX_SLOW_EXTRA_MS);
    // 40 a second: a few take 125 ms, and the gather grows no further.
    const moderate = new Gather(() => 1);
    for (let i = 0; i < 20; i++) moderate.fired(100, 4, 100);
    expect(moderate.ms).toBe((FEW_EVENTS * 100) / 4);
    // The rate is what the gathers find: a hub with one event a gather, each gather as long as it asked plus the lateness.
    const quiet = new Gather(() => 1);
    for (let i = 0; i < 20; i++) quiet.fired(LATE_MS + 1, 1, quiet.ms + LATE_MS + 1);
    expect(quiet.ms).toBe(MAX_SLOW_EXTRA_MS);
    // A fast hub late just as long stays within the fast bound.
    const fast = new Gather(() => 1);
    for (let i = 0; i < 20; i++) fast.fired(100, 50, 100);
    expect(fast.ms).toBe(MAX_EXTRA_MS);
  });

  it("eases back to the base once timers are on time again, a step per commit", () => {
    let base = 1;
    const gather = new Gather(() => base);
    gather.fired(10_000, 100_000, 10_000);
    gather.fired(0, 1, 1);
    expect(gather.ms).toBe(MAX_EXTRA_MS - EASE_MS);
    for (let i = 0; i < MAX_EXTRA_MS / EASE_MS; i++) gather.fired(0, 1, 1);
    expect(gather.ms).toBe(1);
    // The base still follows the hub: more subscribers, a longer base.
    base = 25;
    expect(gather.ms).toBe(25);
  });

  it("a replica's gather waits for nothing, however late the runtime is: its root gathered for the tree", () => {
    const gather = replicaGather();
    expect(gather.ms).toBe(0);
    for (let i = 0; i < 20; i++) gather.fired(10_000, 1, 10_000);
    expect(gather.ms).toBe(0);
    // Nor for the rest of a burst.
    expect(gather.more(0, 0, true)).toBe(0);
  });

  it("a merge hub's gather keeps to its base however late the runtime is: its members' hubs gathered with their lateness extra", () => {
    let base = 1;
    const merge = new Gather(() => base, { lateExtra: false });
    const member = new Gather(() => 1);
    for (let i = 0; i < 20; i++) {
      merge.fired(100, 2, 100);
      member.fired(100, 2, 100);
    }
    // Where a member's hub gathers longer, the merge hub does not add as much again.
    expect(member.ms).toBe(MAX_SLOW_EXTRA_MS);
    expect(merge.ms).toBe(1);
    // Its base still follows its subscribers, and it still gathers the rest of a burst.
    base = 25;
    expect(merge.ms).toBe(25);
    expect(merge.more(25, 1, true)).toBe(BURST_GAP_MS - 1);
  });

  it("commits a lone event at its time, and events a pause apart", () => {
    const gather = new Gather(() => 25);
    expect(gather.more(25, 25, false)).toBe(0);
    expect(gather.more(25, BURST_GAP_MS, true)).toBe(0);
  });

  it("waits for the rest of a burst whose events still come back to back, until they pause, for at most 4 times its base", () => {
    const gather = new Gather(() => 25);
    expect(gather.more(25, 1, true)).toBe(BURST_GAP_MS - 1);
    expect(gather.more(BURST_BASES * 25 - 1, 0, true)).toBe(1);
    expect(gather.more(BURST_BASES * 25, 0, true)).toBe(0);
    // A big hub's bound is MAX_BURST_MS; a hub of a few subscribers adds a few ms.
    expect(new Gather(() => 50).more(MAX_BURST_MS - 1, 0, true)).toBe(1);
    expect(new Gather(() => 50).more(MAX_BURST_MS, 0, true)).toBe(0);
    expect(new Gather(() => 1).more(BURST_BASES, 0, true)).toBe(0);
  });
});
