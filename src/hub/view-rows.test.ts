import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { compareRows, matches, VIEW_COLUMNS, type Filter, type SortKey, type ViewRow, type ViewSpec } from "../k8s/view.ts";
import type { Sql } from "./sql.ts";
import { HubStorage } from "./storage.ts";
import { MAX_VIEW_INDEXES, orderIndex, ViewRows } from "./view-rows.ts";

/** A hub's view rows over `sql`; a collection of at most `scan` objects is read without an index (none: an index for every order, even of no rows). */
const viewRows = (sql: () => Sql, now: () => number, scan = -1) => new ViewRows(sql, now, { size: () => sql().exec<{ n: number }>("SELECT COUNT(*) AS n FROM view_rows").one().n, objects: scan });

function open(scan = -1) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  let now = 0;
  return {
    rows: viewRows(
      () => storage.sql,
      () => now,
      scan,
    ),
    storage,
    later: (ms: number) => void (now += ms),
  };
}

/** Label keys every JavaScript object "has" through its prototype: a row has them only as its own. */
const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty"];
const labelKey = fc.constantFrom("app", "k8s.io/x", ...INHERITED);

// Few distinct values, so orders tie and filters match; text past the BMP and around it, where UTF-16 and SQLite's byte order part.
const text = fc.constantFrom("", "a", "B", "b", "web-1", "web-10", "web-2", "\uFFFF", "\u{1F600}", "é");
const value = fc.oneof(text, fc.integer({ min: -3, max: 3 }), fc.constant(null));
const row = fc.record({
  namespace: fc.constantFrom("", "a", "b"),
  name: text,
  created: fc.integer({ min: 0, max: 3 }),
  values: fc.array(value, { minLength: VIEW_COLUMNS - 1, maxLength: VIEW_COLUMNS - 1 }),
  labels: fc.dictionary(fc.constantFrom("app", "tier", "k8s.io/x", ...INHERITED), fc.constantFrom("a", "b")),
});
const sortKey: fc.Arbitrary<SortKey> = fc.oneof(
  fc.constant({ kind: "name" as const }),
  fc.constant({ kind: "namespace" as const }),
  fc.constant({ kind: "created" as const }),
  fc.integer({ min: 1, max: VIEW_COLUMNS - 1 }).map((index) => ({ kind: "column" as const, index })),
  labelKey.map((key) => ({ kind: "label" as const, key })),
);
const filter: fc.Arbitrary<Filter> = fc.oneof(
  fc.constantFrom("web", "b", "").map((contains) => ({ kind: "name" as const, contains })),
  fc.record({ index: fc.integer({ min: 0, max: 3 }), equals: fc.oneof(text, fc.integer({ min: -3, max: 3 })) }).map((f) => ({ kind: "column" as const, ...f })),
  fc.record({ key: labelKey, equals: fc.constantFrom("a", "b") }).map((f) => ({ kind: "label" as const, ...f })),
);
const spec: fc.Arbitrary<ViewSpec> = fc.record({
  sort: fc.array(fc.record({ by: sortKey, descending: fc.boolean() }), { maxLength: 3 }),
  filter: fc.array(filter, { maxLength: 2 }),
  offset: fc.integer({ min: 0, max: 10 }),
  limit: fc.integer({ min: 1, max: 10 }),
  rows: fc.constant("cells" as const),
});

/** Rows keyed by namespace and name, as the hub's are (the first of a key stands). */
function keyed(input: ReadonlyArray<Omit<ViewRow, "key" | "values"> & { values: ViewRow["values"] }>): ViewRow[] {
  const byKey = new Map<string, ViewRow>();
  for (const r of input) {
    const key = `${r.namespace}/${r.name}`;
    if (!byKey.has(key)) byKey.set(key, { ...r, key, values: [r.name, ...r.values] });
  }
  return [...byKey.values()];
}

describe("ViewRows", () => {
  it("reads a view's window and count from SQLite exactly as the view's order and filter have them in JavaScript", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 25 }), spec, fc.boolean(), (input, asked, scanned) => {
        // Through the order's index, or by a scan (a collection small enough to need none).
        const { rows, storage } = open(scanned ? 25 : -1);
        const all = keyed(input);
        storage.transaction(() => all.forEach((r, i) => rows.write(r.key, r, i + 1)));
        const expected = all.filter((r) => matches(asked, r)).sort(compareRows(asked));
        expect(rows.window(asked).map((r) => r.row)).toEqual(expected.slice(asked.offset, asked.offset + asked.limit));
        expect(rows.count(asked)).toBe(expected.length);
      }),
      { seed: 2026, numRuns: 300 },
    );
  });

  it("finds an anchor row's position in a view's order as JavaScript does, and none for a row the filter leaves out or that is not there", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 25 }), spec, fc.nat(), (input, asked, pick) => {
        const { rows, storage } = open();
        const all = keyed(input);
        storage.transaction(() => all.forEach((r, i) => rows.write(r.key, r, i + 1)));
        const expected = all.filter((r) => matches(asked, r)).sort(compareRows(asked));
        for (const anchor of all) {
          const at = expected.indexOf(anchor);
          expect(rows.position(asked, anchor.key)).toBe(at < 0 ? undefined : at);
        }
        expect(rows.position(asked, `nowhere/${pick}`)).toBeUndefined();
      }),
      { seed: 2026, numRuns: 300 },
    );
  });

  it("keeps a row's resourceVersion, replaces it, and deletes it", () => {
    const { rows, storage } = open();
    const r: ViewRow = { key: "a/x", namespace: "a", name: "x", created: 5, values: ["x", "1/1", 3], labels: { app: "web" } };
    storage.transaction(() => rows.write(r.key, r, 7));
    expect(rows.get("a/x")).toEqual({ rv: 7, row: { ...r, values: ["x", "1/1", 3, ...Array(VIEW_COLUMNS - 3).fill(null)] } });
    storage.transaction(() => rows.write(r.key, undefined, 8));
    expect(rows.get("a/x")).toBeUndefined();
  });

  it("reads a sorted window through its order's index, even where a filter's column has an index of its own", () => {
    const { storage } = open();
    const asked: Array<{ query: string; bindings: SqlStorageValue[] }> = [];
    const exec = (query: string, ...bindings: SqlStorageValue[]) => {
      asked.push({ query, bindings });
      return storage.sql.exec(query, ...bindings);
    };
    const rows = viewRows(
      () => ({ exec }) as Sql,
      () => 0,
    );
    // Every pod Running: an index on Status narrows nothing, and sorting what it finds by name is every row.
    const pods: ViewRow[] = Array.from({ length: 300 }, (_, i) => ({ key: `a/p${i}`, namespace: "a", name: `p${i}`, created: i, values: [`p${i}`, "1/1", "Running"], labels: {} }));
    storage.transaction(() => pods.forEach((r, i) => rows.write(r.key, r, i + 1)));
    rows.window({ sort: [{ by: { kind: "column", index: 2 }, descending: false }], filter: [], offset: 0, limit: 5 });
    asked.length = 0;
    const window = rows.window({ sort: [{ by: { kind: "name" }, descending: false }], filter: [{ kind: "column", index: 2, equals: "Running" }], offset: 0, limit: 5 });
    expect(window.map((r) => r.row.name)).toEqual(["p0", "p1", "p10", "p100", "p101"]);
    const read = asked.find((a) => a.query.includes("ORDER BY"));
    const plan = storage.sql
      .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${read?.query}`, ...(read?.bindings ?? []))
      .toArray()
      .map((p) => p.detail)
      .join("; ");
    expect(plan).not.toMatch(/TEMP B-TREE/);
    expect(plan).toMatch(/USING INDEX view_/);
  });

  it("makes an index for each order views ask for, and keeps the most recently asked for", () => {
    const { rows, storage } = open();
    const indexes = () => storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%'").toArray().length;
    const by = (index: number): ViewSpec => ({ sort: [{ by: { kind: "column", index }, descending: false }], filter: [], offset: 0, limit: 5, rows: "cells" });
    rows.window({ ...by(1), sort: [] });
    expect(indexes()).toBe(0); // the key's own order needs none
    for (let i = 1; i <= MAX_VIEW_INDEXES + 2; i++) rows.window(by(i % (VIEW_COLUMNS - 1)));
    expect(indexes()).toBe(MAX_VIEW_INDEXES);
    const plan = storage.sql.exec<{ detail: string }>("EXPLAIN QUERY PLAN SELECT key FROM view_rows ORDER BY c10, key LIMIT 5").toArray();
    expect(plan.map((p) => p.detail).join(" ")).toMatch(/USING (COVERING )?INDEX view_/);
    // A new instance finds the indexes storage kept, and still keeps no more.
    const again = viewRows(
      () => storage.sql,
      () => 0,
    );
    for (let i = 1; i <= 3; i++) again.window({ ...by(i), sort: [{ by: { kind: "label", key: `k${i}` }, descending: true }] });
    expect(indexes()).toBe(MAX_VIEW_INDEXES);
  });

  it("evicts the least recently asked for index only once the new one is made: a build that fails drops nothing", () => {
    const { storage } = open();
    const failing = { order: "" };
    const exec = (query: string, ...bindings: SqlStorageValue[]) => {
      if (failing.order && query.startsWith("CREATE INDEX") && query.includes(failing.order)) throw new Error("too many columns in index: SQLITE_ERROR");
      return storage.sql.exec(query, ...bindings);
    };
    const rows = viewRows(
      () => ({ exec }) as Sql,
      () => 0,
    );
    const indexes = () => storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%' ORDER BY name").toArray();
    const by = (key: string): ViewSpec => ({ sort: [{ by: { kind: "label", key }, descending: false }], filter: [], offset: 0, limit: 5, rows: "cells" });
    for (let i = 0; i < MAX_VIEW_INDEXES; i++) rows.window(by(`k${i}`));
    const kept = indexes();
    expect(kept).toHaveLength(MAX_VIEW_INDEXES);
    failing.order = "failing";
    expect(() => rows.window(by("failing"))).toThrow(/too many columns in index/);
    expect(indexes()).toEqual(kept);
    // Made, it takes the place of the least recently asked for.
    rows.window(by("made"));
    expect(indexes()).toHaveLength(MAX_VIEW_INDEXES);
    expect(indexes()).not.toContainEqual({ name: orderIndex(by("k0")) });
  });

  it("reads an order without an index by a scan while the collection is at most the scan's size, and makes its index once it is larger", () => {
    const { rows, storage } = open(3);
    const names = () => storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%'").toArray();
    const byApp: ViewSpec = { sort: [{ by: { kind: "label", key: "app" }, descending: true }], filter: [], offset: 0, limit: 2, rows: "cells" };
    const add = (n: number) => storage.transaction(() => rows.write(`a/p${n}`, { key: `a/p${n}`, namespace: "a", name: `p${n}`, created: 0, values: [`p${n}`], labels: { app: String(n) } }, n));
    for (const n of [1, 2, 3]) add(n);
    expect(rows.need(byApp)).toBe("none");
    expect(rows.window(byApp).map((r) => r.row.name)).toEqual(["p3", "p2"]);
    expect(names()).toEqual([]);
    add(4);
    expect(rows.need(byApp)).toBe("build");
    expect(rows.window(byApp).map((r) => r.row.name)).toEqual(["p4", "p3"]);
    expect(names()).toEqual([{ name: orderIndex(byApp) }]);
    expect(rows.need(byApp)).toBe("none");
  });

  it("never drops an index an open view reads through to make another, and says when none can be made", () => {
    const { rows, storage } = open();
    const names = () =>
      storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%'")
        .toArray()
        .map((i) => i.name);
    const by = (key: string): ViewSpec => ({ sort: [{ by: { kind: "label", key }, descending: false }], filter: [], offset: 0, limit: 5, rows: "cells" });
    storage.transaction(() => rows.write("a/p", { key: "a/p", namespace: "a", name: "p", created: 0, values: ["p"], labels: {} }, 1));
    const held = Array.from({ length: MAX_VIEW_INDEXES }, (_, i) => by(`k${i}`));
    for (const spec of held) {
      rows.hold(spec);
      rows.window(spec);
    }
    expect(rows.need(by("another"))).toBe("full");
    // One view closes: its index is the one that goes for the next order.
    rows.release(held[3] as ViewSpec);
    expect(rows.need(by("another"))).toBe("build");
    rows.window(by("another"));
    expect(names().sort()).toEqual([...held.filter((_, i) => i !== 3), by("another")].map((spec) => orderIndex(spec) as string).sort());
  });

  it("drops an index no open view reads through once none has read through it for the idle time, and keeps those open views read through", () => {
    const { rows, storage, later } = open();
    const indexes = () =>
      storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%' ORDER BY name")
        .toArray()
        .map((i) => i.name);
    const by = (index: number): ViewSpec => ({ sort: [{ by: { kind: "column", index }, descending: false }], filter: [], offset: 0, limit: 5, rows: "cells" });
    const [a, b, c] = [by(1), by(2), by(3)];
    for (const spec of [a, b, c]) rows.window(spec);
    const [ia, ib, ic] = [a, b, c].map((spec) => orderIndex(spec) as string);
    expect(indexes()).toEqual([ia, ib, ic].sort());
    later(50);
    rows.window(b); // read through again
    rows.hold(c); // an open view reads through it
    expect(rows.retire(100)).toEqual([]); // none idle for 100 yet
    later(60);
    // `a` last read 110 ago; `b` 60 ago; `c` 110 ago, but an open view reads through it.
    expect(rows.retire(100)).toEqual([ia]);
    expect(indexes()).toEqual([ib, ic].sort());
    later(60);
    // The view on `c` closes: idle from now. `b` goes, `c` not yet.
    rows.release(c);
    expect(rows.retire(100)).toEqual([ib]);
    later(100);
    expect(rows.retire(100)).toEqual([ic]);
    expect(indexes()).toEqual([]);
    // An order asked for again gets its index again; one a previous instance made counts as read through when first seen.
    rows.window(a);
    const again = viewRows(
      () => storage.sql,
      () => 1_000,
    );
    expect(again.retire(100)).toEqual([]);
    expect(indexes()).toEqual([ia]);
  });
});
