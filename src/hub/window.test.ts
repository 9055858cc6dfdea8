import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage, type Database } from "../../test/kit/sqlite.ts";
import { LineMemory } from "./memory.ts";
import { READ_BYTES } from "./row-limit.ts";
import { HubStorage } from "./storage.ts";
import { EventWindow, type WindowEvent, type WindowLimits } from "./window.ts";

const event = (rv: number, size = 10): WindowEvent => ({ rv, line: `${"x".repeat(size - 1)}\n` });

/** A window over its own database; `memory`: the isolate's budget for held lines (all of them by default). */
function open(limits: WindowLimits, options: { db?: Database; memory?: number } = {}) {
  const storage = new HubStorage(durableStorage(options.db ?? database()));
  storage.make();
  const w = new EventWindow(() => storage.sql, limits, new LineMemory(options.memory ?? 1 << 30).tail());
  const append = (...events: WindowEvent[]) => {
    const write = storage.transaction(() => w.write(events));
    w.committed(write);
    return write.evicted?.to;
  };
  return { w, append, storage };
}

const rvsAfter = (w: EventWindow, rv: number) => {
  const r = w.after(rv);
  return r.kind === "events" ? r.events.map((e) => e.rv) : r.kind;
};

describe("EventWindow", () => {
  it("replays exactly the events after a resume point", () => {
    const { w, append } = open({ maxEvents: 10, maxBytes: 1e6 });
    w.reset(100);
    for (const rv of [101, 105, 107]) append(event(rv));
    expect(rvsAfter(w, 100)).toEqual([101, 105, 107]);
    expect(rvsAfter(w, 101)).toEqual([105, 107]);
    expect(rvsAfter(w, 103)).toEqual([105, 107]); // a bookmark RV between events
    expect(rvsAfter(w, 107)).toEqual([]);
    expect(rvsAfter(w, 200)).toEqual([]); // ahead: nothing yet
    expect(rvsAfter(w, 99)).toBe("expired");
  });

  it("replays big lines from storage a few at a time (READ_BYTES a statement, or one line), all of them, in order", () => {
    // No memory for lines: every replay is read from storage.
    const { w, append } = open({ maxEvents: 100, maxBytes: 1e9 }, { memory: 0 });
    w.reset(0);
    const sizes = [READ_BYTES / 3, READ_BYTES + 1, 10, READ_BYTES / 2, READ_BYTES / 2, 10, 10];
    sizes.forEach((size, i) => append(event(i + 1, size)));
    expect(rvsAfter(w, 0)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const some = w.after(0, READ_BYTES);
    expect(some.kind === "events" && some.events.map((e) => e.rv)).toEqual([1, 2]);
  });

  it("evicts by count and moves the start to the last evicted event", () => {
    const { w, append } = open({ maxEvents: 2, maxBytes: 1e6 });
    w.reset(10);
    append(event(11));
    append(event(12));
    expect(append(event(13))).toBe(11);
    expect(w.start).toBe(11);
    expect(w.after(10)).toEqual({ kind: "expired", oldest: 11 });
    expect(w.after(11)).toMatchObject({ kind: "events" });
  });

  it("evicts by bytes but always keeps the newest event", () => {
    const { w, append } = open({ maxEvents: 100, maxBytes: 25 });
    w.reset(0);
    append(event(1, 10));
    append(event(2, 10));
    expect(w.bytes).toBe(20);
    append(event(3, 10));
    expect(w.size).toBe(2);
    append(event(4, 100));
    expect(w.size).toBe(1);
    expect(w.start).toBe(3);
  });

  it("bookmarks advance the head without adding events; an event not after the last is refused", () => {
    const { w, append } = open({ maxEvents: 10, maxBytes: 1e6 });
    w.reset(5);
    append(event(7));
    w.advance(9);
    expect(w.head).toBe(9);
    expect(() => append(event(6))).toThrow(RangeError);
    append(event(10));
    expect(w.head).toBe(10);
    expect(rvsAfter(w, 5)).toEqual([7, 10]);
  });

  it("limits a read to about maxBytes but always returns at least one event, from memory or from storage", () => {
    for (const memory of [1 << 30, 0]) {
      const { w, append } = open({ maxEvents: 100, maxBytes: 1e6 }, { memory });
      w.reset(0);
      for (let rv = 1; rv <= 10; rv++) append(event(rv, 100));
      const r = w.after(0, 250);
      expect(r.kind === "events" && r.events.map((e) => e.rv), `memory ${memory}`).toEqual([1, 2, 3]);
      const one = w.after(0, 1);
      expect(one.kind === "events" && one.events.length).toBe(1);
    }
  });

  it("restores from storage with its bounds, holding no line in memory until new events come", () => {
    const db = database();
    const before = open({ maxEvents: 10, maxBytes: 1e6 }, { db });
    before.w.reset(3);
    before.append(event(4), event(6));
    const { w, append } = open({ maxEvents: 10, maxBytes: 1e6 }, { db });
    w.restore(3, 8);
    expect([w.start, w.head, w.size, w.bytes]).toEqual([3, 8, 2, 20]);
    expect(w.after(3)).toMatchObject({ kind: "events", events: [{ rv: 4 }, { rv: 6 }] });
    expect([w.bytesAfter(3), w.bytesAfter(4), w.bytesAfter(6)]).toEqual([20, 10, 0]);
    append(event(9, 5));
    expect([w.bytesAfter(3), w.bytesAfter(6), w.bytesAfter(9)]).toEqual([25, 5, 0]);
  });

  it("keeps deltas with the lines it holds, and sends whole lines for events read back from storage", () => {
    const { w, append } = open({ maxEvents: 100, maxBytes: 1e6 }, { memory: 25 });
    w.reset(0);
    append({ rv: 1, line: "a".repeat(9), delta: "d" }, { rv: 2, line: "b".repeat(9), delta: "e" }, { rv: 3, line: "c".repeat(9), delta: "f" });
    // The budget holds the newest two; the oldest is read back without its delta.
    expect(w.after(0)).toEqual({
      kind: "events",
      events: [
        { rv: 1, line: "a".repeat(9) },
        { rv: 2, line: "b".repeat(9) },
        { rv: 3, line: "c".repeat(9) },
      ],
    });
    expect(w.after(1)).toMatchObject({
      kind: "events",
      events: [
        { rv: 2, delta: "e" },
        { rv: 3, delta: "f" },
      ],
    });
  });

  it("property: every resume at or after the start gets exactly the newer events, in order, and their bytes; older ones get 410", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.array(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 0, max: 600 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 20 }),
        (base, batches, maxEvents, maxBytes, memory, probes) => {
          const { w, append } = open({ maxEvents, maxBytes }, { memory });
          w.reset(base);
          const all: number[] = [];
          let rv = base;
          for (const gaps of batches) {
            const events = gaps.map((gap) => {
              rv += gap;
              all.push(rv);
              return event(rv, 1 + (rv % 40));
            });
            append(...events);
          }
          for (const probe of [...probes.map((p) => base + p), w.start, w.head]) {
            const r = w.after(probe);
            if (probe < w.start) {
              expect(r).toEqual({ kind: "expired", oldest: w.start });
            } else {
              expect(r.kind === "events" && r.events.map((e) => e.rv)).toEqual(all.filter((x) => x > probe));
              expect(w.bytesAfter(probe)).toBe(all.filter((x) => x > probe).reduce((n, x) => n + 1 + (x % 40), 0));
            }
          }
          expect(w.size).toBeLessThanOrEqual(Math.max(1, maxEvents));
          expect(w.size).toBe(all.filter((x) => x > w.start).length);
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });
});
