/**
 * @module
 * The replay window: recent events as ready-to-send lines, ordered by resourceVersion, bounded
 * by count and by bytes. The resume rule is the watch cache's (apiserver
 * `watch_cache_history.go`): a resume from RV `n` is exact when `n >= start`, where `start` is
 * the RV the window's history begins after (the snapshot RV, or the RV of the last evicted
 * event). Older resume points are answered with 410 Expired.
 *
 * The events live in the hub's storage (`events`: resourceVersion, the bytes appended before
 * it, its size, its line); memory holds the window's bounds and counts, and its newest lines
 * as far as the isolate's budget allows (`memory.ts`), which is what subscribers that keep up
 * are sent. A subscriber further back is sent lines read from storage.
 */
import type { Sql } from "./sql.ts";
import { fitting, READ_BYTES } from "./row-limit.ts";
import type { LineTail, TailEntry } from "./memory.ts";

export interface WindowEvent {
  /** The event's resourceVersion (its object's `metadata.resourceVersion`). */
  readonly rv: number;
  /** The serialised watch event, `{"type":...,"object":...}\n`, sent as-is to every subscriber. */
  readonly line: string;
  /** For a MODIFIED, the same change as a delta line (see `k8s/delta.ts`), when it is shorter; held in memory only. */
  readonly delta?: string | undefined;
}

export interface WindowLimits {
  maxEvents: number;
  /** Bound on the summed length of the lines held (UTF-16 units, close to bytes for JSON). */
  maxBytes: number;
}

/** What a subscriber that has seen everything up to some RV gets next. */
export type Replay = { kind: "events"; events: WindowEvent[] } | { kind: "expired"; oldest: number };

/** What an append or a reset writes: to be done in the batch's transaction, then `committed`. */
export interface WindowWrite {
  readonly events: readonly TailEntry[];
  /** Events up to this RV leave the window (`start` moves there): how many, and their bytes. */
  readonly evicted: { readonly to: number; readonly events: number; readonly bytes: number } | undefined;
}

/** Rows read from storage at a time when a subscriber is sent lines no longer in memory. */
const STORED_PAGE = 64;

export class EventWindow {
  readonly #sql: () => Sql;
  readonly #limits: WindowLimits;
  readonly #tail: LineTail;
  #start = 0;
  #head = 0;
  /** The newest event's resourceVersion (the head, or less when bookmarks moved it on). */
  #last = 0;
  #size = 0;
  #bytes = 0;
  /** Bytes appended since the history began: an event's offset plus its size. */
  #appended = 0;

  constructor(sql: () => Sql, limits: WindowLimits, tail: LineTail) {
    this.#sql = sql;
    this.#limits = limits;
    this.#tail = tail;
  }

  /** Oldest resourceVersion a subscriber can resume from exactly. */
  get start(): number {
    return this.#start;
  }

  /** Newest resourceVersion the hub has reached (last event or bookmark). */
  get head(): number {
    return this.#head;
  }

  /** The newest event's resourceVersion (the history's start when it has none): a subscriber that has it has every event up to the head. */
  get last(): number {
    return this.#last;
  }

  get size(): number {
    return this.#size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Bytes of its lines (and deltas) held in memory. */
  get heldBytes(): number {
    return this.#tail.bytes;
  }

  /** Back from storage: the bounds it was saved with, and the counts of its events. */
  restore(start: number, head: number): void {
    const row = this.#sql()
      .exec<{ n: number; bytes: number | null; last: number | null; appended: number | null }>("SELECT COUNT(*) AS n, SUM(size) AS bytes, MAX(rv) AS last, MAX(offset + size) AS appended FROM events")
      .one();
    this.#start = start;
    this.#last = row.last ?? start;
    this.#head = Math.max(head, this.#last);
    this.#size = row.n;
    this.#bytes = row.bytes ?? 0;
    this.#appended = row.appended ?? 0;
    // Nothing held yet: lines come from storage until new events arrive.
    this.#tail.reset(this.#last);
  }

  /** Forget every event: history now begins at `rv` (a fresh list). Storage is the caller's (`clear`, in its transaction). */
  reset(rv: number): void {
    this.#start = this.#head = this.#last = rv;
    this.#size = this.#bytes = this.#appended = 0;
    this.#tail.reset(rv);
  }

  /** Delete every stored event, in the caller's transaction. */
  clear(): void {
    this.#sql().exec("DELETE FROM events");
  }

  /**
   * Store events newer than the head, in the caller's transaction, and what leaves the window
   * for them; nothing in memory changes until `committed`.
   */
  write(events: readonly WindowEvent[]): WindowWrite {
    const sql = this.#sql();
    const entries: TailEntry[] = [];
    let offset = this.#appended;
    let after = this.#last;
    for (const event of events) {
      if (event.rv <= after) throw new RangeError(`event ${event.rv} is not after the window's last event ${after}`);
      sql.exec("INSERT INTO events (rv, offset, size, line) VALUES (?, ?, ?, ?)", event.rv, offset, event.line.length, event.line);
      entries.push({ rv: event.rv, offset, line: event.line, delta: event.delta });
      offset += event.line.length;
      after = event.rv;
    }
    const evicted = this.#evictable(entries);
    if (evicted) sql.exec("DELETE FROM events WHERE rv <= ?", evicted.to);
    return { events: entries, evicted };
  }

  /** The batch's transaction committed: the window has its events, and has let go of the evicted. */
  committed(write: WindowWrite): void {
    for (const entry of write.events) {
      this.#tail.push(entry);
      this.#size++;
      this.#bytes += entry.line.length;
      this.#appended = entry.offset + entry.line.length;
      this.#last = this.#head = entry.rv;
    }
    const evicted = write.evicted;
    if (evicted) {
      this.#size -= evicted.events;
      this.#bytes -= evicted.bytes;
      this.#start = evicted.to;
      this.#tail.evict(evicted.to);
    }
  }

  /** What leaves the window once `adding` (already stored) is in: the oldest events past the bounds, keeping one. */
  #evictable(adding: readonly TailEntry[]): WindowWrite["evicted"] {
    let size = this.#size + adding.length;
    let bytes = this.#bytes;
    for (const entry of adding) bytes += entry.line.length;
    const over = () => size > 1 && (size > this.#limits.maxEvents || bytes > this.#limits.maxBytes);
    if (!over()) return undefined;
    const evicted = { to: 0, events: 0, bytes: 0 };
    for (let after = this.#start; over(); ) {
      const rows = this.#sql().exec<{ rv: number; size: number }>("SELECT rv, size FROM events WHERE rv > ? ORDER BY rv LIMIT ?", after, STORED_PAGE).toArray();
      if (rows.length === 0) break;
      for (const row of rows) {
        if (!over()) break;
        size--;
        bytes -= row.size;
        evicted.events++;
        evicted.bytes += row.size;
        evicted.to = after = row.rv;
      }
    }
    return evicted.events > 0 ? evicted : undefined;
  }

  /** A bookmark: nothing changed for this key up to `rv`. */
  advance(rv: number): void {
    if (rv > this.#head) this.#head = rv;
  }

  /**
   * The events after `rv`, at most `maxBytes` worth (at least one when there is one), or
   * `expired` when `rv` is older than the window can replay exactly.
   */
  after(rv: number, maxBytes = Number.POSITIVE_INFINITY): Replay {
    if (rv < this.#start) return { kind: "expired", oldest: this.#start };
    if (rv >= this.#last) return { kind: "events", events: [] };
    if (rv >= this.#tail.from) return { kind: "events", events: this.#tail.after(rv, maxBytes) };
    const events: WindowEvent[] = [];
    let bytes = 0;
    for (let after = rv; events.length === 0 || bytes < maxBytes; ) {
      // Lines of big objects are up to a row each: a statement reads no more than `READ_BYTES` of them (or one).
      const sizes = this.#sql().exec<{ size: number }>("SELECT size FROM events WHERE rv > ? ORDER BY rv LIMIT ?", after, STORED_PAGE).toArray();
      const n = fitting(
        sizes.map((r) => r.size),
        Math.min(READ_BYTES, maxBytes - bytes),
      );
      const rows = n === 0 ? [] : this.#sql().exec<{ rv: number; line: string }>("SELECT rv, line FROM events WHERE rv > ? ORDER BY rv LIMIT ?", after, n).toArray();
      for (const row of rows) {
        if (events.length > 0 && bytes >= maxBytes) break;
        events.push({ rv: row.rv, line: row.line });
        bytes += row.line.length;
        after = row.rv;
      }
      if (sizes.length < STORED_PAGE && n === sizes.length) break;
    }
    return { kind: "events", events };
  }

  /** The summed length of the window's events newer than `rv`: what a subscriber there has yet to be sent. */
  bytesAfter(rv: number): number {
    if (rv >= this.#last) return 0;
    const held = rv >= this.#tail.from ? this.#tail.firstAfter(rv) : undefined;
    const offset = held?.offset ?? this.#sql().exec<{ offset: number }>("SELECT offset FROM events WHERE rv > ? ORDER BY rv LIMIT 1", rv).toArray()[0]?.offset;
    return offset === undefined ? 0 : this.#appended - offset;
  }

  /** Whether any event in the window is newer than `rv`. */
  hasEventsAfter(rv: number): boolean {
    return rv < this.#last && this.#size > 0;
  }
}
