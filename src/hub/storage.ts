/**
 * @module
 * The hub's durable state in its SQLite storage: the key it serves, the objects as of a
 * checkpoint, the replay window and the resume point. Each upstream batch is written in one
 * transaction before it is fanned out; the output gate holds every send until the write is
 * durable, so a subscriber never holds a resourceVersion the hub could forget (invariant 4).
 *
 * An event costs one row: its window line, which carries the whole object. The objects table is
 * brought up to date only at checkpoints (every so many events, and before the window drops an
 * event newer than the last checkpoint); a restore replays the window's events after the
 * checkpoint onto it. The head is derived from the last event, and written only when a bookmark
 * has moved it further.
 *
 * Deletions are also kept as tombstones (the object's last state, and since when it had been in
 * the collection), longer than the window — up to a count and an age — so a resume that asks
 * for net changes (`compact=true`) can be answered from further back than the window reaches.
 * The horizon is the resourceVersion before which that is no longer possible: the start of the
 * hub's history, or the newest tombstone dropped.
 */
import type { WatchKey } from "../k8s/key.ts";
import type { CachedObject } from "./cache.ts";
import type { WindowEvent } from "./window.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (uid TEXT PRIMARY KEY, key TEXT NOT NULL, rv INTEGER NOT NULL, json TEXT NOT NULL, since INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS events (rv INTEGER PRIMARY KEY, line TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tombstones (uid TEXT PRIMARY KEY, key TEXT NOT NULL, rv INTEGER NOT NULL, since INTEGER NOT NULL, at INTEGER NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tombstones_by_rv ON tombstones (rv);
CREATE INDEX IF NOT EXISTS tombstones_by_age ON tombstones (at);
`;

/** A hub's objects table from before objects carried `since` gets the column (0: "always there"). */
const OBJECTS_SINCE = "ALTER TABLE objects ADD COLUMN since INTEGER NOT NULL DEFAULT 0";

/** An object as the cache holds it, with the resourceVersion it entered the collection at. */
export interface StoredObject {
  object: CachedObject;
  since: number;
}

/** A deletion: the object's last state (`rv` is the deletion's), and since when it had been in the collection. */
export interface Tombstone {
  readonly object: CachedObject;
  readonly since: number;
}

/** How many tombstones are kept, and for how long. */
export interface TombstoneLimits {
  max: number;
  maxAgeMs: number;
}

/** What identifies the collection: the key, and the kinds learned from the first list. */
export interface HubIdentity {
  key: WatchKey;
  kind: string;
  listKind: string;
  apiVersion: string;
}

export interface StoredState extends HubIdentity {
  /** Newest resourceVersion reached (event or bookmark): where the upstream watch resumes. */
  head: number;
  /** Oldest resourceVersion a subscriber can resume from exactly. */
  start: number;
  /** The objects as of `checkpoint`; the window's later events bring them up to date. */
  objects: StoredObject[];
  checkpoint: number;
  events: WindowEvent[];
  /** Resumes for net changes reach back to here (exclusive). */
  horizon: number;
}

/** Bring the objects table to the state at `rv`: what changed since the last checkpoint. */
export interface Checkpoint {
  rv: number;
  changed: readonly StoredObject[];
  removed: readonly string[];
}

/** One batch of changes, written atomically. */
export interface Batch {
  events: readonly WindowEvent[];
  /** The head after the batch; stored only if a bookmark took it past the last event. */
  head: number;
  start: number;
  /** Events up to this RV left the window. */
  evictedTo?: number | undefined;
  checkpoint?: Checkpoint | undefined;
  /** Deletions in the batch. */
  tombstones: readonly Tombstone[];
}

export class HubStorage {
  readonly #storage: DurableObjectStorage;
  readonly #tombstones: TombstoneLimits;
  /**
   * The schema exists: made by the first write, not before, so a hub that is only asked about
   * (`/_relay/stats`) or refuses a request before it syncs stores nothing.
   */
  #made = false;
  /** Rows in the tombstones table, counted once and then kept, so trimming by count reads only the excess. */
  #tombstoneCount = 0;

  constructor(storage: DurableObjectStorage, tombstones: TombstoneLimits) {
    this.#storage = storage;
    this.#tombstones = tombstones;
    if (this.#sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").toArray().length > 0) this.#make();
  }

  get #sql(): SqlStorage {
    return this.#storage.sql;
  }

  #make(): void {
    if (this.#made) return;
    this.#sql.exec(SCHEMA);
    const columns = this.#sql
      .exec<{ name: string }>("PRAGMA table_info(objects)")
      .toArray()
      .map((c) => c.name);
    if (!columns.includes("since")) this.#sql.exec(OBJECTS_SINCE);
    this.#tombstoneCount = this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tombstones").one().n;
    this.#made = true;
  }

  /** Whether anything is stored. */
  get holdsState(): boolean {
    return this.#made;
  }

  /** Delete everything the hub stored (and its alarm): a hub idle past its retention. */
  async clear(): Promise<void> {
    await this.#storage.deleteAlarm();
    await this.#storage.deleteAll();
    this.#made = false;
    this.#tombstoneCount = 0;
  }

  /** The key and kinds this hub serves, if it has ever synced. */
  identity(): HubIdentity | undefined {
    if (!this.#made) return undefined;
    const row = this.#sql.exec<{ value: string }>("SELECT value FROM meta WHERE name = 'identity'").toArray()[0];
    return row ? (JSON.parse(row.value) as HubIdentity) : undefined;
  }

  load(): StoredState | undefined {
    if (!this.#made) return undefined;
    const meta = new Map<string, string>();
    for (const row of this.#sql.exec<{ name: string; value: string }>("SELECT name, value FROM meta")) meta.set(row.name, row.value);
    const identity = meta.get("identity");
    if (identity === undefined) return undefined;
    const objects = this.#sql
      .exec<{ uid: string; key: string; rv: number; json: string; since: number }>("SELECT uid, key, rv, json, since FROM objects")
      .toArray()
      .map((r) => ({ object: { uid: r.uid, key: r.key, rv: r.rv, json: r.json }, since: r.since }));
    const events = this.#sql
      .exec<{ rv: number; line: string }>("SELECT rv, line FROM events ORDER BY rv")
      .toArray()
      .map((r) => ({ rv: r.rv, line: r.line }));
    const head = Math.max(Number(meta.get("head")), events.at(-1)?.rv ?? 0);
    // A hub from before tombstones were kept knows of no deletion before now.
    const horizon = Number(meta.get("horizon") ?? head);
    return { ...(JSON.parse(identity) as HubIdentity), head, start: Number(meta.get("start")), checkpoint: Number(meta.get("checkpoint")), objects, events, horizon };
  }

  /** The tombstones of deletions after `rv`, of objects that had been in the collection at `rv`, in resourceVersion order. */
  tombstonesAfter(rv: number): Tombstone[] {
    if (!this.#made) return [];
    return this.#sql
      .exec<{ uid: string; key: string; rv: number; json: string; since: number }>("SELECT uid, key, rv, json, since FROM tombstones WHERE rv > ? AND since <= ? ORDER BY rv", rv, rv)
      .toArray()
      .map((r) => ({ object: { uid: r.uid, key: r.key, rv: r.rv, json: r.json }, since: r.since }));
  }

  /** Replace everything with a fresh list: the objects at `rv` (all there since `rv`), an empty window and no tombstones: a new history. */
  saveSnapshot(identity: HubIdentity, objects: readonly CachedObject[], rv: number): void {
    this.#make();
    this.#storage.transactionSync(() => {
      this.#sql.exec("DELETE FROM objects");
      this.#sql.exec("DELETE FROM events");
      this.#sql.exec("DELETE FROM tombstones");
      for (const o of objects) this.#saveObject({ object: o, since: rv });
      this.#setMeta("identity", JSON.stringify(identity));
      this.#setMeta("head", String(rv));
      this.#setMeta("start", String(rv));
      this.#setMeta("checkpoint", String(rv));
      this.#setMeta("horizon", String(rv));
    });
    this.#tombstoneCount = 0;
  }

  /** Write a batch, all or nothing; returns the horizon after it (tombstones beyond their limits are dropped). */
  saveBatch(batch: Batch, now: number, horizon: number): number {
    this.#make();
    // Counted apart until the transaction has committed: a batch that fails leaves it as it was.
    let tombstones = this.#tombstoneCount;
    const after = this.#storage.transactionSync(() => {
      for (const e of batch.events) this.#sql.exec("INSERT INTO events (rv, line) VALUES (?, ?)", e.rv, e.line);
      const checkpoint = batch.checkpoint;
      if (checkpoint) {
        for (const uid of checkpoint.removed) this.#sql.exec("DELETE FROM objects WHERE uid = ?", uid);
        for (const o of checkpoint.changed) this.#saveObject(o);
        this.#setMeta("checkpoint", String(checkpoint.rv));
      }
      if (batch.tombstones.length > 0) {
        for (const { object: o, since } of batch.tombstones) {
          // An object that left, came back and left again keeps its first `since`: a resume from
          // its first stay must still hear it is gone (one from its absence hears it twice, harmlessly).
          if (this.#sql.exec("SELECT 1 FROM tombstones WHERE uid = ?", o.uid).toArray().length === 0) tombstones++;
          this.#sql.exec(
            "INSERT INTO tombstones (uid, key, rv, since, at, json) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO UPDATE SET key = excluded.key, rv = excluded.rv, at = excluded.at, json = excluded.json, since = MIN(since, excluded.since)",
            o.uid,
            o.key,
            o.rv,
            since,
            now,
            o.json,
          );
        }
        ({ horizon, count: tombstones } = this.#trimTombstones(now, horizon, tombstones));
      }
      // The window's start moves only when events leave it.
      if (batch.evictedTo !== undefined) {
        this.#sql.exec("DELETE FROM events WHERE rv <= ?", batch.evictedTo);
        this.#setMeta("start", String(batch.start));
      }
      if (batch.head > (batch.events.at(-1)?.rv ?? 0)) this.#setMeta("head", String(batch.head));
      return horizon;
    });
    this.#tombstoneCount = tombstones;
    return after;
  }

  /** Drop the oldest tombstones past the count and those past the age; the horizon moves to the newest dropped. */
  #trimTombstones(now: number, horizon: number, count: number): { horizon: number; count: number } {
    const { max, maxAgeMs } = this.#tombstones;
    // Both read only what is to go: the oldest `count - max` by resourceVersion, and the old by age.
    const beyondCount = count > max ? (this.#sql.exec<{ rv: number }>("SELECT rv FROM tombstones ORDER BY rv LIMIT 1 OFFSET ?", count - max - 1).toArray()[0]?.rv ?? 0) : 0;
    const beyondAge = this.#sql.exec<{ rv: number | null }>("SELECT MAX(rv) AS rv FROM tombstones WHERE at < ?", now - maxAgeMs).one().rv ?? 0;
    const dropTo = Math.max(beyondCount, beyondAge);
    if (dropTo <= horizon) return { horizon, count };
    const dropped = this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tombstones WHERE rv <= ?", dropTo).one().n;
    this.#sql.exec("DELETE FROM tombstones WHERE rv <= ?", dropTo);
    this.#setMeta("horizon", String(dropTo));
    return { horizon: dropTo, count: count - dropped };
  }

  #saveObject({ object: o, since }: StoredObject): void {
    this.#sql.exec("INSERT OR REPLACE INTO objects (uid, key, rv, json, since) VALUES (?, ?, ?, ?, ?)", o.uid, o.key, o.rv, o.json, since);
  }

  /** A bookmark moved the head: nothing else changed. */
  saveHead(head: number): void {
    this.#make();
    this.#setMeta("head", String(head));
  }

  #setMeta(name: string, value: string): void {
    this.#sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", name, value);
  }
}
