/**
 * @module
 * A live view of a collection (the relay's own, beside list and watch): a window of its rows in
 * an order and under a filter a client chooses, with the count of rows that match, kept live as
 * row changes (DESIGN.md, "Live views"). This module is the protocol: what a view asks for
 * (`sort`, `filter`, `offset`, `limit`, `rows`), parsed and checked against the resource's Table
 * columns as `kubectl get` prints them; the order and the filter over a row's values, in SQL
 * and in JavaScript alike; and the changes that turn one window into the next.
 */
import type { Result } from "./status.ts";
import { badRequest } from "./status.ts";
import { orderValues, type TableResource } from "./table.ts";
import type { KubeObject } from "./types.ts";

/** What a row is ordered and filtered by: its key's parts, its creation time, its Table columns' values, its labels. */
export interface ViewRow {
  /** `namespace/name` (or `name`): the tie-breaker of every order, so ties keep one order. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** `metadata.creationTimestamp`, in ms. */
  readonly created: number;
  /** One per column of the resource's Table, as `orderValues` gives them. */
  readonly values: ReadonlyArray<string | number | null>;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Columns a view may sort and filter by: every built-in Table has fewer (a pod's has 9, a
 * node's 10); each is a column of the hub's `view_rows`, `name` then `c1`…`c11`.
 */
export const VIEW_COLUMNS = 12;

/** An object's row: what the hub keeps of it, in `view_rows`, to order and filter it by. */
export function viewRowOf(resource: TableResource, key: string, object: KubeObject): ViewRow {
  const metadata = object.metadata ?? {};
  const created = metadata.creationTimestamp ? Date.parse(metadata.creationTimestamp) || 0 : 0;
  return { key, namespace: metadata.namespace ?? "", name: metadata.name ?? "", created, values: orderValues(resource, object).slice(0, VIEW_COLUMNS), labels: metadata.labels ?? {} };
}

export type SortKey = { kind: "name" } | { kind: "namespace" } | { kind: "created" } | { kind: "column"; index: number } | { kind: "label"; key: string };

export type Filter = { kind: "name"; contains: string } | { kind: "column"; index: number; equals: string | number } | { kind: "label"; key: string; equals: string };

export interface ViewSpec {
  /** In order of precedence; the key breaks what ties remain. */
  sort: Array<{ by: SortKey; descending: boolean }>;
  /** All must hold. */
  filter: Filter[];
  /** The window: its first row's position in the order, and how many rows. */
  offset: number;
  limit: number;
  /**
   * A cursor: the window starts at this row (`namespace/name`, or `name` for a cluster-scoped
   * object) instead of at `offset`, found where the view opens; from then on, the window is
   * at that row's offset.
   */
  anchor?: string;
  /** Each row as the object, or as its Table cells. */
  rows: "cells" | "object";
}

export const VIEW_LIMIT_DEFAULT = 50;
export const VIEW_LIMIT_MAX = 500;
/**
 * Most sort keys and filter terms a view may have: an anchor's position is counted in one
 * statement whose bound parameters grow with the square of the keys (`beforeSql`: 45 at 8, and
 * the filter's beside them, of the 100 a Durable Object's SQLite takes), an order's index has a
 * column per key, and the filter is one expression of its terms.
 */
export const VIEW_SORT_KEYS_MAX = 8;
export const VIEW_FILTERS_MAX = 16;

/** A label key as the API server validates one (`[prefix/]name`), which makes it safe in a JSON path. */
const LABEL_KEY = /^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * The view a query asks for (`sort=-Status,name&filter=name~web,Status=Running&offset=0&limit=50&rows=cells`),
 * against the resource's columns, or the 400 that says what is wrong. Names are the columns'
 * (any case), `name`, `namespace`, `creationTimestamp` and `label:<key>`; `-` is descending;
 * a filter is `name~<text>` (the name contains it, in any case), `<column>=<value>` or
 * `label:<key>=<value>`.
 */
export function parseViewSpec(query: URLSearchParams, tableColumns: ReadonlyArray<{ name: string; value: "text" | "number" | "time" }>): Result<ViewSpec> {
  const columns = tableColumns.slice(0, VIEW_COLUMNS);
  const bad = (message: string): Result<ViewSpec> => ({ ok: false, status: badRequest(`invalid view: ${message}`) });
  const columnOf = (name: string) => columns.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
  const names = () => ["name", "namespace", "creationTimestamp", ...columns.map((c) => c.name), "label:<key>"].join(", ");
  const sort: ViewSpec["sort"] = [];
  const sortTerms = (query.get("sort") ?? "").split(",").filter((t) => t !== "");
  if (sortTerms.length > VIEW_SORT_KEYS_MAX) return bad(`at most ${VIEW_SORT_KEYS_MAX} sort keys, got ${sortTerms.length}: sort by fewer (the key breaks whatever ties remain)`);
  for (const term of sortTerms) {
    const descending = term.startsWith("-");
    const name = descending ? term.slice(1) : term;
    let by: SortKey;
    if (name.startsWith("label:")) {
      const key = name.slice("label:".length);
      if (!LABEL_KEY.test(key)) return bad(`sort by ${JSON.stringify(name)}: not a label key`);
      by = { kind: "label", key };
    } else if (name === "namespace") by = { kind: "namespace" };
    else if (name === "creationTimestamp") by = { kind: "created" };
    else if (columnOf(name) === 0 || name === "name") by = { kind: "name" };
    else if (columnOf(name) > 0) by = { kind: "column", index: columnOf(name) };
    else return bad(`cannot sort by ${JSON.stringify(name)}: sort by one of ${names()}, each with - in front for descending`);
    sort.push({ by, descending });
  }
  const filter: Filter[] = [];
  const filterTerms = (query.get("filter") ?? "").split(",").filter((t) => t !== "");
  if (filterTerms.length > VIEW_FILTERS_MAX) return bad(`at most ${VIEW_FILTERS_MAX} filter terms, got ${filterTerms.length}: filter by fewer`);
  for (const term of filterTerms) {
    const contains = /^name~(.*)$/.exec(term);
    if (contains) {
      filter.push({ kind: "name", contains: (contains[1] ?? "").toLowerCase() });
      continue;
    }
    const equals = /^([^=]+)=(.*)$/.exec(term);
    if (!equals) return bad(`filter ${JSON.stringify(term)}: write name~<text>, <column>=<value> or label:<key>=<value>`);
    const [, name = "", value = ""] = equals;
    if (name.startsWith("label:")) {
      const key = name.slice("label:".length);
      if (!LABEL_KEY.test(key)) return bad(`filter on ${JSON.stringify(name)}: not a label key`);
      filter.push({ kind: "label", key, equals: value });
      continue;
    }
    const index = columnOf(name);
    const filterable = columns.filter((c) => c.value !== "time").map((c) => c.name);
    if (index < 0 || columns[index]?.value === "time")
      return bad(`cannot filter on ${JSON.stringify(name)}: filter on one of ${filterable.join(", ")}, a label (label:<key>=<value>) or the name (name~<text>)`);
    const numeric = columns[index]?.value === "number";
    if (numeric && !/^-?\d+$/.test(value)) return bad(`${columns[index]?.name} is a number: ${JSON.stringify(value)} is not one`);
    filter.push({ kind: "column", index, equals: numeric ? Number(value) : value });
  }
  const number = (name: string, fallback: number, max: number): number | string => {
    const raw = query.get(name);
    if (raw === null || raw === "") return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) > max) return `${name} must be a whole number from 0 to ${max}, got ${JSON.stringify(raw)}`;
    return Number(raw);
  };
  const offset = number("offset", 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset === "string") return bad(offset);
  const anchor = query.get("anchor") ?? "";
  if (anchor !== "" && query.get("offset") !== null) return bad("give the window's start as offset or as anchor, not both");
  // An object's key: a namespace and a name (each at most 253 characters), or a name.
  if (anchor.length > 507 || /^\/|\/$|\/.*\//.test(anchor)) return bad(`anchor ${JSON.stringify(anchor.slice(0, 80))} is not a row's key: namespace/name, or name for a cluster-scoped object`);
  const limit = number("limit", VIEW_LIMIT_DEFAULT, VIEW_LIMIT_MAX);
  if (typeof limit === "string") return bad(limit);
  if (limit === 0) return bad("limit must be at least 1");
  const rows = query.get("rows") ?? "cells";
  if (rows !== "cells" && rows !== "object") return bad(`rows is cells or object, got ${JSON.stringify(rows)}`);
  return { ok: true, value: { sort, filter, offset, limit, rows, ...(anchor === "" ? {} : { anchor }) } };
}

/** The SQL column of a Table column's value in `view_rows`. */
export const valueColumn = (index: number): string => (index === 0 ? "name" : `c${index}`);

/** A key of the order, as SQL over a `view_rows` row (`namespace`, `name`, `created`, `c1`…, and `labels` as JSON). */
function sqlOf(by: SortKey): string {
  switch (by.kind) {
    case "name":
      return "name";
    case "namespace":
      return "namespace";
    case "created":
      return "created";
    case "column":
      return valueColumn(by.index);
    case "label":
      // The key passed LABEL_KEY: no quote or backslash can be in it.
      return `json_extract(labels, '$."${by.key}"')`;
  }
}

/** The view's order as an SQL `ORDER BY` list, the key last. */
export function orderSql(spec: Pick<ViewSpec, "sort">): string {
  return [...spec.sort.map((s) => `${sqlOf(s.by)}${s.descending ? " DESC" : ""}`), "key"].join(", ");
}

/**
 * Rows that come before `row` in the view's order, as an SQL condition and its parameters: the
 * order's keys compared one after another as `orderSql` sorts them (SQLite's NULL first, so
 * last where descending), the key breaking the last tie.
 */
export function beforeSql(spec: Pick<ViewSpec, "sort">, row: ViewRow): { where: string; params: Array<string | number | null> } {
  const terms = [...spec.sort.map((s) => ({ sql: sqlOf(s.by), value: valueAt(row, s.by), descending: s.descending })), { sql: "key", value: row.key, descending: false }];
  const alternatives: string[] = [];
  const params: Array<string | number | null> = [];
  terms.forEach((term, i) => {
    const tied = terms.slice(0, i).map((t) => {
      params.push(t.value);
      return `${t.sql} IS ?`;
    });
    // Before it: less ascending, more descending; a NULL is less than any value.
    if (term.value === null) {
      if (!term.descending) return void params.splice(params.length - i, i);
      tied.push(`${term.sql} IS NOT NULL`);
    } else {
      tied.push(term.descending ? `${term.sql} > ?` : `(${term.sql} IS NULL OR ${term.sql} < ?)`);
      params.push(term.value);
    }
    alternatives.push(`(${tied.join(" AND ")})`);
  });
  return { where: alternatives.length === 0 ? "0" : alternatives.join(" OR "), params };
}

/** The view's filter as an SQL condition and its parameters (`1` when it has none). */
export function filterSql(spec: Pick<ViewSpec, "filter">): { where: string; params: Array<string | number> } {
  const where: string[] = [];
  const params: Array<string | number> = [];
  for (const f of spec.filter) {
    if (f.kind === "name") {
      where.push("instr(lower(name), ?) > 0");
      params.push(f.contains);
    } else {
      where.push(`${sqlOf(f.kind === "column" ? { kind: "column", index: f.index } : { kind: "label", key: f.key })} = ?`);
      params.push(f.equals);
    }
  }
  return { where: where.length === 0 ? "1" : where.join(" AND "), params };
}

function valueAt(row: ViewRow, by: SortKey): string | number | null {
  switch (by.kind) {
    case "name":
      return row.name;
    case "namespace":
      return row.namespace;
    case "created":
      return row.created;
    case "column":
      return row.values[by.index] ?? null;
    case "label":
      // Its own labels only: every object "has" `constructor` and `toString` (SQL's json_extract has no such thing).
      return Object.hasOwn(row.labels, by.key) ? (row.labels[by.key] ?? null) : null;
  }
}

/** Whether a row passes the view's filter (as `filterSql` has it). */
export function matches(spec: Pick<ViewSpec, "filter">, row: ViewRow): boolean {
  return spec.filter.every((f) => {
    if (f.kind === "name") return row.name.toLowerCase().includes(f.contains);
    return valueAt(row, f.kind === "column" ? { kind: "column", index: f.index } : { kind: "label", key: f.key }) === f.equals;
  });
}

/**
 * SQLite's order of values: NULL first, then numbers, then text by its UTF-8 bytes (which is the
 * order of code points: UTF-16 code units differ from it only past the surrogates).
 */
export function compareValues(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === "number") return typeof b === "number" ? a - b : -1;
  if (typeof b === "number") return 1;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** The view's order over rows, as `orderSql` has it. */
export function compareRows(spec: Pick<ViewSpec, "sort">): (a: ViewRow, b: ViewRow) => number {
  return (a, b) => {
    for (const { by, descending } of spec.sort) {
      const order = compareValues(valueAt(a, by), valueAt(b, by));
      if (order !== 0) return descending ? -order : order;
    }
    return compareValues(a.key, b.key);
  };
}

/** A change of a view's window: applied in order to the client's rows, they give the server's. */
export type RowChange<R> = { op: "insert"; at: number; row: R } | { op: "remove"; at: number } | { op: "update"; at: number; row: R } | { op: "move"; from: number; to: number };

/**
 * The changes that turn the window `before` into `after` (rows known by `key`; a row whose
 * `version` differs is updated): removals of what left, then, position by position, a move of
 * a row that was further down, or an insertion of one that came in, and an update of one that
 * changed. A window is a page (at most a few hundred rows), so this is quadratic at worst.
 */
export function windowChanges<R>(before: readonly R[], after: readonly R[], key: (row: R) => string, version: (row: R) => unknown): Array<RowChange<R>> {
  const changes: Array<RowChange<R>> = [];
  const kept = new Set(after.map(key));
  const rows = [...before];
  for (let i = rows.length - 1; i >= 0; i--) {
    if (kept.has(key(rows[i] as R))) continue;
    changes.push({ op: "remove", at: i });
    rows.splice(i, 1);
  }
  after.forEach((row, to) => {
    const at = rows.findIndex((r) => key(r) === key(row));
    if (at < 0) {
      changes.push({ op: "insert", at: to, row });
      rows.splice(to, 0, row);
      return;
    }
    if (at !== to) {
      changes.push({ op: "move", from: at, to });
      rows.splice(to, 0, ...rows.splice(at, 1));
    }
    if (version(rows[to] as R) !== version(row)) {
      changes.push({ op: "update", at: to, row });
      rows[to] = row;
    }
  });
  return changes;
}

/** `changes` applied to `rows` (a client's side of `windowChanges`). */
export function applyChanges<R>(rows: readonly R[], changes: ReadonlyArray<RowChange<R>>): R[] {
  const out = [...rows];
  for (const change of changes) {
    if (change.op === "insert") out.splice(change.at, 0, change.row);
    else if (change.op === "remove") out.splice(change.at, 1);
    else if (change.op === "update") out[change.at] = change.row;
    else out.splice(change.to, 0, ...out.splice(change.from, 1));
  }
  return out;
}
