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

/** Keys read at a time while deletions are given their resourceVersions. */
const KEYS_PAGE = 500;

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
   * or `undefined` when the two histories cannot be told apart by events.
   */
  diff(from: number, to: number): number | undefined {
    if (to < from) return undefined;
    return this.#transaction(() => {
      const sql = this.#sql();
      sql.exec("DROP TABLE IF EXISTS diff");
      sql.exec("CREATE TABLE diff (rv INTEGER PRIMARY KEY, type TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL)");
      const changed = "FROM listed l LEFT JOIN objects o ON o.key = l.key WHERE (o.key IS NULL OR o.uid != l.uid OR o.rv != l.rv)";
      // A change in the gap has a resourceVersion inside it, of its own.
      if (sql.exec(`SELECT 1 ${changed} AND (l.rv <= ? OR l.rv > ?) LIMIT 1`, from, to).toArray().length > 0) return undefined;
      if (sql.exec("SELECT 1 FROM listed WHERE rv > ? GROUP BY rv HAVING COUNT(*) > 1 LIMIT 1", from).toArray().length > 0) return undefined;
      sql.exec(`INSERT INTO diff (rv, type, key, uid) SELECT l.rv, CASE WHEN o.key IS NULL OR o.uid != l.uid THEN 'ADDED' ELSE 'MODIFIED' END, l.key, l.uid ${changed}`);
      const taken = (rv: number) => sql.exec("SELECT 1 FROM diff WHERE rv = ?", rv).toArray().length > 0;
      const remove = (key: string, uid: string, rv: number) => sql.exec("INSERT INTO diff (rv, type, key, uid) VALUES (?, 'DELETED', ?, ?)", rv, key, uid);
      // Names taken by another object since: each old one gone before its successor came.
      for (let after = ""; ; ) {
        const rows = sql
          .exec<{ key: string; uid: string; next: number }>(
            "SELECT o.key, o.uid, l.rv AS next FROM objects o JOIN listed l ON l.key = o.key WHERE l.uid != o.uid AND o.key > ? ORDER BY o.key LIMIT ?",
            after,
            KEYS_PAGE,
          )
          .toArray();
        for (const row of rows) {
          let rv = row.next - 1;
          while (rv > from && taken(rv)) rv--;
          if (rv <= from) return undefined;
          remove(row.key, row.uid, rv);
          after = row.key;
        }
        if (rows.length < KEYS_PAGE) break;
      }
      // Gone: the latest revisions left free, in key order.
      let free = to;
      for (let after = ""; ; ) {
        const rows = sql
          .exec<{ key: string; uid: string }>("SELECT o.key, o.uid FROM objects o WHERE NOT EXISTS (SELECT 1 FROM listed l WHERE l.key = o.key) AND o.key > ? ORDER BY o.key LIMIT ?", after, KEYS_PAGE)
          .toArray();
        for (const row of rows) {
          while (free > from && taken(free)) free--;
          if (free <= from) return undefined;
          remove(row.key, row.uid, free--);
          after = row.key;
        }
        if (rows.length < KEYS_PAGE) break;
      }
      return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM diff").one().n;
    });
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
    this.#sql().exec("DROP TABLE IF EXISTS listed");
    this.#sql().exec("DROP TABLE IF EXISTS listed_rows");
  }
}
