import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventWindow, type WindowEvent } from "../../src/hub/window.ts";

const event = (rv: number, size = 10): WindowEvent => ({ rv, line: `${"x".repeat(size - 1)}\n` });

describe("EventWindow", () => {
  it("replays exactly the events after a resume point", () => {
    const w = new EventWindow({ maxEvents: 10, maxBytes: 1e6 });
    w.reset(100);
    for (const rv of [101, 105, 107]) w.append(event(rv));
    const replayAfter = (rv: number) => {
      const r = w.after(rv);
      return r.kind === "events" ? r.events.map((e) => e.rv) : r.kind;
    };
    expect(replayAfter(100)).toEqual([101, 105, 107]);
    expect(replayAfter(101)).toEqual([105, 107]);
    expect(replayAfter(103)).toEqual([105, 107]); // a bookmark RV between events
    expect(replayAfter(107)).toEqual([]);
    expect(replayAfter(200)).toEqual([]); // ahead: nothing yet
    expect(replayAfter(99)).toBe("expired");
  });

  it("evicts by count and moves the start to the last evicted event", () => {
    const w = new EventWindow({ maxEvents: 2, maxBytes: 1e6 });
    w.reset(10);
    w.append(event(11));
    w.append(event(12));
    expect(w.append(event(13))).toBe(11);
    expect(w.start).toBe(11);
    expect(w.after(10)).toEqual({ kind: "expired", oldest: 11 });
    expect(w.after(11)).toMatchObject({ kind: "events" });
  });

  it("evicts by bytes but always keeps the newest event", () => {
    const w = new EventWindow({ maxEvents: 100, maxBytes: 25 });
    w.reset(0);
    w.append(event(1, 10));
    w.append(event(2, 10));
    expect(w.bytes).toBe(20);
    w.append(event(3, 10));
    expect(w.size).toBe(2);
    w.append(event(4, 100));
    expect(w.size).toBe(1);
    expect(w.start).toBe(3);
  });

  it("bookmarks advance the head without adding events", () => {
    const w = new EventWindow({ maxEvents: 10, maxBytes: 1e6 });
    w.reset(5);
    w.advance(9);
    expect(w.head).toBe(9);
    expect(() => w.append(event(8))).toThrow(RangeError);
    w.append(event(10));
    expect(w.head).toBe(10);
  });

  it("limits a read to about maxBytes but always returns at least one event", () => {
    const w = new EventWindow({ maxEvents: 100, maxBytes: 1e6 });
    w.reset(0);
    for (let rv = 1; rv <= 10; rv++) w.append(event(rv, 100));
    const r = w.after(0, 250);
    expect(r.kind === "events" && r.events.map((e) => e.rv)).toEqual([1, 2, 3]);
    const one = w.after(0, 1);
    expect(one.kind === "events" && one.events.length).toBe(1);
  });

  it("restores from storage with its bounds", () => {
    const w = new EventWindow({ maxEvents: 10, maxBytes: 1e6 });
    w.restore([event(4), event(6)], 3, 8);
    expect([w.start, w.head, w.size]).toEqual([3, 8, 2]);
    expect(w.after(3)).toMatchObject({ kind: "events", events: [{ rv: 4 }, { rv: 6 }] });
    expect([w.bytesAfter(3), w.bytesAfter(4), w.bytesAfter(6)]).toEqual([20, 10, 0]);
  });

  it("counts the bytes after a position across evictions and the compaction of its array", () => {
    const w = new EventWindow({ maxEvents: 1500, maxBytes: 1e9 });
    w.reset(0);
    for (let rv = 1; rv <= 5000; rv++) w.append(event(rv, 1 + (rv % 7)));
    const expected = (after: number) => Array.from({ length: 5000 - after }, (_, i) => 1 + ((after + 1 + i) % 7)).reduce((a, b) => a + b, 0);
    for (const rv of [w.start, 4000, 4999, 5000]) expect(w.bytesAfter(rv), `after ${rv}`).toBe(expected(rv));
    w.reset(5000);
    w.append(event(5001, 33));
    expect(w.bytesAfter(5000)).toBe(33);
  });

  it("property: every resume at or after the start gets exactly the newer events, in order; older ones get 410", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 20 }),
        (base, gaps, maxEvents, maxBytes, probes) => {
          const w = new EventWindow({ maxEvents, maxBytes });
          w.reset(base);
          const all: number[] = [];
          let rv = base;
          for (const gap of gaps) {
            rv += gap;
            all.push(rv);
            w.append(event(rv, 1 + (rv % 40)));
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
          expect(w.size).toBeLessThanOrEqual(maxEvents);
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });
});
