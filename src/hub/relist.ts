/**
 * @module
 * A list from the upstream, staged in the hub's storage a page at a time as it arrives (never
 * the whole list in memory, nor beside the collection in memory), and then either the hub's new
 * history or the difference from what the hub holds, as events. The difference is how an
 * upstream 410 stays invisible to subscribers: instead of making every subscriber relist, the
 * hub emits it as ordinary events, each at its own resourceVersion in `(from, to]`, in
 * resourceVersion order, so a resume from any of them stays exact.
 *
 * Added and modified objects keep their own resourceVersions: they were written in the gap, so
 * those lie in `(from, to]` and are distinct. Deleted objects get the latest ones left free
 * ("gone by then" is the claim that is always true); an object whose name another has taken
 * since gets one below its successor's, so a client that keys by name never sees the successor
 * deleted. Every change in the gap consumed at least one revision, so there are enough free
 * ones unless the upstream's history is inconsistent with the hub's (a restore from backup, a
 * different cluster): then there is no difference to tell, and the list starts a new history.
 */
import { objectsTable, type Sql } from "./storage.ts";
import { type ObjectEvent, type ObjectRecord, withVersion } from "./collection.ts";
import { readRow, viewRowsTable, writeRow } from "./view-rows.ts";

/** Keys compared in one step of a diff, between which the hub serves its other work. */
const DIFF_SCAN_PAGE = 2000;

export class StagedList {
  readonly #sql: () => Sql;
  readonly #transaction: <T>(write: () => T) => T;

  constructor(sql: () => Sql, transaction: <T>(write: () => T) => T) {
    this.#sql = sql;
    this.#transaction = transaction;
  }

  /** A list begins: nothing staged. */
  begin(): void {
    this.#transaction(() => {
      this.#drop();
      this.#sql().exec(objectsTable("listed"));
      this.#sql().exec("CREATE INDEX listed_by_rv ON listed (rv)");
      this.#sql().exec(viewRowsTable("listed_rows"));
    });
  }

  /** One page of the list, stored (with the objects' rows); `since`: the list's resourceVersion, where a new history's objects begin. */
  add(records: readonly ObjectRecord[], since: number): void {
    this.#transaction(() => {
      const sql = this.#sql();
      for (const o of records) {
        sql.exec("INSERT OR REPLACE INTO listed (key, uid, rv, since, json) VALUES (?, ?, ?, ?, ?)", o.key, o.uid, o.rv, since, o.json);
        if (o.row) writeRow(sql, "listed_rows", o.row, o.rv);
      }
    });
  }

  /**
   * The staged list (at `to`) against the collection (at `from`), as events to come: how many,
   * or `undefined` when the two histories cannot be told apart by events. Both are read in
   * pages of `page` keys, a range of keys at a time in one transaction, and `pause` runs
   * between pages, so a million-object diff never holds the hub's thread for more than a page:
   * the hub goes on serving its current state meanwhile, and the collection must not change.
   */
  async diff(from: number, to: number, pause: () => Promise<void>, page = DIFF_SCAN_PAGE): Promise<number | undefined> {
    if (to < from) return undefined;
    const sql = () => this.#sql();
    this.#transaction(() => {
      sql().exec("DROP TABLE IF EXISTS diff");
      sql().exec("DROP TABLE IF EXISTS diff_old");
      sql().exec("CREATE TABLE diff (rv INTEGER PRIMARY KEY, type TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL)");
      // The collection's objects that go: `next` is the resourceVersion of the one that took the name since, if any.
      sql().exec("CREATE TABLE diff_old (key TEXT PRIMARY KEY, uid TEXT NOT NULL, next INTEGER) WITHOUT ROWID");
    });
    // Two changes in the gap never share a resourceVersion (the collection's own are all at or below `from`).
    if (sql().exec("SELECT 1 FROM listed WHERE rv > ? GROUP BY rv HAVING COUNT(*) > 1 LIMIT 1", from).toArray().length > 0) return undefined;
    for (let after = ""; ; ) {
      const bound = this.#pageEnd(after, page);
      const consistent = this.#transaction(() => {
        // A range the table's key order serves: the last page has no end.
        const range = (column: string): [string, ...string[]] => (bound === null ? [`${column} > ?`, after] : [`${column} > ? AND ${column} <= ?`, after, bound]);
        const [listedRange, ...listedKeys] = range("l.key");
        const changed = sql()
          .exec<{ key: string; uid: string; rv: number; added: number }>(
            `SELECT l.key, l.uid, l.rv, (o.key IS NULL OR o.uid != l.uid) AS added FROM listed l LEFT JOIN objects o ON o.key = l.key WHERE ${listedRange} AND (o.key IS NULL OR o.uid != l.uid OR o.rv != l.rv)`,
            ...listedKeys,
          )
          .toArray();
        // A change in the gap has a resourceVersion inside it, of its own.
        if (changed.some((c) => c.rv <= from || c.rv > to)) return false;
        for (const c of changed) sql().exec("INSERT INTO diff (rv, type, key, uid) VALUES (?, ?, ?, ?)", c.rv, c.added ? "ADDED" : "MODIFIED", c.key, c.uid);
        const [objectsRange, ...objectsKeys] = range("o.key");
        sql().exec(
          `INSERT INTO diff_old (key, uid, next) SELECT o.key, o.uid, l.rv FROM objects o LEFT JOIN listed l ON l.key = o.key WHERE ${objectsRange} AND (l.key IS NULL OR l.uid != o.uid)`,
          ...objectsKeys,
        );
        return true;
      });
      if (!consistent) return undefined;
      if (bound === null) break;
      after = bound;
      await pause();
    }
    const taken = (rv: number) => sql().exec("SELECT 1 FROM diff WHERE rv = ?", rv).toArray().length > 0;
    // Names taken by another object since: each old one gone before its successor came.
    const beforeSuccessor = (next: number | null) => {
      let rv = (next as number) - 1;
      while (rv > from && taken(rv)) rv--;
      return rv > from ? rv : undefined;
    };
    if (!(await this.#deleted(true, beforeSuccessor, pause, page))) return undefined;
    // Gone: the latest revisions left free, in key order.
    let free = to;
    const latestFree = () => {
      while (free > from && taken(free)) free--;
      return free > from ? free-- : undefined;
    };
    if (!(await this.#deleted(false, latestFree, pause, page))) return undefined;
    return sql().exec<{ n: number }>("SELECT COUNT(*) AS n FROM diff").one().n;
  }

  /**
   * The DELETED events of the collection's objects that go (`renamed`: those whose name another
   * has taken since; else those gone), in key order, `page` a step, each at the revision `at`
   * gives it; false if it gives none.
   */
  async #deleted(renamed: boolean, at: (next: number | null) => number | undefined, pause: () => Promise<void>, page: number): Promise<boolean> {
    for (let after = ""; ; ) {
      const step = this.#transaction((): "more" | "done" | "none free" => {
        const sql = this.#sql();
        const rows = sql
          .exec<{ key: string; uid: string; next: number | null }>(`SELECT key, uid, next FROM diff_old WHERE next IS ${renamed ? "NOT " : ""}NULL AND key > ? ORDER BY key LIMIT ?`, after, page)
          .toArray();
        for (const row of rows) {
          const rv = at(row.next);
          if (rv === undefined) return "none free";
          sql.exec("INSERT INTO diff (rv, type, key, uid) VALUES (?, 'DELETED', ?, ?)", rv, row.key, row.uid);
          after = row.key;
        }
        return rows.length < page ? "done" : "more";
      });
      if (step !== "more") return step === "done";
      await pause();
    }
  }

  /** The last key of the next page after `after`: the `page`th key on from it in the staged list or the collection, whichever comes first; null when neither has that many left. */
  #pageEnd(after: string, page: number): string | null {
    const nth = (table: string) => `SELECT key FROM (SELECT key FROM ${table} WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?)`;
    return this.#sql()
      .exec<{ bound: string | null }>(`SELECT min(key) AS bound FROM (${nth("listed")} UNION ALL ${nth("objects")})`, after, page - 1, after, page - 1)
      .one().bound;
  }

  /** Up to `limit` of the difference's events after `after`, in resourceVersion order; the collection must not have moved past `after` meanwhile. */
  events(after: number, limit: number): ObjectEvent[] {
    const sql = this.#sql();
    const rows = sql.exec<{ rv: number; type: ObjectEvent["type"]; key: string; uid: string }>("SELECT rv, type, key, uid FROM diff WHERE rv > ? ORDER BY rv LIMIT ?", after, limit).toArray();
    return rows.map(({ rv, type, key, uid }) => {
      if (type !== "DELETED") {
        const listed = sql.exec<Omit<ObjectRecord, "row">>("SELECT key, uid, rv, json FROM listed WHERE key = ?", key).one();
        return { type, object: { ...listed, row: readRow(sql, "listed_rows", key)?.row } };
      }
      // Its last state, at the revision it is gone by: read before this page changes the collection.
      const last = sql.exec<Omit<ObjectRecord, "row">>("SELECT key, uid, rv, json FROM objects WHERE key = ? AND uid = ?", key, uid).one();
      return { type, object: withVersion(last, rv) };
    });
  }

  /** Done with the list: what was staged goes. */
  end(): void {
    this.#transaction(() => this.#drop());
  }

  #drop(): void {
    this.#sql().exec("DROP TABLE IF EXISTS diff");
    this.#sql().exec("DROP TABLE IF EXISTS diff_old");
    this.#sql().exec("DROP TABLE IF EXISTS listed");
    this.#sql().exec("DROP TABLE IF EXISTS listed_rows");
  }
}
