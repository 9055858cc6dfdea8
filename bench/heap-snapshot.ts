/**
 * @module
 * A V8 heap snapshot summed: bytes by constructor, and large strings by what retains them; enough
 * to find what holds a heap past its budgets without opening DevTools.
 */

/** The parts of the format this reads (`snapshot.meta` names the fields of the flat arrays). */
export interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapSummary {
  bytes: number;
  /** By node type and constructor name; largest first. */
  byConstructor: Array<{ type: string; name: string; count: number; bytes: number }>;
  /** Strings of at least `minString` bytes by the chain of their first retainers (nearest first); largest first. */
  stringsByRetainer: Array<{ path: string; count: number; bytes: number }>;
}

const NAMED = new Set(["object", "closure", "native", "hidden", "code"]);
/** The name V8 gives an array's elements when it writes them as a node of their own. */
const ELEMENTS = "(object elements)";

/** `top`: entries kept of each list; `depth`: retainers in a string's path. */
export function summarise(heap: HeapSnapshot, { top = 15, minString = 512, depth = 4 } = {}): HeapSummary {
  const meta = heap.snapshot.meta;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const [nodeTypes] = meta.node_types;
  const [edgeTypes] = meta.edge_types;
  const [T, N, S, C] = ["type", "name", "self_size", "edge_count"].map((name) => meta.node_fields.indexOf(name)) as [number, number, number, number];
  const [ET, EN, TO] = ["type", "name_or_index", "to_node"].map((name) => meta.edge_fields.indexOf(name)) as [number, number, number];
  const { nodes, edges, strings } = heap;
  const typeOf = (node: number) => nodeTypes[nodes[node + T] as number] ?? "?";
  const nameOf = (node: number) => strings[nodes[node + N] as number] ?? "";

  let bytes = 0;
  const constructors = new Map<string, { type: string; name: string; count: number; bytes: number }>();
  for (let node = 0; node < nodes.length; node += nodeFields) {
    const type = typeOf(node);
    const size = nodes[node + S] as number;
    bytes += size;
    const name = NAMED.has(type) ? nameOf(node) : "";
    const key = `${type}\0${name}`;
    const entry = constructors.get(key) ?? { type, name, count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += size;
    constructors.set(key, entry);
  }

  const retainer = new Map<number, { from: number; edge: string }>();
  for (let node = 0, edge = 0; node < nodes.length; node += nodeFields) {
    const count = nodes[node + C] as number;
    for (let i = 0; i < count; i++, edge += edgeFields) {
      const type = edgeTypes[edges[edge + ET] as number];
      if (type === "weak") continue;
      const to = edges[edge + TO] as number;
      if (retainer.has(to)) continue;
      const name = edges[edge + EN] as number;
      retainer.set(to, { from: node, edge: type === "element" || type === "hidden" ? "[]" : (strings[name] ?? "") });
    }
  }
  const paths = new Map<string, { path: string; count: number; bytes: number }>();
  for (let node = 0; node < nodes.length; node += nodeFields) {
    if (!typeOf(node).includes("string") || (nodes[node + S] as number) < minString) continue;
    const steps: string[] = [];
    for (let at = node, i = 0; i < depth; i++) {
      let by = retainer.get(at);
      if (!by) break;
      let edge = by.edge;
      // An array's elements are sometimes a store of their own, each edge named by its index:
      // named as the array's elements, as they are otherwise, so one path sums them all.
      const owner = nameOf(by.from) === ELEMENTS ? retainer.get(by.from) : undefined;
      if (owner) [by, edge] = [owner, "[]"];
      steps.push(`${nameOf(by.from).slice(0, 40) || typeOf(by.from)}.${edge}`);
      at = by.from;
    }
    const path = steps.join(" ← ");
    const entry = paths.get(path) ?? { path, count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += nodes[node + S] as number;
    paths.set(path, entry);
  }
  const largest = <E extends { bytes: number }>(entries: Iterable<E>) => [...entries].sort((a, b) => b.bytes - a.bytes).slice(0, top);
  return { bytes, byConstructor: largest(constructors.values()), stringsByRetainer: largest(paths.values()) };
}

export function summaryText(summary: HeapSummary): string {
  const mb = (n: number) => (n / 2 ** 20).toFixed(2).padStart(8);
  return [
    `${mb(summary.bytes)} MB in all`,
    "by constructor:",
    ...summary.byConstructor.map((c) => `${mb(c.bytes)} MB ${String(c.count).padStart(8)}  ${c.type}${c.name ? ` ${c.name}` : ""}`),
    "large strings, by what holds them:",
    ...summary.stringsByRetainer.map((s) => `${mb(s.bytes)} MB ${String(s.count).padStart(8)}  ${s.path}`),
  ].join("\n");
}
