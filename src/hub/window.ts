/**
 * @module
 * The replay window: recent events as ready-to-send lines, ordered by resourceVersion, bounded
 * by count and by bytes. The resume rule is the watch cache's (apiserver
 * `watch_cache_history.go`): a resume from RV `n` is exact when `n >= start`, where `start` is
 * the RV the window's history begins after (the snapshot RV, or the RV of the last evicted
 * event). Older resume points are answered with 410 Expired.
 */

export interface WindowEvent {
  /** The event's resourceVersion (its object's `metadata.resourceVersion`). */
  readonly rv: number;
  /** The serialised watch event, `{"type":...,"object":...}\n`, sent as-is to every subscriber. */
  readonly line: string;
  /** For a MODIFIED, the same change as a delta line (see `k8s/delta.ts`), when it is shorter. */
  readonly delta?: string | undefined;
}

export interface WindowLimits {
  maxEvents: number;
  /**
   * Bound on the summed length of the lines held (UTF-16 units, close to bytes for JSON). A
   * MODIFIED's delta is held beside its line and kept only when shorter, so the window holds at
   * most twice this.
   */
  maxBytes: number;
}

/** What a subscriber that has seen everything up to some RV gets next. */
export type Replay = { kind: "events"; events: WindowEvent[] } | { kind: "expired"; oldest: number };

export class EventWindow {
  readonly #limits: WindowLimits;
  // Ring as array + offset: evictions advance `#first`; the array is compacted when half is dead.
  #events: WindowEvent[] = [];
  /** For each event, the bytes appended before it since the last reset: how far behind a position is, in bytes. */
  #offsets: number[] = [];
  #appended = 0;
  #first = 0;
  #bytes = 0;
  #start = 0;
  #head = 0;

  constructor(limits: WindowLimits) {
    this.#limits = limits;
  }

  /** Oldest resourceVersion a subscriber can resume from exactly. */
  get start(): number {
    return this.#start;
  }

  /** Newest resourceVersion the hub has reached (last event or bookmark). */
  get head(): number {
    return this.#head;
  }

  get size(): number {
    return this.#events.length - this.#first;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Forget every event: history now begins at `rv` (a fresh list). */
  reset(rv: number): void {
    this.#events = [];
    this.#offsets = [];
    this.#appended = 0;
    this.#first = 0;
    this.#bytes = 0;
    this.#start = rv;
    this.#head = rv;
  }

  /** Restore from storage: events in RV order and the bounds they were saved with. */
  restore(events: WindowEvent[], start: number, head: number): void {
    this.#events = events;
    this.#offsets = [];
    this.#appended = 0;
    for (const event of events) {
      this.#offsets.push(this.#appended);
      this.#appended += event.line.length;
    }
    this.#first = 0;
    this.#bytes = this.#appended;
    this.#start = start;
    this.#head = Math.max(head, events.at(-1)?.rv ?? head);
  }

  /**
   * Append an event newer than `head`. Returns the RV up to which events were evicted (so
   * storage can drop them), or `undefined` if nothing was evicted.
   */
  append(event: WindowEvent): number | undefined {
    if (event.rv <= this.#head) throw new RangeError(`event ${event.rv} is not after the window head ${this.#head}`);
    this.#events.push(event);
    this.#offsets.push(this.#appended);
    this.#appended += event.line.length;
    this.#bytes += event.line.length;
    this.#head = event.rv;
    return this.#evict();
  }

  /** A bookmark: nothing changed for this key up to `rv`. */
  advance(rv: number): void {
    if (rv > this.#head) this.#head = rv;
  }

  /**
   * The events after `rv`, at most `maxBytes` worth (at least one when there is one), or
   * `expired` when `rv` is older than the window can replay exactly.
   */
  after(rv: number, maxBytes = Infinity): Replay {
    if (rv < this.#start) return { kind: "expired", oldest: this.#start };
    const events: WindowEvent[] = [];
    let bytes = 0;
    for (let i = this.#indexAfter(rv); i < this.#events.length && (events.length === 0 || bytes < maxBytes); i++) {
      const event = this.#events[i] as WindowEvent;
      events.push(event);
      bytes += event.line.length;
    }
    return { kind: "events", events };
  }

  /** The summed length of the window's events newer than `rv`: what a subscriber there has yet to be sent. */
  bytesAfter(rv: number): number {
    const i = this.#indexAfter(rv);
    return i < this.#events.length ? this.#appended - (this.#offsets[i] as number) : 0;
  }

  /** Whether any event in the window is newer than `rv`. */
  hasEventsAfter(rv: number): boolean {
    return this.#indexAfter(rv) < this.#events.length;
  }

  #indexAfter(rv: number): number {
    let lo = this.#first;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#events[mid] as WindowEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #evict(): number | undefined {
    let evictedTo: number | undefined;
    while (this.size > 0 && (this.size > this.#limits.maxEvents || (this.#bytes > this.#limits.maxBytes && this.size > 1))) {
      const event = this.#events[this.#first] as WindowEvent;
      this.#bytes -= event.line.length;
      this.#first++;
      evictedTo = event.rv;
    }
    if (evictedTo !== undefined) {
      this.#start = evictedTo;
      // Drop the dead prefix once it is both large and most of the array.
      if (this.#first > 1024 && this.#first * 2 > this.#events.length) {
        this.#events = this.#events.slice(this.#first);
        this.#offsets = this.#offsets.slice(this.#first);
        this.#first = 0;
      }
    }
    return evictedTo;
  }
}
