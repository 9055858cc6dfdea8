/**
 * @module
 * What a subscriber is sent before the window's events, read from the hub's storage a slice at
 * a time: the current state (every object as ADDED, in key order: a watch from "now", or
 * `sendInitialEvents`) or a resume's net changes (`compaction.ts`, in resourceVersion order).
 * Both are a snapshot at the head they bring the subscriber to, held while any subscriber is
 * still being sent them, so a hub that changes meanwhile sends each subscriber one consistent
 * state. One value is shared by every subscriber that starts alike, so the fan-out builds each
 * slice once for all of them.
 */
import { eventLine } from "../k8s/event.ts";
import type { WatchEventType } from "../k8s/types.ts";
import type { Collection, StoredObject } from "./collection.ts";
import { netChangesPage } from "./compaction.ts";
import type { Lease, SnapshotRegistry } from "./snapshots.ts";
import type { Tombstones } from "./tombstones.ts";

/** Rows read from storage at a time. */
const PAGE = 64;

/** A slice of what a subscriber gets first: its lines, and where the next slice starts (`undefined`: it was the last). */
export interface InitialSlice {
  readonly lines: readonly string[];
  readonly next: string | undefined;
}

export interface InitialEvents {
  /** Told apart from other values in caches of slices. */
  readonly id: number;
  /** The resourceVersion they bring the subscriber to (the closing bookmark's). */
  readonly rv: number;
  /**
   * What closes them: the BOOKMARK annotated `k8s.io/initial-events-end` (`sendInitialEvents`
   * with bookmarks), a plain BOOKMARK (net changes: the point to resume from), or nothing.
   */
  readonly end: "initial-events-end" | "bookmark" | undefined;
  /** Lines from `cursor` (`""`: the start), at least one if any are left and at most about `maxBytes`; `undefined` once its snapshot is gone. */
  read(cursor: string, maxBytes: number): InitialSlice | undefined;
  /** A subscriber is to be sent them: their snapshot stays open until every one has been, or has gone. */
  acquire(): void;
  release(): void;
}

let ids = 0;

/** Snapshot holding shared by both kinds: open while anyone needs it. */
abstract class SnapshotEvents implements InitialEvents {
  readonly id = ++ids;
  readonly rv: number;
  readonly end: InitialEvents["end"];
  readonly #snapshots: SnapshotRegistry;
  #lease: Lease | undefined;
  #users = 0;
  /** The snapshot was lost (expired, a new history) while in use: never read again. */
  #lost = false;

  constructor(snapshots: SnapshotRegistry, rv: number, end: InitialEvents["end"]) {
    this.#snapshots = snapshots;
    this.rv = rv;
    this.end = end;
  }

  acquire(): void {
    if (this.#users++ === 0 && !this.#lost) this.#lease = this.#snapshots.hold(this.rv);
  }

  release(): void {
    if (--this.#users > 0) return;
    this.#lease?.release();
    this.#lease = undefined;
  }

  read(cursor: string, maxBytes: number): InitialSlice | undefined {
    if (!this.#lease?.alive) {
      this.#lost = true;
      return undefined;
    }
    const lines: string[] = [];
    let bytes = 0;
    let next = cursor;
    for (;;) {
      const { rows, more } = this.page(next, PAGE);
      let taken = 0;
      for (; taken < rows.length && bytes < maxBytes; taken++) {
        const row = rows[taken] as (typeof rows)[number];
        const line = eventLine(row.type, row.object.json);
        lines.push(line);
        bytes += line.length;
        next = row.cursor;
      }
      if (taken < rows.length || (bytes >= maxBytes && more)) return { lines, next };
      if (!more || rows.length === 0) return { lines, next: undefined };
    }
  }

  /** Up to `limit` rows after `cursor` (fewer, when they are big: `READ_BYTES`), each with the cursor it leaves; `more`: whether rows may follow. */
  protected abstract page(cursor: string, limit: number): { rows: Array<{ type: WatchEventType; object: StoredObject; cursor: string }>; more: boolean };
}

/** The current state at `rv`: every object as ADDED, in key order. */
export class StateEvents extends SnapshotEvents {
  readonly #collection: Collection;

  constructor(collection: Collection, snapshots: SnapshotRegistry, rv: number, end: InitialEvents["end"]) {
    super(snapshots, rv, end);
    this.#collection = collection;
  }

  protected page(cursor: string, limit: number) {
    const { rows, more } = this.#collection.page(this.rv, cursor, limit);
    return { rows: rows.map((object) => ({ type: "ADDED" as const, object, cursor: object.key })), more };
  }
}

/** What changed after `from`, once each at its state at `rv` (`compaction.ts`), closed by a bookmark. */
export class NetChangeEvents extends SnapshotEvents {
  readonly #collection: Collection;
  readonly #tombstones: Tombstones;
  readonly from: number;

  constructor(collection: Collection, tombstones: Tombstones, snapshots: SnapshotRegistry, from: number, rv: number) {
    super(snapshots, rv, "bookmark");
    this.#collection = collection;
    this.#tombstones = tombstones;
    this.from = from;
  }

  protected page(cursor: string, limit: number) {
    const { changes, more } = netChangesPage(this.#collection, this.#tombstones, this.from, this.rv, cursor === "" ? this.from : Number(cursor), limit);
    return { rows: changes.map((change) => ({ type: change.type, object: change.object, cursor: String(change.object.rv) })), more };
  }
}
