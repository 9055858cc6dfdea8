/**
 * @module
 * A log hub's followers and what they are sent. Each follower is at a position in a buffer, as a
 * watch subscriber is in a hub's window, and is sent what follows it: the same bytes for everyone
 * at the same position who asked for the same form (with or without timestamps), made once.
 * A follower whose start the buffer did not hold first reads its own history from the upstream
 * (the hub's `LogSource.history`), streamed to it as it arrives, while its place in the buffer is
 * kept from before that read was asked for; then it goes on from that place, skipping what its
 * history already had (by place in the log), so nothing is missed or repeated where they meet.
 *
 * Each follower's own options apply on the way out: timestamps taken off or left, `sinceTime` in
 * the future, and `limitBytes`, which ends its stream after that many bytes (as the kubelet's
 * does, possibly mid-line). A follower with too much sent but not taken waits (its
 * acknowledgements, or its HTTP body being read, wake it): the buffer keeps what it has yet to
 * take; once that and what it has not taken are more than its budget (`SUBSCRIBER_BUDGET_BYTES`),
 * or the isolate's memory let its place go, it is cut off with a reason.
 */
import type { Grant } from "../auth/access.ts";
import { comparePlace, joinLines, LogLineReader, withoutTimestamp, type LinePlace, type LogLine } from "../k8s/log-lines.ts";
import type { Nanos } from "../k8s/rfc3339.ts";
import { CLOSE } from "../k8s/websocket.ts";
import type { Log } from "../log.ts";
import type { Transport } from "../metrics/catalog.ts";
import { realClock, type Cancel, type Clock } from "../hub/clock.ts";
import { inFlightLimit, SLICE } from "../hub/fanout.ts";
import type { CloseReason, Sink } from "../hub/subscriber.ts";
import type { LogBuffer } from "./buffer.ts";

/** Where a follower's bytes go: an HTTP body, or a WebSocket's messages (binary, or base64 text). */
export interface LogSink extends Pick<Sink, "backlog" | "alive" | "close" | "closed"> {
  readonly transport: Transport;
  /** Send these bytes; the runtime messages (or chunks) it cost. */
  deliver(bytes: Uint8Array): number;
}

export interface FollowerOptions {
  timestamps: boolean;
  /** `limitBytes`: its stream ends after this many bytes. */
  limitBytes: number | undefined;
  /** Lines older than this are not sent (a `sinceTime` ahead of the log). */
  since: Nanos | undefined;
  /** Who follows, on what grant (absent without auth). */
  grant?: Grant | undefined;
}

let nextId = 1;

export class Follower {
  readonly id = nextId++;
  readonly sink: LogSink;
  readonly options: FollowerOptions;
  readonly buffer: LogBuffer;
  /** The position it has been sent everything before. */
  position: number;
  /** Its own history is being read: the buffer's lines wait for it at `position`. */
  reading: boolean;
  /** What it was sent up to from its history: the buffer's lines up to this place are skipped. */
  after: LinePlace | undefined;
  since: Nanos | undefined;
  /** Bytes it may still be sent (`limitBytes`). */
  left: number;

  constructor(sink: LogSink, options: FollowerOptions, buffer: LogBuffer, position: number, reading: boolean) {
    this.sink = sink;
    this.options = options;
    this.buffer = buffer;
    this.position = position;
    this.reading = reading;
    this.since = options.since;
    this.left = options.limitBytes ?? Number.POSITIVE_INFINITY;
  }
}

/** How soon followers waiting for their backlog to drain are looked at again. */
const BLOCKED_RETRY_MS = 20;

export type LogCutoffReason = "slow" | "buffer";

export class LogFanout {
  readonly #budget: number;
  readonly #inFlight: number;
  readonly #log: Log;
  readonly #clock: Clock;
  readonly #followers = new Set<Follower>();
  /** Histories waiting for their follower's backlog to drain. */
  #drained: Array<() => void> = [];
  /** The histories being read, by follower: cancelled when it leaves, so the upstream's read ends with it. */
  readonly #histories = new Map<Follower, ReadableStreamDefaultReader<Uint8Array>>();
  #turnTimer: Cancel | undefined;
  #turnDelay = 0;
  #waiting = false;
  /** Called whenever a follower leaves (idle clock, quotas, access checks, metrics). */
  onDetach: (follower: Follower) => void = () => undefined;
  /** Called after each send with the lines sent and the messages they cost (metrics). */
  onSent: (follower: Follower, lines: number, messages: number) => void = () => undefined;
  onCutOff: (follower: Follower, reason: LogCutoffReason) => void = () => undefined;

  /** `budget`: `SUBSCRIBER_BUDGET_BYTES`, as for a watch. */
  constructor(budget: number, log: Log, clock: Clock = realClock) {
    this.#budget = budget;
    this.#inFlight = inFlightLimit(budget);
    this.#log = log;
    this.#clock = clock;
  }

  get size(): number {
    return this.#followers.size;
  }

  get followers(): Iterable<Follower> {
    return this.#followers;
  }

  attach(follower: Follower): void {
    this.#followers.add(follower);
    this.#schedule(0);
  }

  /** Remove a follower, closing its sink with `reason` when given. Idempotent. */
  detach(follower: Follower, reason?: CloseReason): void {
    if (!this.#followers.delete(follower)) return;
    if (reason) follower.sink.close(reason);
    const history = this.#histories.get(follower);
    this.#histories.delete(follower);
    void history?.cancel().catch(() => undefined);
    this.onDetach(follower);
    this.#wakeHistories();
  }

  /** New lines are in a buffer: the first turn runs now. */
  publish(): void {
    this.#turnTimer?.();
    this.#turnTimer = undefined;
    this.#turn();
  }

  /** A follower's sink drained or acknowledged: followers waiting on their backlog may go on. */
  wake(): void {
    this.#wakeHistories();
    if (this.#waiting) this.#schedule(0);
  }

  /** Stream a follower's own history (`body`: the log with timestamps) to it, then let it join the buffer's lines. */
  async history(follower: Follower, body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    if (!this.#followers.has(follower)) return void reader.cancel().catch(() => undefined);
    this.#histories.set(follower, reader);
    const lines = new LogLineReader();
    let last: LinePlace | undefined;
    try {
      for (;;) {
        while (this.#followers.has(follower) && follower.sink.backlog() > this.#inFlight) await this.#drain();
        if (!this.#followers.has(follower)) return;
        const { done, value } = await reader.read();
        // Gone while it waited: its detach cancelled the read.
        if (!this.#followers.has(follower)) return;
        if (done) break;
        const complete = lines.push(value);
        if (complete.length === 0) continue;
        this.#deliver(follower, joinLines(complete, follower.options.timestamps ? (l) => l.bytes : withoutTimestamp), complete.length);
        for (const line of complete) if (line.complete) last = line;
        if (!this.#followers.has(follower)) return;
      }
    } catch (e) {
      if (!this.#followers.has(follower)) return;
      // As the API server's own stream would have ended.
      this.#log("log follower's history failed", { follower: follower.id, error: String(e) });
      this.detach(follower, { code: CLOSE.normal, reason: "the upstream ended the log's history early" });
      return;
    } finally {
      if (this.#histories.get(follower) === reader) this.#histories.delete(follower);
    }
    // A last line without its newline is being written: the buffer's lines bring it whole.
    follower.after = last;
    follower.reading = false;
    this.#schedule(0);
  }

  /** One turn: every follower that can be is sent what is ready for it, up to a slice each. */
  /** The first position of `buffer` a follower has yet to be sent (its head when none). */
  lowest(buffer: LogBuffer): number {
    let lowest = buffer.head;
    for (const follower of this.#followers) if (follower.buffer === buffer && follower.position < lowest) lowest = follower.position;
    return lowest;
  }

  #turn(): void {
    this.#turnTimer = undefined;
    const shared = new Map<string, { bytes: Uint8Array; lines: number; next: number }>();
    let more = false;
    let blocked = false;
    for (const follower of [...this.#followers]) {
      const { buffer } = follower;
      if (follower.position < buffer.start) {
        this.#cutOff(follower, "the log's lines after its position were let go (LOG_MEMORY_BYTES) before it took them", "buffer");
        continue;
      }
      if (follower.reading) {
        // What waits for it while its history is read is held for it, up to its budget.
        if (buffer.bytesAfter(follower.position) > this.#budget) this.#cutOff(follower, `more than ${this.#budget} bytes of the log came while its history was read`, "slow");
        continue;
      }
      if (!follower.sink.alive()) {
        this.detach(follower);
        continue;
      }
      if (follower.position >= buffer.head) {
        if (buffer.ended) this.detach(follower, { code: CLOSE.normal, reason: "the container's log ended" });
        continue;
      }
      const backlog = follower.sink.backlog();
      if (backlog > this.#inFlight) {
        if (backlog + buffer.bytesAfter(follower.position) > this.#budget) this.#cutOff(follower, `more than ${this.#budget} bytes unsent`, "slow");
        else blocked = true;
        continue;
      }
      const filtered = follower.after !== undefined || follower.since !== undefined;
      const key = `${buffer.id}:${follower.position}:${follower.options.timestamps}`;
      let batch = filtered ? undefined : shared.get(key);
      if (!batch) {
        const lines: LogLine[] = [];
        let bytes = 0;
        let next = follower.position;
        while (next < buffer.head && bytes < SLICE) {
          const line = buffer.at(next++);
          bytes += line.bytes.length;
          if (filtered && !this.#wanted(follower, line)) continue;
          lines.push(line);
        }
        batch = { bytes: joinLines(lines, follower.options.timestamps ? (l) => l.bytes : withoutTimestamp), lines: lines.length, next };
        if (!filtered) shared.set(key, batch);
      }
      follower.position = batch.next;
      if (batch.lines > 0) this.#deliver(follower, batch.bytes, batch.lines);
      if (this.#followers.has(follower) && follower.position < buffer.head) more = true;
      if (this.#followers.has(follower) && follower.position >= buffer.head && buffer.ended) this.detach(follower, { code: CLOSE.normal, reason: "the container's log ended" });
    }
    this.#waiting = blocked;
    if (more) this.#schedule(0);
    else if (blocked) this.#schedule(BLOCKED_RETRY_MS);
  }

  /** Whether a line of the buffer is one the follower still takes: past its history, not before its since. */
  #wanted(follower: Follower, line: LogLine): boolean {
    if (follower.after) {
      if (comparePlace(line, follower.after) <= 0) return false;
      follower.after = undefined;
    }
    if (follower.since !== undefined) {
      if (line.time < follower.since) return false;
      follower.since = undefined;
    }
    return true;
  }

  /** Bytes to a follower, cut at its `limitBytes` (after which its stream ends). */
  #deliver(follower: Follower, bytes: Uint8Array, lines: number): void {
    const last = bytes.length >= follower.left;
    const sent = last ? bytes.subarray(0, follower.left) : bytes;
    follower.left -= sent.length;
    this.onSent(follower, lines, follower.sink.deliver(sent));
    if (last) this.detach(follower, { code: CLOSE.normal, reason: "limitBytes reached" });
  }

  #cutOff(follower: Follower, why: string, reason: LogCutoffReason): void {
    this.#log("log follower cut off", { follower: follower.id, transport: follower.sink.transport, why });
    this.onCutOff(follower, reason);
    this.detach(follower, { code: CLOSE.slow, reason: `slow log follower: ${why}` });
  }

  /** Resolves at the next wake, or soon anyway. */
  #drain(): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.#clock.after(BLOCKED_RETRY_MS, resolve);
      this.#drained.push(() => {
        cancel();
        resolve();
      });
    });
  }

  #wakeHistories(): void {
    for (const wake of this.#drained.splice(0)) wake();
  }

  #schedule(delay: number): void {
    if (this.#turnTimer !== undefined) {
      if (this.#turnDelay <= delay) return;
      this.#turnTimer();
    }
    this.#turnDelay = delay;
    this.#turnTimer = this.#clock.after(delay, () => this.#turn());
  }
}
