/**
 * @module
 * Deletions kept longer than the window — up to a count and an age — so a resume that asks for
 * net changes (`compact=true`) can be answered from further back than the window reaches: each
 * the object's last state, and since when it had been in the collection. The horizon is the
 * resourceVersion before which that is no longer possible: the start of the hub's history, or
 * the newest tombstone dropped. A table of the hub's storage.
 */
import { READ_BYTES } from "./row-limit.ts";
import type { Sql } from "./sql.ts";
import { readByBytes, type Rows, type StoredObject } from "./collection.ts";

/** How many tombstones are kept, and for how long. */
export interface TombstoneLimits {
  max: number;
  maxAgeMs: number;
}

/** A deletion: the object's last state (`rv` is the deletion's), and since when it had been in the collection. */
export type Tombstone = StoredObject;

export class Tombstones {
  readonly #sql: () => Sql;
  readonly #limits: TombstoneLimits;
  /** Rows in the table, counted once and then kept, so trimming by count reads only the excess. */
  #count = 0;

  constructor(sql: () => Sql, limits: TombstoneLimits) {
    this.#sql = sql;
    this.#limits = limits;
  }

  /** Count what storage holds (after a restart). */
  restore(): void {
    this.#count = this.#sql().exec<{ n: number }>("SELECT COUNT(*) AS n FROM tombstones").one().n;
  }

  /** None: a new history. In the caller's transaction; `committed` makes the count follow. */
  clear(): void {
    this.#sql().exec("DELETE FROM tombstones");
  }

  /**
   * Add the batch's deletions and trim past the limits, in the caller's transaction; returns the
   * horizon after it and the count to `commit` once the transaction has.
   */
  write(deleted: readonly Tombstone[], now: number, horizon: number): { horizon: number; count: number } {
    const sql = this.#sql();
    let count = this.#count;
    for (const t of deleted) {
      // An object that left, came back and left again keeps its first `since`: a resume from
      // its first stay must still hear it is gone (one from its absence hears it twice, harmlessly).
      if (sql.exec("SELECT 1 FROM tombstones WHERE uid = ?", t.uid).toArray().length === 0) count++;
      sql.exec(
        "INSERT INTO tombstones (uid, key, rv, since, at, json) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO UPDATE SET key = excluded.key, rv = excluded.rv, at = excluded.at, json = excluded.json, since = MIN(since, excluded.since)",
        t.uid,
        t.key,
        t.rv,
        t.since,
        now,
        t.json,
      );
    }
    return deleted.length > 0 ? this.#trim(now, horizon, count) : { horizon, count };
  }

  committed(count: number): void {
    this.#count = count;
  }

  /** Drop the oldest past the count and those past the age; the horizon moves to the newest dropped. */
  #trim(now: number, horizon: number, count: number): { horizon: number; count: number } {
    const sql = this.#sql();
    const { max, maxAgeMs } = this.#limits;
    // Both read only what is to go: the oldest `count - max` by resourceVersion, and the old by age.
    const beyondCount = count > max ? (sql.exec<{ rv: number }>("SELECT rv FROM tombstones ORDER BY rv LIMIT 1 OFFSET ?", count - max - 1).toArray()[0]?.rv ?? 0) : 0;
    const beyondAge = sql.exec<{ rv: number | null }>("SELECT MAX(rv) AS rv FROM tombstones WHERE at < ?", now - maxAgeMs).one().rv ?? 0;
    const dropTo = Math.max(beyondCount, beyondAge);
    if (dropTo <= horizon) return { horizon, count };
    const dropped = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tombstones WHERE rv <= ?", dropTo).one().n;
    sql.exec("DELETE FROM tombstones WHERE rv <= ?", dropTo);
    return { horizon: dropTo, count: count - dropped };
  }

  /**
   * Up to `limit` deletions with a resourceVersion in `(after, upTo]` of objects that had been in
   * the collection at `from` (`since <= from`), in resourceVersion order, and at most `maxBytes`
   * of their JSON (or one). `more`: whether deletions may follow the last.
   */
  page(from: number, after: number, upTo: number, limit: number, maxBytes = READ_BYTES): Rows<Tombstone> {
    return readByBytes<Tombstone>(this.#sql(), "tombstones", "uid, key, rv, json, since", "rv > ? AND rv <= ? AND since <= ?", [after, upTo, from], "rv", limit, maxBytes);
  }
}
