/**
 * @module
 * What hubs keep in memory besides their bookkeeping, bounded per isolate: several hubs share an
 * isolate and its 128 MB (Cloudflare's Durable Objects limits), so no hub's share can be a
 * setting of its own. Two stores, each with a byte budget for the whole isolate:
 *
 * - `LineTail`s: each hub's most recent window events as ready-to-send lines (and deltas),
 *   what live subscribers are sent; the oldest lines of the isolate go first, and a hub reads
 *   lines no longer held from its storage.
 * - a `SliceCache`: serialised slices of what subscribers get first (a current state, net
 *   changes), shared by subscribers that start together; one evicted is read again.
 */
import { PagePermits } from "./page-permits.ts";

/** One window event held in memory. */
export interface TailEntry {
  readonly rv: number;
  /** Bytes appended to the window before it (since its history began). */
  readonly offset: number;
  readonly line: string;
  readonly delta?: string | undefined;
}

interface Held {
  readonly entry: TailEntry;
  readonly seq: number;
}

/** The lines of every hub in the isolate, oldest first across hubs, under one budget. */
export class LineMemory {
  readonly #budget: number;
  /**
   * Every entry ever held, in the order held; entries a tail has dropped since are skipped.
   * Places passed are cleared at once, so a stopped hub's tail is not kept by them.
   */
  #order: Array<{ tail: LineTail; seq: number } | undefined> = [];
  #first = 0;
  #seq = 0;
  #bytes = 0;
  #held = 0;

  constructor(budget: number) {
    this.#budget = budget;
  }

  /** Bytes of lines held, over all hubs. */
  get bytes(): number {
    return this.#bytes;
  }

  tail(): LineTail {
    return new LineTail(this);
  }

  /** @internal The place of the entry a tail is about to hold, in the isolate's order. */
  place(tail: LineTail): number {
    const seq = ++this.#seq;
    this.#order.push({ tail, seq });
    return seq;
  }

  /** @internal A tail holds the entry it was given a place for: the oldest in the isolate go while over the budget. */
  added(size: number): void {
    this.#bytes += size;
    this.#held++;
    while (this.#bytes > this.#budget && this.#first < this.#order.length) {
      const oldest = this.#order[this.#first] as { tail: LineTail; seq: number };
      this.#order[this.#first++] = undefined;
      oldest.tail.dropHeld(oldest.seq);
    }
    this.#compact();
  }

  /** @internal A tail let entries go. */
  removed(entries: number, size: number): void {
    this.#bytes -= size;
    this.#held -= entries;
    this.#compact();
  }

  /** Entries dropped by their tails leave stale places in the order: rebuilt once they are most of it. */
  #compact(): void {
    const places = this.#order.length - this.#first;
    if (places < 1024 || places < 2 * this.#held) return;
    this.#order = this.#order.slice(this.#first).filter((place) => place?.tail.holds(place.seq));
    this.#first = 0;
  }
}

/**
 * One hub's most recent window events: a suffix of its window (every event after `from`), as
 * long as the isolate's budget allows.
 */
export class LineTail {
  readonly #memory: LineMemory;
  /**
   * Held from `#first` on; the slots before it are cleared as their entries go, so a line is
   * freed when it is dropped (a quiet hub's array may not be compacted for a long while).
   */
  #entries: Array<Held | undefined> = [];
  #first = 0;
  /** Every window event after this resourceVersion is here. */
  #from = 0;
  #bytes = 0;

  constructor(memory: LineMemory) {
    this.#memory = memory;
  }

  /** Every event after this resourceVersion is held. */
  get from(): number {
    return this.#from;
  }

  get size(): number {
    return this.#entries.length - this.#first;
  }

  /** Bytes of the lines and deltas held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Start over: nothing held, the window's history begins after `rv`. */
  reset(rv: number): void {
    this.#drop(this.size);
    this.#from = rv;
  }

  /** The window's newest event: held, as the next of the suffix. */
  push(entry: TailEntry): void {
    const size = entry.line.length + (entry.delta?.length ?? 0);
    this.#entries.push({ entry, seq: this.#memory.place(this) });
    this.#bytes += size;
    this.#memory.added(size);
  }

  /** Events up to `rv` left the window. */
  evict(rv: number): void {
    let n = 0;
    while (this.#first + n < this.#entries.length && (this.#entries[this.#first + n] as Held).entry.rv <= rv) n++;
    this.#drop(n);
    if (rv > this.#from) this.#from = rv;
  }

  /** The held entries after `rv` (which must not be before `from`), oldest first, up to `maxBytes` (at least one). */
  after(rv: number, maxBytes: number): TailEntry[] {
    const out: TailEntry[] = [];
    let bytes = 0;
    for (let i = this.#indexAfter(rv); i < this.#entries.length && (out.length === 0 || bytes < maxBytes); i++) {
      const { entry } = this.#entries[i] as Held;
      out.push(entry);
      bytes += entry.line.length;
    }
    return out;
  }

  /** The first held entry after `rv`, if any. */
  firstAfter(rv: number): TailEntry | undefined {
    return this.#entries[this.#indexAfter(rv)]?.entry;
  }

  /** @internal Whether the entry the isolate placed as `seq` is still held. */
  holds(seq: number): boolean {
    const first = this.#entries[this.#first];
    return first !== undefined && seq >= first.seq && seq <= (this.#entries.at(-1) as Held).seq;
  }

  /** @internal The isolate's budget lets the entry placed as `seq` go: the oldest this tail holds, if it still does. */
  dropHeld(seq: number): void {
    if (this.#entries[this.#first]?.seq === seq) this.#drop(1);
  }

  #drop(n: number): void {
    if (n <= 0) return;
    let size = 0;
    for (let i = this.#first; i < this.#first + n; i++) {
      const { entry } = this.#entries[i] as Held;
      size += entry.line.length + (entry.delta?.length ?? 0);
      this.#from = Math.max(this.#from, entry.rv);
      this.#entries[i] = undefined;
    }
    this.#first += n;
    this.#bytes -= size;
    if (this.#first === this.#entries.length) {
      this.#entries = [];
      this.#first = 0;
    } else if (this.#first > 1024 && this.#first * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#first);
      this.#first = 0;
    }
    this.#memory.removed(n, size);
  }

  #indexAfter(rv: number): number {
    let lo = this.#first;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#entries[mid] as Held).entry.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Values by key, most recently used kept, under a byte budget for the whole isolate. */
export class SliceCache<T> {
  readonly #budget: number;
  readonly #entries = new Map<string, { value: T; size: number }>();
  #bytes = 0;

  constructor(budget: number) {
    this.#budget = budget;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): T | undefined {
    const held = this.#entries.get(key);
    if (!held) return undefined;
    // Most recently used last: a Map iterates in insertion order.
    this.#entries.delete(key);
    this.#entries.set(key, held);
    return held.value;
  }

  set(key: string, value: T, size: number): void {
    this.delete(key);
    this.#entries.set(key, { value, size });
    this.#bytes += size;
    for (const [oldest, held] of this.#entries) {
      if (this.#bytes <= this.#budget) break;
      this.#entries.delete(oldest);
      this.#bytes -= held.size;
    }
  }

  delete(key: string): void {
    const held = this.#entries.get(key);
    if (!held) return;
    this.#entries.delete(key);
    this.#bytes -= held.size;
  }
}

let isolate: { lines: LineMemory; slices: SliceCache<unknown>; pages: PagePermits } | undefined;

/** The isolate's stores (and its list pages' permits), made by the first hub with the budgets every hub's settings give (one configuration per Worker). */
export function isolateMemory<T>(budgets: { lines: number; slices: number; pages: number }): { lines: LineMemory; slices: SliceCache<T>; pages: PagePermits } {
  isolate ??= { lines: new LineMemory(budgets.lines), slices: new SliceCache(budgets.slices), pages: new PagePermits(budgets.pages) };
  return isolate as { lines: LineMemory; slices: SliceCache<T>; pages: PagePermits };
}
