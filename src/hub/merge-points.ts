/**
 * @module
 * What a merge hub's sequence means, in its SQLite (DESIGN.md, "One watch across clusters"):
 * at each merged resourceVersion it gave out, where each member was (`points`), so a watch from
 * any of them resumes every member exactly there; and each object's merged resourceVersion
 * against its cluster's (`merge_objects`), so a relist gives an unchanged object the number
 * it had, and the hub's diff (uid, resourceVersion) finds nothing to send for it.
 */
import type { Sql } from "./sql.ts";

/** Each member's resourceVersion at one merged resourceVersion; a member absent has none of its objects in the merged state. */
export type Positions = Record<string, number>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS merge_points (rv INTEGER PRIMARY KEY, positions TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS merge_objects (key TEXT PRIMARY KEY, cluster_rv INTEGER NOT NULL, rv INTEGER NOT NULL) WITHOUT ROWID;
`;

export class MergePoints {
  readonly #sql: () => Sql;
  #made = false;

  constructor(sql: () => Sql) {
    this.#sql = sql;
  }

  #db(): Sql {
    const sql = this.#sql();
    if (!this.#made) {
      sql.exec(SCHEMA);
      this.#made = true;
    }
    return sql;
  }

  /** The greatest merged resourceVersion recorded, or 0. */
  last(): number {
    return this.#db().exec<{ rv: number | null }>("SELECT max(rv) AS rv FROM merge_points").one().rv ?? 0;
  }

  /** The members' positions at `rv`, if recorded. */
  at(rv: number): Positions | undefined {
    const row = this.#db().exec<{ positions: string }>("SELECT positions FROM merge_points WHERE rv = ?", rv).toArray()[0];
    return row ? (JSON.parse(row.positions) as Positions) : undefined;
  }

  record(rv: number, positions: Positions): void {
    this.#db().exec("INSERT OR REPLACE INTO merge_points (rv, positions) VALUES (?, ?)", rv, JSON.stringify(positions));
  }

  /**
   * A watch resumes from `rv`: the numbers after it were never committed (they are given out
   * again), and those before it are never resumed from again (the hub resumes from its head).
   */
  resumeFrom(rv: number): void {
    this.#db().exec("DELETE FROM merge_points WHERE rv <> ?", rv);
  }

  /** The merged resourceVersion an object keeps, if it is at `clusterRv` as when last numbered. */
  numbered(key: string, clusterRv: number): number | undefined {
    return this.#db().exec<{ rv: number }>("SELECT rv FROM merge_objects WHERE key = ? AND cluster_rv = ?", key, clusterRv).toArray()[0]?.rv;
  }

  number(key: string, clusterRv: number, rv: number): void {
    this.#db().exec("INSERT OR REPLACE INTO merge_objects (key, cluster_rv, rv) VALUES (?, ?, ?)", key, clusterRv, rv);
  }

  forget(key: string): void {
    this.#db().exec("DELETE FROM merge_objects WHERE key = ?", key);
  }
}
