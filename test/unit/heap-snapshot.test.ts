import { describe, expect, it } from "vitest";
import { summarise, type HeapSnapshot } from "../../bench/heap-snapshot.ts";

/**
 * A snapshot in V8's format: root → LineTail →(entry) Object →(line) a 600-byte string, the
 * LineTail also pointing at that string weakly, and a small string nothing holds.
 */
function snapshot(): HeapSnapshot {
  const strings = ["", "root", "LineTail", "Object", "x".repeat(600), "small", "tail", "entry", "line", "w"];
  const type = { object: 3, string: 2, synthetic: 9 };
  const edge = { element: 1, property: 2, weak: 6 };
  // type, name, id, self_size, edge_count
  const nodes = [type.synthetic, 1, 1, 0, 1, type.object, 2, 3, 100, 2, type.object, 3, 5, 50, 1, type.string, 4, 7, 600, 0, type.string, 5, 9, 10, 0];
  // type, name_or_index, to_node (an offset into nodes)
  const edges = [edge.property, 6, 5, edge.weak, 9, 15, edge.property, 7, 10, edge.property, 8, 15];
  return {
    snapshot: {
      meta: {
        node_fields: ["type", "name", "id", "self_size", "edge_count"],
        node_types: [["hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native", "synthetic", "concatenated string", "sliced string"]],
        edge_fields: ["type", "name_or_index", "to_node"],
        edge_types: [["context", "element", "property", "internal", "hidden", "shortcut", "weak"]],
      },
    },
    nodes,
    edges,
    strings,
  };
}

describe("a heap snapshot, summed", () => {
  it("totals self sizes by constructor, largest first", () => {
    const summary = summarise(snapshot());
    expect(summary.bytes).toBe(760);
    expect(summary.byConstructor.map((c) => [c.type, c.name, c.count, c.bytes])).toEqual([
      ["string", "", 2, 610],
      ["object", "LineTail", 1, 100],
      ["object", "Object", 1, 50],
      ["synthetic", "", 1, 0],
    ]);
  });

  it("names what holds each large string by its strong retainers, nearest first", () => {
    const summary = summarise(snapshot(), { minString: 512 });
    expect(summary.stringsByRetainer).toEqual([{ path: "Object.line ← LineTail.entry ← root.tail", count: 1, bytes: 600 }]);
    expect(summarise(snapshot(), { minString: 512, depth: 1 }).stringsByRetainer[0]?.path).toBe("Object.line");
  });
});
