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

/**
 * root →(list) Array, whose elements V8 wrote as a node of their own, `(object elements)`, each
 * element an internal edge named by its index, to an Object →(line) a 600-byte string.
 */
function arrayWithElementsStore(): HeapSnapshot {
  const strings = ["", "root", "Array", "(object elements)", "Object", "x".repeat(600), "y".repeat(600), "list", "elements", "0", "1", "line"];
  const type = { array: 1, string: 2, object: 3, synthetic: 9 };
  const edge = { property: 2, internal: 3 };
  const nodes = [
    type.synthetic,
    1,
    1,
    0,
    1,
    type.object,
    2,
    3,
    32,
    1,
    type.array,
    3,
    5,
    32,
    2,
    type.object,
    4,
    7,
    50,
    1,
    type.object,
    4,
    9,
    50,
    1,
    type.string,
    5,
    11,
    600,
    0,
    type.string,
    6,
    13,
    600,
    0,
  ];
  const edges = [edge.property, 7, 5, edge.internal, 8, 10, edge.internal, 9, 15, edge.internal, 10, 20, edge.property, 11, 25, edge.property, 11, 30];
  return { ...snapshot(), nodes, edges, strings };
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

  it("names an array's elements as the array's, whether or not V8 wrote them as a store of their own", () => {
    expect(summarise(arrayWithElementsStore(), { minString: 512 }).stringsByRetainer).toEqual([{ path: "Object.line ← Array.[] ← root.list", count: 2, bytes: 1200 }]);
  });
});
