import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter, LineTooLong } from "../../src/k8s/ndjson.ts";

describe("LineSplitter", () => {
  it("returns only complete lines and holds the rest", () => {
    const s = new LineSplitter();
    expect(s.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(s.pending).toBe(4);
    expect(s.push(":2}\n\n")).toEqual(['{"b":2}']);
    expect(s.pending).toBe(0);
  });

  it("property: any chunking of UTF-8 bytes yields the same lines", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme", minLength: 1 }).filter((s) => !s.includes("\n") && s.trim() !== ""),
          { maxLength: 20 },
        ),
        fc.array(fc.nat(), { maxLength: 30 }),
        (lines, cuts) => {
          const bytes = new TextEncoder().encode(lines.map((l) => `${l}\n`).join(""));
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const splitter = new LineSplitter();
          const out: string[] = [];
          let prev = 0;
          for (const p of [...points, bytes.length]) {
            out.push(...splitter.push(bytes.subarray(prev, p)));
            prev = p;
          }
          expect(out).toEqual(lines);
        },
      ),
      { seed: 3, numRuns: 300 },
    );
  });

  it("keeps a long line's pieces until it ends, and joins them once", () => {
    const lines = new LineSplitter();
    const piece = "x".repeat(1000);
    for (let i = 0; i < 100; i++) expect(lines.push(piece)).toEqual([]);
    expect(lines.pending).toBe(100_000);
    expect(lines.push("y\nz")).toEqual([`${piece.repeat(100)}y`]);
    expect(lines.pending).toBe(1);
  });

  it("refuses a line longer than it may be once it has grown past it, not when it ends", () => {
    const lines = new LineSplitter(10);
    expect(lines.push("0123456789\n01234")).toEqual(["0123456789"]);
    expect(() => lines.push("56789a")).toThrow(LineTooLong);
    expect(() => new LineSplitter(10).push("0123456789a\n")).toThrow(LineTooLong);
  });
});
