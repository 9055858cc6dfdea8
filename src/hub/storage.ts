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
 */
import type { WatchKey } from "../k8s/key.ts";
import type { CachedObject } from "./cache.ts";
import type { WindowEvent } from "./window.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (uid TEXT PRIMARY KEY, key TEXT NOT NULL, rv INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (rv INTEGER PRIMARY KEY, line TEXT NOT NULL);
`;

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
  objects: CachedObject[];
  checkpoint: number;
  events: WindowEvent[];
}

/** Bring the objects table to the state at `rv`: what changed since the last checkpoint. */
export interface Checkpoint {
  rv: number;
  changed: readonly CachedObject[];
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
}

export class HubStorage {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql.exec(SCHEMA);
  }

  get #sql(): SqlStorage {
    return this.#storage.sql;
  }

  /** The key and kinds this hub serves, if it has ever synced. */
  identity(): HubIdentity | undefined {
    const row = this.#sql.exec<{ value: string }>("SELECT value FROM meta WHERE name = 'identity'").toArray()[0];
    return row ? (JSON.parse(row.value) as HubIdentity) : undefined;
  }

  load(): StoredState | undefined {
    const meta = new Map<string, string>();
    for (const row of this.#sql.exec<{ name: string; value: string }>("SELECT name, value FROM meta")) meta.set(row.name, row.value);
    const identity = meta.get("identity");
    if (identity === undefined) return undefined;
    const objects = this.#sql
      .exec<{ uid: string; key: string; rv: number; json: string }>("SELECT uid, key, rv, json FROM objects")
      .toArray()
      .map((r) => ({ uid: r.uid, key: r.key, rv: r.rv, json: r.json }));
    const events = this.#sql
      .exec<{ rv: number; line: string }>("SELECT rv, line FROM events ORDER BY rv")
      .toArray()
      .map((r) => ({ rv: r.rv, line: r.line }));
    const head = Math.max(Number(meta.get("head")), events.at(-1)?.rv ?? 0);
    return { ...(JSON.parse(identity) as HubIdentity), head, start: Number(meta.get("start")), checkpoint: Number(meta.get("checkpoint")), objects, events };
  }

  /** Replace everything with a fresh list: the objects at `rv`, an empty window starting there. */
  saveSnapshot(identity: HubIdentity, objects: readonly CachedObject[], rv: number): void {
    this.#storage.transactionSync(() => {
      this.#sql.exec("DELETE FROM objects");
      this.#sql.exec("DELETE FROM events");
      for (const o of objects) this.#sql.exec("INSERT INTO objects (uid, key, rv, json) VALUES (?, ?, ?, ?)", o.uid, o.key, o.rv, o.json);
      this.#setMeta("identity", JSON.stringify(identity));
      this.#setMeta("head", String(rv));
      this.#setMeta("start", String(rv));
      this.#setMeta("checkpoint", String(rv));
    });
  }

  saveBatch(batch: Batch): void {
    this.#storage.transactionSync(() => {
      for (const e of batch.events) this.#sql.exec("INSERT INTO events (rv, line) VALUES (?, ?)", e.rv, e.line);
      const checkpoint = batch.checkpoint;
      if (checkpoint) {
        for (const uid of checkpoint.removed) this.#sql.exec("DELETE FROM objects WHERE uid = ?", uid);
        for (const o of checkpoint.changed) this.#sql.exec("INSERT OR REPLACE INTO objects (uid, key, rv, json) VALUES (?, ?, ?, ?)", o.uid, o.key, o.rv, o.json);
        this.#setMeta("checkpoint", String(checkpoint.rv));
      }
      // The window's start moves only when events leave it.
      if (batch.evictedTo !== undefined) {
        this.#sql.exec("DELETE FROM events WHERE rv <= ?", batch.evictedTo);
        this.#setMeta("start", String(batch.start));
      }
      if (batch.head > (batch.events.at(-1)?.rv ?? 0)) this.#setMeta("head", String(batch.head));
    });
  }

  /** A bookmark moved the head: nothing else changed. */
  saveHead(head: number): void {
    this.#setMeta("head", String(head));
  }

  #setMeta(name: string, value: string): void {
    this.#sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", name, value);
  }
}
