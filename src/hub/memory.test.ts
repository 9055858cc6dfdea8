import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collected } from "../../test/kit/gc.ts";
import { LineMemory, SliceCache, type TailEntry } from "./memory.ts";

const entry = (rv: number, size: number): TailEntry => ({ rv, offset: 0, line: "x".repeat(size) });

describe("LineMemory", () => {
  it("holds the newest lines of every hub within one budget, letting the isolate's oldest go first", () => {
    const memory = new LineMemory(100);
    const a = memory.tail();
    const b = memory.tail();
    a.reset(0);
    b.reset(0);
    a.push(entry(1, 40));
    b.push(entry(1, 40));
    a.push(entry(2, 40)); // 120 > 100: a's first line, the oldest of the isolate, goes
    expect(memory.bytes).toBe(80);
    expect([a.from, a.after(0, 1e9).map((e) => e.rv)]).toEqual([1, [2]]);
    expect([b.from, b.after(0, 1e9).map((e) => e.rv)]).toEqual([0, [1]]);
    b.push(entry(2, 90)); // b's own 1, then a's 2, go
    expect([a.size, b.size, memory.bytes]).toEqual([0, 1, 90]);
    expect([a.from, b.from]).toEqual([2, 1]);
  });

  it("an entry larger than the budget is not held: the tail holds nothing from then on", () => {
    const memory = new LineMemory(10);
    const tail = memory.tail();
    tail.reset(0);
    tail.push(entry(1, 5));
    tail.push(entry(2, 50));
    expect([tail.size, tail.from, memory.bytes]).toEqual([0, 2, 0]);
  });

  it("starts over after some of its lines went (a new history after an eviction)", () => {
    const memory = new LineMemory(1000);
    const tail = memory.tail();
    tail.reset(0);
    for (let rv = 1; rv <= 4; rv++) tail.push(entry(rv, 10));
    tail.evict(2);
    tail.reset(10);
    tail.push(entry(11, 10));
    expect([tail.size, tail.from, memory.bytes, tail.after(10, 1e9).map((e) => e.rv)]).toEqual([1, 10, 10, [11]]);
  });

  it("lets a line go as soon as it is dropped, however few its hub has had since", async () => {
    const memory = new LineMemory(80);
    const quiet = memory.tail();
    const busy = memory.tail();
    quiet.reset(0);
    busy.reset(0);
    // Made in a function of their own: a suspended async function may keep its last locals.
    const dropped = [1, 2, 3].map((rv) => {
      const held = entry(rv, 20);
      quiet.push(held);
      return new WeakRef(held);
    });
    quiet.push(entry(4, 20));
    quiet.evict(1); // the first by the window
    for (let rv = 1; rv <= 3; rv++) busy.push(entry(rv, 20)); // the isolate's budget takes the quiet hub's next two
    expect([quiet.size, memory.bytes]).toEqual([1, 80]);
    await collected();
    expect(dropped.map((ref) => ref.deref())).toEqual([undefined, undefined, undefined]);
  });

  it("property: each tail holds a suffix of its events (all after `from`), and the isolate stays within its budget", () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant("push" as const), hub: fc.integer({ min: 0, max: 2 }), size: fc.integer({ min: 1, max: 60 }) }),
      fc.record({ op: fc.constant("evict" as const), hub: fc.integer({ min: 0, max: 2 }), keep: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ op: fc.constant("reset" as const), hub: fc.integer({ min: 0, max: 2 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.array(op, { maxLength: 300 }), (budget, ops) => {
        const memory = new LineMemory(budget);
        const tails = [0, 1, 2].map(() => memory.tail());
        const pushed: number[][] = [[], [], []];
        const rvs = [0, 0, 0];
        for (const step of ops) {
          const tail = tails[step.hub]!;
          const events = pushed[step.hub]!;
          if (step.op === "push") {
            rvs[step.hub]! += 1 + (step.size % 3);
            events.push(rvs[step.hub]!);
            tail.push(entry(rvs[step.hub]!, step.size));
          } else if (step.op === "evict") {
            const to = events[events.length - 1 - step.keep];
            if (to !== undefined) {
              tail.evict(to);
              events.splice(0, events.indexOf(to) + 1);
            }
          } else {
            tail.reset(rvs[step.hub]!);
            events.length = 0;
          }
          expect(memory.bytes).toBeLessThanOrEqual(budget);
        }
        tails.forEach((tail, hub) => {
          const held = tail.after(tail.from, Number.POSITIVE_INFINITY).map((e) => e.rv);
          expect(held).toEqual(pushed[hub]!.filter((rv) => rv > tail.from));
        });
      }),
      { seed: 5, numRuns: 300 },
    );
  });
});

describe("SliceCache", () => {
  it("keeps the most recently used within its byte budget", () => {
    const cache = new SliceCache<string>(10);
    cache.set("a", "A", 4);
    cache.set("b", "B", 4);
    expect(cache.get("a")).toBe("A"); // a is now the most recent
    cache.set("c", "C", 4); // over: the least recently used (b) goes
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.bytes]).toEqual(["A", undefined, "C", 8]);
    cache.set("d", "D", 20); // larger than the budget: nothing stays
    expect(cache.bytes).toBe(0);
  });
});
