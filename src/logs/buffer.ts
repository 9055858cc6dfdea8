/**
 * @module
 * A log hub's recent lines: what its upstream stream has read, in order, each at a position (a
 * sequence number), so a follower is somewhere in the log as a watch subscriber is somewhere in
 * a hub's window. Bounded twice, the oldest lines going first: by lines per hub
 * (`LOG_BUFFER_LINES`, beyond which only lines a follower has yet to be sent are kept, and a
 * follower is cut off once those are more than its budget), and by bytes for all the log hubs of
 * an isolate together (`LOG_MEMORY_BYTES`: several hubs share an isolate's 128 MB, so no hub's
 * share can be a setting of its own; the hub holding the most gives up its oldest line first).
 *
 * A buffer knows what of the log it holds all of: every line from some time on (or from the
 * log's start), and how many lines. That decides whether a follower who asks for the last N
 * lines, or the lines since a time, can be served from it, or needs its own read of the log.
 */
import type { LogLine } from "../k8s/log-lines.ts";
import type { Nanos } from "../k8s/rfc3339.ts";

/** The log buffers of an isolate, under one byte budget. */
export class LogMemory {
  readonly #budget: number;
  readonly #buffers = new Set<LogBuffer>();
  #bytes = 0;

  constructor(budget: number) {
    this.#budget = budget;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** @internal */
  register(buffer: LogBuffer): void {
    this.#buffers.add(buffer);
  }

  /** @internal A buffer is no longer used: what it held no longer counts. */
  release(buffer: LogBuffer): void {
    if (this.#buffers.delete(buffer)) this.#bytes -= buffer.bytes;
  }

  /** @internal A buffer took `size` bytes more: while over the budget, the largest gives up its oldest line. */
  added(size: number): void {
    this.#bytes += size;
    while (this.#bytes > this.#budget) {
      let largest: LogBuffer | undefined;
      for (const buffer of this.#buffers) if (!largest || buffer.bytes > largest.bytes) largest = buffer;
      if (!largest || largest.size === 0) return;
      largest.dropOldest();
    }
  }

  /** @internal */
  removed(size: number): void {
    this.#bytes -= size;
  }
}

let isolate: LogMemory | undefined;

/** The isolate's log memory, made by the first log hub with the budget every hub's settings give (one configuration per Worker). */
export const isolateLogMemory = (budget: number): LogMemory => (isolate ??= new LogMemory(budget));

let nextId = 1;

export class LogBuffer {
  /** Tells buffers apart: a new upstream stream (the container's next run) gets a new one. */
  readonly id = nextId++;
  readonly #memory: LogMemory;
  readonly #maxLines: number;
  #lines: LogLine[] = [];
  /** Bytes appended before each held line, from the buffer's start: what lies after a position, without summing. */
  #offsets: number[] = [];
  #first = 0;
  /** The position of `#lines[#first]`. */
  #start = 0;
  #appended = 0;
  #bytes = 0;
  /** Line starts held (what `tailLines` counts). */
  #starts = 0;
  /** Every line of the log is held since its start (nothing was ever dropped, and it began at the start). */
  #whole: boolean;
  /** Every line of the log from this time on is held. */
  #from: Nanos;
  /** The upstream stream this buffer was filled from has ended: no line will follow the last. */
  ended = false;

  /**
   * `lines`: what it starts with. `whole`: they are the log from its start (and its stream goes
   * on from the last of them); otherwise the log is held from just after the first line's time
   * (lines of that very time may be missing).
   */
  constructor(memory: LogMemory, maxLines: number, lines: readonly LogLine[], whole: boolean) {
    this.#memory = memory;
    this.#maxLines = maxLines;
    this.#whole = whole;
    this.#from = lines.length > 0 ? (lines[0] as LogLine).time + 1n : 0n;
    memory.register(this);
    for (const line of lines) this.push(line);
  }

  /** The position after the newest line: where a follower who has everything is. */
  get head(): number {
    return this.#start + this.size;
  }

  /** The position of the oldest line held. */
  get start(): number {
    return this.#start;
  }

  get size(): number {
    return this.#lines.length - this.#first;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The line at `position` (between `start` and `head`). */
  at(position: number): LogLine {
    return this.#lines[this.#first + position - this.#start] as LogLine;
  }

  /** Bytes of the lines from `position` to the head. */
  bytesAfter(position: number): number {
    if (position >= this.head) return 0;
    return this.#appended - (this.#offsets[this.#first + Math.max(position, this.#start) - this.#start] as number);
  }

  push(line: LogLine): void {
    this.#lines.push(line);
    this.#offsets.push(this.#appended);
    this.#appended += line.bytes.length;
    this.#bytes += line.bytes.length;
    if (line.starts) this.#starts++;
    this.#memory.added(line.bytes.length);
  }

  /**
   * Back to the line budget, keeping what followers have yet to be sent (from `keep` on): a burst
   * longer than the budget, read in one chunk, is held until they have it (a follower that falls
   * further behind than its own budget is cut off, and keeps nothing).
   */
  trim(keep: number): void {
    while (this.#starts > this.#maxLines && this.#start < keep && this.size > 0) this.dropOldest();
  }

  /** @internal Let the oldest line go (the line budget, or the isolate's). */
  dropOldest(): void {
    const line = this.#lines[this.#first] as LogLine;
    this.#first++;
    this.#start++;
    this.#bytes -= line.bytes.length;
    if (line.starts) this.#starts--;
    this.#whole = false;
    if (line.time + 1n > this.#from) this.#from = line.time + 1n;
    if (this.#first > 1024 && this.#first * 2 > this.#lines.length) {
      this.#lines = this.#lines.slice(this.#first);
      this.#offsets = this.#offsets.slice(this.#first);
      this.#first = 0;
    }
    this.#memory.removed(line.bytes.length);
  }

  /** The buffer is replaced (the upstream stream ended and another began): its lines no longer count. */
  release(): void {
    this.#memory.release(this);
  }

  /**
   * Where a follower asking for the last `tailLines` lines and/or the lines since `since` (the
   * kubelet's order: the tail, then what of it is not older) starts in this buffer, or
   * `undefined` when the buffer does not hold all of that; without either, the whole log.
   */
  startFor(tailLines: number | undefined, since: Nanos | undefined): number | undefined {
    if (tailLines !== undefined) {
      if (!this.#whole && this.#starts < tailLines) return undefined;
      let position = this.head;
      for (let counted = 0; counted < tailLines && position > this.#start; ) if (this.at(--position).starts) counted++;
      return since === undefined ? position : Math.max(position, this.#firstSince(since));
    }
    if (since !== undefined) return this.#whole || this.#from <= since ? this.#firstSince(since) : undefined;
    return this.#whole ? this.#start : undefined;
  }

  /** The first position whose line is not older than `since` (the head if none). */
  #firstSince(since: Nanos): number {
    let lo = this.#start;
    let hi = this.head;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).time < since) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
