/**
 * @module
 * A list from the upstream, staged in the hub's storage a page at a time as it arrives (never
 * the whole list in memory, nor beside the collection in memory), and then either the hub's new
 * history or the difference from what the hub holds, as events. A first list is staged whole
 * and becomes the collection. A relist is compared with the collection as each page arrives,
 * and only what differs is taken and staged (the objects that changed, and the keys of those
 * gone): a relist of a million objects of which a thousand changed serialises a thousand and
 * writes thousands of rows, not millions.
 *
 * The difference is how an upstream 410 stays invisible to subscribers: instead of making every
 * subscriber relist, the hub emits it as ordinary events, each at its own resourceVersion in
 * `(from, to]`, in resourceVersion order, so a resume from any of them stays exact.
 *
 * Added and modified objects keep their own resourceVersions: they were written in the gap, so
 * those lie in `(from, to]` and are distinct. Deleted objects get the latest ones left free
 * ("gone by then" is the claim that is always true); an object whose name another has taken
 * since gets one below its successor's, so a client that keys by name never sees the successor
 * deleted. Every change in the gap consumed at least one revision, so there are enough free
 * ones unless the upstream's history is inconsistent with the hub's (a restore from backup, a
 * different cluster): then there is no difference to tell, and the list starts a new history.
 */
import type { Sql } from "./sql.ts";
import { objectsTable } from "./storage.ts";
import { type ObjectEvent, type ObjectIdentity, type ObjectRecord, withVersion } from "./collection.ts";
import { readRow, viewRowsTable, writeRow } from "./view-rows.ts";
import { READ_BYTES } from "./row-limit.ts";

/** Keys compared in one step of a diff, between which the hub serves its other work. */
const DIFF_SCAN_PAGE = 2000;

export class StagedList {
  readonly #sql: () => Sql;
  readonly #transaction: <T>(write: () => T) => T;
  /** Staging a relist: only what differs from the collection. */
  #against = false;
  /**
   * A relist's highest key listed so far, in SQLite's order: the collection's objects up to it
   * that the list has not had are marked gone. Lists come in key order (etcd's, and the watch
   * cache's), but a page that reaches back below it is still right: its keys' marks go.
   */
  #covered = "";

  constructor(sql: () => Sql, transaction: <T>(write: () => T) => T) {
    this.#sql = sql;
    this.#transaction = transaction;
  }

  /** A list begins: nothing staged. `against` the collection (a relist): only what differs from it will be. */
  begin(against: boolean): void {
    this.#against = against;
    this.#covered = "";
    this.#transaction(() => {
      const sql = this.#sql();
      this.#drop();
      // No index by resourceVersion while it fills: a first list's is made once, whole, when it becomes the collection.
      sql.exec(objectsTable("listed"));
      sql.exec(viewRowsTable("listed_rows"));
      // The collection's objects that go: `next` is the resourceVersion of the one that took the name since, if any.
      if (against) sql.exec("CREATE TABLE diff_old (key TEXT PRIMARY KEY, uid TEXT NOT NULL, next INTEGER) WITHOUT ROWID");
    });
  }

  /** Whether what is staged is a relist's difference (else a whole list). */
  get against(): boolean {
    return this.#against;
  }

  /** One page of the list's objects (for a relist, those `differing` left), stored with their rows; `since`: the list's resourceVersion, where a new history's objects begin. */
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
   * Of a relist's page, as it arrives, the items whose object differs from the collection's
   * (another uid or resourceVersion, or none there; `identify` reads which it is, and an item
   * it cannot is kept), which are all the relist need take and stage: the rest it has. The
   * collection's objects the page shows gone are marked: those whose name another has taken, and
   * those in the keys the list has passed that it did not have. Every comparison of keys is
   * SQLite's, so its order decides, not JavaScript's.
   */
  differing<T>(items: readonly T[], identify: (item: T) => ObjectIdentity | undefined): T[] {
    return this.#transaction(() => {
      const sql = this.#sql();
      const page = items.map((item) => ({ item, id: identify(item) }));
      const known = page.flatMap((p) => (p.id ? [p.id] : []));
      if (known.length === 0) return items.slice();
      const keys = JSON.stringify(known.map((o) => o.key));
      const range = sql
        .exec<{ last: string; back: number; onward: number }>("SELECT max(value) AS last, min(value) <= ? AS back, max(value) > ? AS onward FROM json_each(?)", this.#covered, this.#covered, keys)
        .one();
      // Out of key order: a key of this page may have been marked gone by a page before it.
      if (range.back) sql.exec("DELETE FROM diff_old WHERE key IN (SELECT value FROM json_each(?))", keys);
      if (range.onward) {
        sql.exec(
          "INSERT OR IGNORE INTO diff_old (key, uid, next) SELECT key, uid, NULL FROM objects WHERE key > ? AND key <= ? AND key NOT IN (SELECT value FROM json_each(?))",
          this.#covered,
          range.last,
          keys,
        );
        this.#covered = range.last;
      }
      const held = new Map<string, { uid: string; rv: number }>();
      for (const o of sql.exec<{ key: string; uid: string; rv: number }>("SELECT o.key, o.uid, o.rv FROM json_each(?) j JOIN objects o ON o.key = j.value", keys)) held.set(o.key, o);
      const differing: T[] = [];
      for (const { item, id } of page) {
        const was = id && held.get(id.key);
        if (id && was && was.uid !== id.uid) sql.exec("INSERT OR REPLACE INTO diff_old (key, uid, next) VALUES (?, ?, ?)", id.key, was.uid, id.rv);
        if (!id || was?.uid !== id.uid || was.rv !== id.rv) differing.push(item);
      }
      return differing;
    });
  }

  /**
   * A relist's difference (the list at `to`, the collection at `from`) as events to come: how
   * many, or `undefined` when the two histories cannot be told apart by events. First the
   * collection's objects after the list's last key are marked gone; then what was staged and
   * marked is given its revisions. Each part goes `page` keys a step, one transaction each, and
   * `pause` runs between steps, so a million-object relist never holds the hub's thread for more
   * than a step: the hub goes on serving its current state meanwhile, and the collection must
   * not change (nor while the list is staged, which it was compared with).
   */
  async diff(from: number, to: number, pause: () => Promise<void>, page = DIFF_SCAN_PAGE): Promise<number | undefined> {
    // Before any refusal: a history told as no events is made the collection in place from these marks.
    await this.#goneAfterList(pause, page);
    if (to < from) return undefined;
    const sql = () => this.#sql();
    this.#transaction(() => {
      sql().exec("DROP TABLE IF EXISTS diff");
      sql().exec("CREATE TABLE diff (rv INTEGER PRIMARY KEY, type TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL)");
    });
    // Two changes in the gap never share a resourceVersion (the collection's own are all at or below `from`).
    if (sql().exec("SELECT 1 FROM listed WHERE rv > ? GROUP BY rv HAVING COUNT(*) > 1 LIMIT 1", from).toArray().length > 0) return undefined;
    for (let after = ""; ; ) {
      const bound = this.#pageEnd("listed", after, page);
      const consistent = this.#transaction(() => {
        const [range, ...keys] = keyRange("l.key", after, bound);
        const changed = sql()
          .exec<{ key: string; uid: string; rv: number; added: number }>(
            `SELECT l.key, l.uid, l.rv, (o.key IS NULL OR o.uid != l.uid) AS added FROM listed l LEFT JOIN objects o ON o.key = l.key WHERE ${range}`,
            ...keys,
          )
          .toArray();
        // A change in the gap has a resourceVersion inside it, of its own.
        if (changed.some((c) => c.rv <= from || c.rv > to)) return false;
        for (const c of changed) sql().exec("INSERT INTO diff (rv, type, key, uid) VALUES (?, ?, ?, ?)", c.rv, c.added ? "ADDED" : "MODIFIED", c.key, c.uid);
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

  /** The collection's objects after the relist's last key are gone too: marked `page` keys a step. */
  async #goneAfterList(pause: () => Promise<void>, page: number): Promise<void> {
    for (;;) {
      const bound = this.#pageEnd("objects", this.#covered, page);
      this.#transaction(() => {
        const [range, ...keys] = keyRange("key", this.#covered, bound);
        this.#sql().exec(`INSERT OR IGNORE INTO diff_old (key, uid, next) SELECT key, uid, NULL FROM objects WHERE ${range}`, ...keys);
      });
      if (bound === null) return;
      this.#covered = bound;
      await pause();
    }
  }

  /** The `page`th key of `table` after `after`, the last of a step; null when it has fewer left. */
  #pageEnd(table: "listed" | "objects", after: string, page: number): string | null {
    return (
      this.#sql()
        .exec<{ key: string }>(`SELECT key FROM ${table} WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?`, after, page - 1)
        .toArray()[0]?.key ?? null
    );
  }

  /**
   * Up to `limit` of the difference's events after `after`, in resourceVersion order, and no
   * more once they hold `maxBytes` of JSON; the collection must not have moved past `after` meanwhile.
   */
  events(after: number, limit: number, maxBytes = READ_BYTES): ObjectEvent[] {
    const sql = this.#sql();
    const rows = sql.exec<{ rv: number; type: ObjectEvent["type"]; key: string; uid: string }>("SELECT rv, type, key, uid FROM diff WHERE rv > ? ORDER BY rv LIMIT ?", after, limit).toArray();
    const events: ObjectEvent[] = [];
    let bytes = 0;
    for (const { rv, type, key, uid } of rows) {
      if (bytes >= maxBytes) break;
      if (type !== "DELETED") {
        const listed = sql.exec<Omit<ObjectRecord, "row">>("SELECT key, uid, rv, json FROM listed WHERE key = ?", key).one();
        events.push({ type, object: { ...listed, row: readRow(sql, "listed_rows", key)?.row } });
      } else {
        // Its last state, at the revision it is gone by: read before this page changes the collection.
        const last = sql.exec<Omit<ObjectRecord, "row">>("SELECT key, uid, rv, json FROM objects WHERE key = ? AND uid = ?", key, uid).one();
        events.push({ type, object: withVersion(last, rv) });
      }
      bytes += (events.at(-1) as ObjectEvent).object.json.length;
    }
    return events;
  }

  /**
   * A relist whose history cannot be told as events (`diff` gave none): the collection made
   * the list's, in place, in the caller's transaction, after `diff` marked all that goes. What
   * it keeps is as listed, and entered the collection by its resourceVersion, so by the list's.
   */
  replaceDiffering(): void {
    const sql = this.#sql();
    sql.exec("DELETE FROM objects WHERE key IN (SELECT key FROM diff_old)");
    sql.exec("DELETE FROM view_rows WHERE key IN (SELECT key FROM diff_old)");
    sql.exec("INSERT OR REPLACE INTO objects (key, uid, rv, since, json) SELECT key, uid, rv, since, json FROM listed");
    sql.exec("INSERT OR REPLACE INTO view_rows SELECT * FROM listed_rows");
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

/** Keys after `after`, up to `bound` (none: to the end), as a condition the table's key order serves, with its parameters. */
function keyRange(column: string, after: string, bound: string | null): [string, ...string[]] {
  return bound === null ? [`${column} > ?`, after] : [`${column} > ? AND ${column} <= ?`, after, bound];
}
