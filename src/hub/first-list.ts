/**
 * @module
 * A hub's first list from the upstream, read while it is staged: a list request that arrives
 * while the hub builds itself is answered from the staged rows as they are committed, in key
 * order, at the list's resourceVersion (known from the upstream's first page), instead of after
 * the whole list (18 s at 150,000 pods, minutes at a million) or a 503. Its first byte goes out
 * with the first batch of the upstream's first page, once that is stored.
 *
 * The upstream lists in key order (etcd's, the watch cache's, a relay's), so every key up to the
 * highest staged so far has been staged: a reader reads that far, then waits for the next batch.
 * An upstream that goes back below that key (none that the relay knows does) would have readers
 * miss an object: each one that had got past it (sent, or promised by a continue token, what
 * follows it) before it came is stopped with an error, the continue tokens given out past it
 * are refused, and the others read nothing more until the list is whole. A reader that gets
 * past it once the list is whole has read it: only where a reader had got when a late object
 * came counts. A list that fails midway stops every reader with an error: a chunked list cut
 * short is a failed request to every client (client-go and kubectl: "unexpected EOF"), as the
 * API server answers a list whole or not at all.
 *
 * Once whole, the staged list is the hub's collection at the same resourceVersion, and its
 * readers and continue tokens read on from the collection (their snapshot, held in the hub's
 * registry, outlives the staging).
 */
import { compareCodePoints } from "../k8s/labels.ts";
import { type Collection, joinedRows, type JoinedRows, readByBytes, type Rows, type StoredObject } from "./collection.ts";
import type { Growing, ListReader, Place } from "./reads.ts";
import { READ_BYTES } from "./row-limit.ts";
import type { Cursor, SnapshotRegistry } from "./snapshots.ts";
import type { Sql } from "./sql.ts";

/** The table a list is staged in (`relist.ts`). */
const STAGED = "listed";
const COLUMNS = "key, uid, rv, since, json";

/** What the upstream's first page said of the list. */
export interface FirstListHead {
  resourceVersion: number;
  listKind: string;
  apiVersion: string;
  /** How many objects the list holds, as the upstream's first page counted them (its `remainingItemCount`), if it did. */
  total?: number | undefined;
}

export class FirstList implements Growing {
  readonly rv: number;
  readonly listKind: string;
  readonly apiVersion: string;
  readonly #total: number | undefined;
  readonly #sql: () => Sql;
  readonly #collection: Collection;
  /** The highest key staged, in SQLite's order (code points, as UTF-8 bytes compare). */
  #last = "";
  /** The lowest key the upstream sent after a higher one: whatever was read past it missed it. */
  #late: string | undefined;
  #state: "staging" | "whole" | Error = "staging";
  #waiting: Array<() => void> = [];

  constructor(head: FirstListHead, sql: () => Sql, collection: Collection) {
    this.rv = head.resourceVersion;
    this.listKind = head.listKind;
    this.apiVersion = head.apiVersion;
    this.#total = head.total;
    this.#sql = sql;
    this.#collection = collection;
  }

  /** Keys just staged (committed), in the order the upstream sent them. */
  staged(keys: readonly string[]): void {
    for (const key of keys) {
      if (this.#last !== "" && compareCodePoints(key, this.#last) <= 0) {
        if (this.#late === undefined || compareCodePoints(key, this.#late) < 0) this.#late = key;
      } else {
        this.#last = key;
      }
    }
    this.#wake();
  }

  /** The staged list is the collection now (in the same turn as its rename: nothing reads the staged table after it). */
  whole(): void {
    this.#state = "whole";
    this.#wake();
  }

  /** The list failed before it was whole: every reader ends with `error`. */
  failed(error: Error): void {
    if (this.#state === "staging") this.#state = new Error(`the relay's first list of this collection from the upstream failed midway: ${error.message}`);
    this.#wake();
  }

  // Growing

  get open(): boolean {
    return this.#state === "staging";
  }

  grown(): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  place(): Place {
    let position = "";
    // The lowest late key when the reader last moved: one lower that came since, and is not past its place, it lacks.
    let seen = this.#late;
    return {
      moved: (to) => {
        position = to;
        seen = this.#late;
      },
      stopped: () => {
        if (this.#state instanceof Error) return this.#state;
        const late = this.#late;
        if (late === undefined || (seen !== undefined && compareCodePoints(late, seen) >= 0) || compareCodePoints(late, position) > 0) return undefined;
        return new Error(
          `the upstream's list of this collection was not in key order (${JSON.stringify(late)} came after later keys), so a list read from it as it was staged missed an object; list again`,
        );
      },
    };
  }

  /** Whether a continue token was given out by this list while staged, past an object that came in late (its earlier pages lack it). */
  refuses(cursor: Cursor): boolean {
    return cursor.staged === true && cursor.rv === this.rv && this.#late !== undefined && compareCodePoints(this.#late, cursor.start) <= 0;
  }

  /** What lists read this list from, as they read the collection (`reads.ts`): `hub` names it in continue tokens; a resourceVersion ahead of it is waited for as the API server waits (`wait`), though a list being staged never reaches it. */
  reader(hub: string, snapshots: SnapshotRegistry, wait: (ms: number) => Promise<void>): ListReader {
    return {
      hub,
      listKind: this.listKind,
      apiVersion: this.apiVersion,
      head: () => this.rv,
      waitFor: async (rv, ms) => {
        if (rv <= this.rv) return true;
        await wait(ms);
        return false;
      },
      collection: this,
      snapshots,
      growing: this,
      refuses: (cursor) => this.refuses(cursor),
    };
  }

  // What a list reads (`Collection`'s, of the staged rows while the list is being staged).

  page(at: number, afterKey: string, limit: number, maxBytes = READ_BYTES): Rows {
    const bound = this.#bound();
    if (bound === undefined) return this.#collection.page(at, afterKey, limit, maxBytes);
    if (bound === null) return { rows: [], more: false };
    return readByBytes<StoredObject>(this.#sql(), STAGED, COLUMNS, "key > ? AND key <= ?", [afterKey, bound], "key", limit, maxBytes);
  }

  joinedPage(at: number, afterKey: string, limit: number, maxBytes = READ_BYTES): JoinedRows {
    const bound = this.#bound();
    if (bound === undefined) return this.#collection.joinedPage(at, afterKey, limit, maxBytes);
    if (bound === null) return { bytes: new Uint8Array(), last: afterKey, count: 0, more: false };
    return joinedRows(this.#sql(), STAGED, "key > ? AND key <= ?", [afterKey, bound], afterKey, limit, maxBytes);
  }

  keyAfter(at: number, afterKey: string, n: number): string | undefined {
    const bound = this.#bound();
    if (bound === undefined) return this.#collection.keyAfter(at, afterKey, n);
    if (bound === null) return undefined;
    return this.#sql().exec<{ key: string }>(`SELECT key FROM ${STAGED} WHERE key > ? AND key <= ? ORDER BY key LIMIT ?`, afterKey, bound, n).toArray()[n - 1]?.key;
  }

  /** The list's size: the collection's once whole, the upstream's count until then (if it gave one). */
  sizeAt(at: number): number | undefined {
    return this.#state === "whole" ? this.#collection.sizeAt(at) : this.#total;
  }

  /**
   * How far the staged rows may be read: up to this key while staging in order; `null`, nothing
   * more, once an object came in late (the rest is read once whole) or the list failed;
   * `undefined`, all of it, from the collection, once whole.
   */
  #bound(): string | null | undefined {
    if (this.#state === "whole") return undefined;
    if (this.#state instanceof Error || this.#late !== undefined || this.#last === "") return null;
    return this.#last;
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}
