/**
 * @module
 * Fan-out of one hub's events to its subscribers. Each batch arrives serialised once (the
 * window's lines); live subscribers get it straight away, in one send per subscriber.
 * Subscribers that are behind — sending the initial state, replaying after a resume, or not
 * keeping up — are pumped from the window in bounded slices, a few per turn, each as its
 * acknowledgements allow, so a storm of resumes neither stalls live delivery nor queues the
 * window per socket (the watch cache's `cache_interval` plays the same role), and a socket that
 * takes batches gets many events a message exactly when it is behind. A subscriber further
 * behind than its send budget, or one that falls out of the window, is cut off with a reason
 * and resumes from its last resourceVersion.
 */
import { errorLine, eventLine } from "../k8s/event.ts";
import { tooOldResourceVersion } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { CLOSE, LineBatch, type CloseReason, type Subscriber } from "./subscriber.ts";
import type { EventWindow, WindowEvent } from "./window.ts";

export interface FanoutSettings {
  /** Backlog beyond which a subscriber is cut off as slow. */
  budget: number;
}

export interface FanoutSource {
  readonly window: EventWindow;
  /** A BOOKMARK line at `rv` for this hub's kind. */
  bookmark(rv: number, initialEventsEnd?: boolean): string;
}

type Log = (message: string, fields?: Record<string, unknown>) => void;

/** Most a subscriber that is behind is sent in one slice. */
const SLICE = 256 * 1024;
/**
 * Unacknowledged bytes (at most half the budget) past which a subscriber is sent nothing more
 * until it acknowledges: a live one moves behind. Above the acknowledgement intervals of
 * clients, so one that keeps up stays live; low enough that the runtime holds little per socket.
 */
const IN_FLIGHT = 2 * SLICE;
/**
 * Most one pump turn sends before the hub takes in upstream events, acknowledgements and closes
 * again: a storm of resumes must not keep it sending to sockets whose close it has not yet had
 * a chance to hear. Bytes, not time: deployed, a Worker's clock stands still while code runs.
 */
const TURN_BYTES = 8 * SLICE;
/**
 * How long a busy hub gathers upstream events before it commits and sends them: a pass over S
 * subscribers costs some 30 µs × S per event message in workerd, and upstream chunks arrive one
 * per turn of its event loop, so waiting a little (more with more subscribers) lets one pass
 * carry many events. 1 ms plus 10 µs per subscriber, at most 10 ms: a bounded, small share of
 * a watch's latency.
 */
export function gatherMs(subscribers: number): number {
  return Math.min(20, 1 + subscribers / 20);
}

/** How soon to look again at subscribers that are waiting for their backlog to drain. */
const BLOCKED_RETRY_MS = 20;

export class Fanout {
  readonly #source: FanoutSource;
  readonly #settings: FanoutSettings;
  readonly #log: Log;
  readonly #live = new Set<Subscriber>();
  readonly #behind = new Set<Subscriber>();
  readonly #deadlines = new Map<Subscriber, ReturnType<typeof setTimeout>>();
  readonly #inFlight: number;
  #pumpTimer: ReturnType<typeof setTimeout> | undefined;
  #pumpDelay = 0;
  /** Called whenever a subscriber leaves (idle clock, quotas, access checks). */
  onDetach: (subscriber: Subscriber) => void = () => undefined;

  constructor(source: FanoutSource, settings: FanoutSettings, log: Log) {
    this.#source = source;
    this.#settings = settings;
    this.#log = log;
    this.#inFlight = Math.min(IN_FLIGHT, settings.budget / 2);
  }

  get size(): number {
    return this.#live.size + this.#behind.size;
  }

  subscribers(): IterableIterator<Subscriber> {
    return [...this.#live, ...this.#behind].values();
  }

  attach(subscriber: Subscriber): void {
    this.#behind.add(subscriber);
    const deadline = subscriber.options.deadline;
    if (deadline !== undefined) {
      this.#deadlines.set(subscriber, setTimeout(() => this.#expire(subscriber), Math.max(0, deadline - Date.now())));
    }
    this.#schedulePump(0);
  }

  /** Remove a subscriber, closing its sink with `reason` when given. Idempotent. */
  detach(subscriber: Subscriber, reason?: CloseReason): void {
    if (!this.#live.delete(subscriber) && !this.#behind.delete(subscriber)) return;
    const deadline = this.#deadlines.get(subscriber);
    if (deadline !== undefined) clearTimeout(deadline);
    this.#deadlines.delete(subscriber);
    if (reason) subscriber.sink.close(reason);
    this.onDetach(subscriber);
  }

  /** End a stream with an ERROR event carrying `status`, as the API server fails a running watch. */
  fail(subscriber: Subscriber, status: Status, reason: CloseReason): void {
    subscriber.sink.send(LineBatch.of(errorLine(status)));
    this.detach(subscriber, reason);
  }

  /**
   * New events from the feed, committed and in the window: each live subscriber gets them in
   * one send (the feed commits what arrived together, so under load that is many events).
   */
  publish(events: readonly WindowEvent[]): void {
    const last = events.at(-1);
    if (!last) return;
    const first = events[0] as WindowEvent;
    const all = new LineBatch(events.map((e) => e.line));
    for (const subscriber of this.#live) {
      if (subscriber.sink.closed) {
        this.detach(subscriber);
        continue;
      }
      if (subscriber.position >= last.rv) continue; // resumed ahead of the hub: not there yet
      if (subscriber.sink.backlog() > this.#inFlight) {
        // Not keeping up: caught up from the window as it acknowledges, or cut off by the pump.
        this.#live.delete(subscriber);
        this.#behind.add(subscriber);
        continue;
      }
      subscriber.sink.send(subscriber.position < first.rv ? all : new LineBatch(events.filter((e) => e.rv > subscriber.position).map((e) => e.line)));
      subscriber.position = last.rv;
    }
    if (this.#behind.size > 0) this.#schedulePump(0);
  }

  /** Send a BOOKMARK at the head to every live subscriber that asked for them and is behind it. */
  bookmarks(): void {
    const head = this.#source.window.head;
    let line: string | undefined;
    for (const subscriber of this.#live) {
      if (!subscriber.options.bookmarks || subscriber.position >= head || subscriber.sink.closed) continue;
      line ??= this.#source.bookmark(head);
      subscriber.sink.send(LineBatch.of(line));
      subscriber.position = head;
    }
  }

  /** History was reset: every subscriber's position is gone. Tell each, as the API server would. */
  expireAll(oldest: number): void {
    for (const subscriber of [...this.#live, ...this.#behind]) this.#expired(subscriber, oldest);
  }

  closeAll(reason: CloseReason): void {
    for (const subscriber of [...this.#live, ...this.#behind]) this.detach(subscriber, reason);
  }

  /** The client acknowledged or drained: look again at subscribers waiting on their backlog. */
  wake(): void {
    if (this.#behind.size > 0) this.#schedulePump(0);
  }

  #pump(): void {
    this.#pumpTimer = undefined;
    const window = this.#source.window;
    let sent = 0;
    for (const subscriber of [...this.#behind]) {
      if (sent >= TURN_BYTES) break;
      if (!subscriber.sink.alive()) {
        this.detach(subscriber);
        continue;
      }
      const backlog = subscriber.sink.backlog();
      if (backlog > this.#inFlight) {
        if (backlog + window.bytesAfter(subscriber.position) > this.#settings.budget) this.#cutOff(subscriber, `more than ${this.#settings.budget} bytes unsent`);
        continue;
      }
      // Round-robin: whoever is served goes to the back, so a long replay cannot starve the rest.
      this.#behind.delete(subscriber);
      this.#behind.add(subscriber);
      if (subscriber.initial) {
        sent += this.#sendInitial(subscriber);
        continue;
      }
      const replay = window.after(subscriber.position, SLICE);
      if (replay.kind === "expired") {
        this.#cutOff(subscriber, "fell out of the replay window while catching up");
        continue;
      }
      const last = replay.events.at(-1);
      if (last) {
        const lines = replay.events.map((e) => e.line);
        subscriber.sink.send(new LineBatch(lines));
        subscriber.position = last.rv;
        sent += lines.reduce((n, line) => n + line.length, 0);
      }
      if (!window.hasEventsAfter(subscriber.position)) {
        this.#behind.delete(subscriber);
        this.#live.add(subscriber);
        // A resume has caught up: one BOOKMARK at the head tells the client where its replay
        // ended (so it can say what it missed) and gives it a fresh resume point at once.
        if (subscriber.resumeBookmarkDue && subscriber.options.bookmarks) {
          subscriber.sink.send(LineBatch.of(this.#source.bookmark(window.head)));
          subscriber.position = window.head;
        }
        subscriber.resumeBookmarkDue = false;
      }
    }
    // Nobody could be sent anything: they wait on acknowledgements (`wake`), or on this.
    if (this.#behind.size > 0) this.#schedulePump(sent > 0 ? 0 : BLOCKED_RETRY_MS);
  }

  /** Send the next slice of the initial state (the last ends it, with the annotated bookmark when asked); the bytes sent. */
  #sendInitial(subscriber: Subscriber): number {
    const objects = subscriber.initial ?? [];
    const lines: string[] = [];
    let size = 0;
    while (subscriber.initialSent < objects.length && size < SLICE) {
      const line = eventLine("ADDED", (objects[subscriber.initialSent++] as { json: string }).json);
      lines.push(line);
      size += line.length;
    }
    if (subscriber.initialSent >= objects.length) {
      subscriber.initial = undefined;
      if (subscriber.options.initialEventsEnd) {
        const bookmark = this.#source.bookmark(subscriber.position, true);
        lines.push(bookmark);
        size += bookmark.length;
      }
    }
    if (lines.length > 0) subscriber.sink.send(new LineBatch(lines));
    return size;
  }

  /** Run the pump after `delay`, or sooner if it is already due sooner. */
  #schedulePump(delay: number): void {
    if (this.#pumpTimer !== undefined) {
      if (this.#pumpDelay <= delay) return;
      clearTimeout(this.#pumpTimer);
    }
    this.#pumpDelay = delay;
    this.#pumpTimer = setTimeout(() => this.#pump(), delay);
  }

  #cutOff(subscriber: Subscriber, why: string): void {
    this.#log("subscriber cut off", { subscriber: subscriber.id, transport: subscriber.sink.transport, why });
    this.detach(subscriber, { code: CLOSE.slow, reason: `slow subscriber: ${why}; resume from your last resourceVersion` });
  }

  #expired(subscriber: Subscriber, oldest: number): void {
    this.fail(subscriber, tooOldResourceVersion(subscriber.position, oldest), { code: CLOSE.normal, reason: "resourceVersion expired" });
  }

  /** `timeoutSeconds` reached: a last bookmark (so the client resumes cheaply), then a clean end. */
  #expire(subscriber: Subscriber): void {
    const head = this.#source.window.head;
    if (subscriber.options.bookmarks && this.#live.has(subscriber) && subscriber.position < head) {
      subscriber.sink.send(LineBatch.of(this.#source.bookmark(head)));
      subscriber.position = head;
    }
    this.detach(subscriber, { code: CLOSE.normal, reason: "timeoutSeconds reached" });
  }
}
