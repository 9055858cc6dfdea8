/**
 * @module
 * What live views order and filter the collection by (`view_rows`: one narrow row per object,
 * its key's parts, creation time, labels and Table columns' values), kept beside the
 * collection in every transaction that changes it, and read in a view's order through SQLite
 * indexes made for the orders views ask for (DESIGN.md, "Live views"). Narrow on purpose: an
 * object's JSON is kilobytes, its row a few dozen bytes, so a scan or an index build over a
 * hundred thousand of them reads a few thousand pages, not a hundred thousand.
 */
import { beforeSql, filterSql, matches, orderSql, VIEW_COLUMNS, valueColumn, type ViewRow, type ViewSpec } from "../k8s/view.ts";
import type { Sql } from "./sql.ts";

const VALUE_COLUMNS = Array.from({ length: VIEW_COLUMNS - 1 }, (_, i) => valueColumn(i + 1));

/** The table's shape, under `name` (a staged list's rows are made beside the current ones). */
export const viewRowsTable = (name: string): string =>
  `CREATE TABLE IF NOT EXISTS ${name} (key TEXT PRIMARY KEY, rv INTEGER NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, created INTEGER NOT NULL, labels TEXT NOT NULL, ${VALUE_COLUMNS.join(", ")}) WITHOUT ROWID`;

const COLUMNS = `key, rv, namespace, name, created, labels, ${VALUE_COLUMNS.join(", ")}`;
const PLACES = Array.from({ length: 6 + VALUE_COLUMNS.length }, () => "?").join(", ");

/** What a commit did to one object's row: what it was (absent: not in the collection) and what it is now. */
export interface RowUpdate {
  readonly before: ViewRow | undefined;
  readonly after: ViewRow | undefined;
}

/** A row as stored, and the resourceVersion of the object it is of. */
export interface StoredRow {
  readonly row: ViewRow;
  readonly rv: number;
}

type SqlRow = Record<string, string | number | null> & { key: string; rv: number; namespace: string; name: string; created: number; labels: string };

/** Write a row into `table` (in the caller's transaction). */
export function writeRow(sql: Sql, table: string, row: ViewRow, rv: number): void {
  const values = VALUE_COLUMNS.map((_, i) => row.values[i + 1] ?? null);
  sql.exec(`INSERT OR REPLACE INTO ${table} (${COLUMNS}) VALUES (${PLACES})`, row.key, rv, row.namespace, row.name, row.created, JSON.stringify(row.labels), ...values);
}

/** The row at `key` in `table`. */
export function readRow(sql: Sql, table: string, key: string): StoredRow | undefined {
  const found = sql.exec<SqlRow>(`SELECT ${COLUMNS} FROM ${table} WHERE key = ?`, key).toArray()[0];
  return found && stored(found);
}

function stored(r: SqlRow): StoredRow {
  const values: Array<string | number | null> = [r.name];
  for (const column of VALUE_COLUMNS) values.push(r[column] ?? null);
  return { rv: r.rv, row: { key: r.key, namespace: r.namespace, name: r.name, created: r.created, values, labels: JSON.parse(r.labels) as Record<string, string> } };
}

/**
 * Most indexes made for views' orders a hub keeps: each costs every later write one more
 * B-tree update, so the least recently asked for that no open view reads through goes when
 * another is needed, and none is made while open views read through all of them.
 */
export const MAX_VIEW_INDEXES = 8;

/** The name of the index made for a view's order; none for the key's own order (a view sorted by nothing), which the table's is. */
export function orderIndex(spec: Pick<ViewSpec, "sort">): string | undefined {
  return spec.sort.length === 0 ? undefined : `view_${hash(orderSql(spec))}`;
}

/**
 * What reading a view's order takes: nothing more (its index is there, it needs none, or the
 * collection is small enough to scan), an index to be `built`, or one that cannot be, as open
 * views read through every index the hub may keep (`full`).
 */
export type IndexNeed = "none" | "build" | "full";

export interface ScanLimit {
  /** How many objects the collection has now. */
  size: () => number;
  /** A collection of at most this many is read without an index for an order that has none (`VIEW_SCAN_OBJECTS`). */
  objects: number;
}

export class ViewRows {
  readonly #sql: () => Sql;
  readonly #now: () => number;
  readonly #scan: ScanLimit;
  /** Indexes made for views' orders, by name, least recently used first; read from storage once. */
  #indexes: Set<string> | undefined;
  /** When each index was last read through (ms), or seen to be by an open view. */
  readonly #used = new Map<string, number>();
  /** How many open views read through each index, by name: none of these is dropped. */
  readonly #held = new Map<string, number>();

  constructor(sql: () => Sql, now: () => number, scan: ScanLimit) {
    this.#sql = sql;
    this.#now = now;
    this.#scan = scan;
  }

  /** Write an object's row, or delete it (`row` absent), in the caller's transaction. */
  write(key: string, row: ViewRow | undefined, rv: number): void {
    if (row) writeRow(this.#sql(), "view_rows", row, rv);
    else this.#sql().exec("DELETE FROM view_rows WHERE key = ?", key);
  }

  get(key: string): StoredRow | undefined {
    return readRow(this.#sql(), "view_rows", key);
  }

  /**
   * The rows of a view's window, in its order (an index made for the order first, if it needs
   * one), read through that index: O(offset + limit) rows where the filter passes most, and never
   * worse than one pass over the index. Left to itself, SQLite would rather narrow by an index of
   * a filter's column (`Status = 'Running'`) and then sort all it found, every row of a
   * collection where most are Running.
   */
  window(spec: Pick<ViewSpec, "sort" | "filter" | "offset" | "limit">): StoredRow[] {
    const index = this.#index(spec);
    const { where, params } = filterSql(spec);
    // The key's own order is the table's (WITHOUT ROWID, by key); a small collection without its order's index is scanned.
    const through = index === undefined ? "NOT INDEXED" : `INDEXED BY ${index}`;
    return this.#sql()
      .exec<SqlRow>(`SELECT ${COLUMNS} FROM view_rows ${through} WHERE ${where} ORDER BY ${orderSql(spec)} LIMIT ? OFFSET ?`, ...params, spec.limit, spec.offset)
      .toArray()
      .map(stored);
  }

  /** Where the row at `key` is in the view's order: how many rows that pass its filter come before it; `undefined` if it does not pass, or is not there. */
  position(spec: Pick<ViewSpec, "sort" | "filter">, key: string): number | undefined {
    const at = this.get(key)?.row;
    if (!at || !matches(spec, at)) return undefined;
    const filter = filterSql(spec);
    const before = beforeSql(spec, at);
    return this.#sql()
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM view_rows WHERE ${filter.where} AND (${before.where})`, ...filter.params, ...before.params)
      .one().n;
  }

  /** How many rows pass the view's filter. */
  count(spec: Pick<ViewSpec, "filter">): number {
    const { where, params } = filterSql(spec);
    return this.#sql()
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM view_rows WHERE ${where}`, ...params)
      .one().n;
  }

  /** A new history's rows: the staged list's replace the current ones, in the caller's transaction; the indexes made on them go too. */
  replaceWithListed(): void {
    const sql = this.#sql();
    sql.exec("DROP TABLE view_rows");
    sql.exec("ALTER TABLE listed_rows RENAME TO view_rows");
    this.#indexes = new Set();
    this.#used.clear();
  }

  /** An open view reads through its order's index from now on, until `release`: it is not dropped meanwhile. */
  hold(spec: Pick<ViewSpec, "sort">): void {
    const name = orderIndex(spec);
    if (name !== undefined) this.#held.set(name, (this.#held.get(name) ?? 0) + 1);
  }

  release(spec: Pick<ViewSpec, "sort">): void {
    const name = orderIndex(spec);
    const held = name === undefined ? 0 : (this.#held.get(name) ?? 0);
    if (name === undefined || held === 0) return;
    if (held > 1) this.#held.set(name, held - 1);
    else this.#held.delete(name);
    // Idle from now, not from when it was last asked for.
    if (held === 1 && this.#used.has(name)) this.#used.set(name, this.#now());
  }

  /** What reading the view's order takes now (`IndexNeed`): an index is made only where the collection is larger than a scan is worth. */
  need(spec: Pick<ViewSpec, "sort">): IndexNeed {
    const name = orderIndex(spec);
    const indexes = (this.#indexes ??= this.#stored());
    if (name === undefined || indexes.has(name) || this.#scan.size() <= this.#scan.objects) return "none";
    return indexes.size < MAX_VIEW_INDEXES || [...indexes].some((i) => !this.#held.has(i)) ? "build" : "full";
  }

  /**
   * Indexes of views' orders that no open view reads through and none has for `idleMs`,
   * dropped: each costs every write to the collection more rows written (billed) for as long as
   * it stays, and a dashboard that once tried an order would otherwise leave its index on the
   * hub for good. Those a previous instance made count as read through when this one first
   * looks. Returns the names dropped.
   */
  retire(idleMs: number): string[] {
    const indexes = (this.#indexes ??= this.#stored());
    const now = this.#now();
    const dropped: string[] = [];
    for (const name of indexes) {
      const used = this.#used.get(name);
      if (used === undefined || this.#held.has(name)) this.#used.set(name, now);
      else if (now - used >= idleMs) dropped.push(name);
    }
    for (const name of dropped) this.#drop(name);
    return dropped;
  }

  /**
   * The index that serves the view's order, made if need be; none for the key's own order (a
   * view sorted by nothing) and none for an order without one over a collection small enough to
   * scan: a scan of its narrow rows costs about what the index's build would, and writes nothing.
   */
  #index(spec: Pick<ViewSpec, "sort">): string | undefined {
    const name = orderIndex(spec);
    if (name === undefined) return undefined;
    const indexes = (this.#indexes ??= this.#stored());
    if (indexes.delete(name)) {
      this.#used.set(name, this.#now());
      indexes.add(name);
      return name;
    }
    if (this.#scan.size() <= this.#scan.objects) return undefined;
    // Made before another goes: a build that fails (SQLite's own limits) costs no view its index.
    this.#sql().exec(`CREATE INDEX IF NOT EXISTS ${name} ON view_rows (${orderSql(spec)})`);
    this.#used.set(name, this.#now());
    // The least recently asked for that no open view reads through; a view admitted while none
    // was free (its collection grew past a scan since) leaves the hub one over until one is.
    for (const old of indexes) {
      if (indexes.size < MAX_VIEW_INDEXES) break;
      if (!this.#held.has(old)) this.#drop(old);
    }
    indexes.add(name);
    return name;
  }

  #drop(name: string): void {
    this.#sql().exec(`DROP INDEX IF EXISTS ${name}`);
    this.#indexes?.delete(name);
    this.#used.delete(name);
  }

  /** The views' indexes a previous instance made, which storage kept. */
  #stored(): Set<string> {
    const rows = this.#sql().exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'view_rows' AND name LIKE 'view\\_%' ESCAPE '\\'").toArray();
    return new Set(rows.map((r) => r.name));
  }
}

/** A short stable name for an order (FNV-1a, 32 bits, hex). */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
