/**
 * @module
 * Fan-out of one hub's events to its subscribers, after the watch cache's cache_watcher: each
 * subscriber has a position in the window (the resourceVersion it has been sent everything up
 * to), and is sent what follows it — its initial state first, if it asked for one. Delivery
 * goes in turns over all subscribers, round-robin: in a turn each subscriber that has something
 * to send and room for it gets what is ready, in one send (a slice of at most `SLICE`, shared
 * by every subscriber at the same position, so serialised and encoded once), and a turn stops
 * after `TURN_MESSAGES` messages, so the hub returns to its event loop — which is when the
 * runtime writes to sockets, reads the upstream and hears acknowledgements and closes — long
 * before a burst or a storm of resumes is through. A subscriber with too much sent but not
 * taken waits (its acknowledgements wake it); one further behind than its budget, or out of
 * the window, is cut off with a reason and resumes from its last resourceVersion.
 */
import { errorLine } from "../k8s/event.ts";
import { tooLargeResourceVersion, tooOldResourceVersion } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";
import { CLOSE } from "../k8s/websocket.ts";
import { realClock, type Cancel, type Clock } from "./clock.ts";
import type { InitialEvents } from "./initial.ts";
import type { SliceCache } from "./memory.ts";
import { LineBatch, type CloseReason, type LineFilter, type Subscriber } from "./subscriber.ts";
import type { EventWindow } from "./window.ts";

export interface FanoutSettings {
  /** Backlog beyond which a subscriber is cut off as slow. */
  budget: number;
  /** Where slices of initial states are kept, for the subscribers that start together (the isolate's). */
  slices: SliceCache<InitialSliceBatch>;
}

/** A slice of what subscribers get first, serialised for sending; `next` is where the following one starts. */
export interface InitialSliceBatch {
  readonly batch: LineBatch;
  readonly next: string | undefined;
}

export interface FanoutSource {
  readonly window: EventWindow;
  /** A BOOKMARK line at `rv` for this hub's kind. */
  bookmark(rv: number, initialEventsEnd?: boolean): string;
}

/** Most one subscriber is sent in one send. */
export const SLICE = 256 * 1024;
/**
 * Unacknowledged bytes (at most half the budget) past which a subscriber is sent nothing more
 * until it acknowledges. Above the acknowledgement intervals of clients, so one that keeps up is
 * never held; low enough that the runtime holds little per socket.
 */
const IN_FLIGHT = 2 * SLICE;
export const inFlightLimit = (budget: number): number => Math.min(IN_FLIGHT, budget / 2);
/** Most a subscriber that acknowledges has unacknowledged while the hub still sends: its in-flight bound and the slice that crossed it. */
export const inFlightAllowance = (budget: number): number => inFlightLimit(budget) + SLICE;

/**
 * What one turn sends before the hub yields to its event loop: at most this many runtime
 * messages (WebSocket messages, HTTP chunks; about 30 ms of sends in workerd) and this many
 * bytes (what the runtime must copy to sockets before it can read anything else). Counted, not
 * timed: deployed, a Worker's clock stands still while code runs.
 */
export const TURN_MESSAGES = 1000;
export const TURN_BYTES = 8 * 1024 * 1024;
/**
 * How often a paced subscriber (the paced subprotocol: a relay socket's link to this hub) is sent
 * its live events, at most (ms). Each message costs the hub a send and the mux object a receive,
 * a retag and a send on; a message a commit would cost that at every commit (at 40 events/s, one
 * event each), so a link takes several commits a message. Bounded like the gather's lateness extra
 * (`MAX_EXTRA_MS`): what it may add to an event's latency. Its first events, any after a quiet
 * spell, a replay that takes several slices, and a quarter of its in-flight bound waiting go at once.
 */
export const PACE_MS = 100;
/** How soon to look again at subscribers that are waiting for their backlog to drain. */
const BLOCKED_RETRY_MS = 20;
/** A stream that asked for bookmarks is sent one this long before its `timeoutSeconds` ends it, as the API server's cacher does (`nextBookmarkTime`). */
export const BOOKMARK_BEFORE_END_MS = 2000;
/** How long before that bookmark the hub asks the upstream how far it has got, when it has nothing newer to send (a short upstream watch's answer takes about a second). */
export const PROGRESS_LEAD_MS = 3000;

export class Fanout {
  readonly #source: FanoutSource;
  readonly #settings: FanoutSettings;
  readonly #log: Log;
  readonly #clock: Clock;
  /** Every subscriber, in the order the next turn visits them: whoever is served goes to the back. */
  readonly #subscribers = new Set<Subscriber>();
  readonly #deadlines = new Map<Subscriber, Cancel>();
  readonly #inFlight: number;
  /** What a paced subscriber is sent at once, due or not: a quarter of its in-flight bound. */
  readonly #paceBytes: number;
  #deltaSubscribers = 0;
  #replicas = 0;
  #turnTimer: Cancel | undefined;
  #turnDelay = 0;
  /** The last turn left subscribers waiting for their backlog to drain. */
  #waiting = false;
  /** Called whenever a subscriber leaves (idle clock, quotas, access checks). */
  onDetach: (subscriber: Subscriber) => void = () => undefined;
  /**
   * Called after each send with the events (lines) sent, the runtime messages they cost, and
   * whether this send compressed the batch (1: the first compressed framing's subscriber it went
   * to; every other is sent the same bytes) (metrics).
   */
  onSent: (subscriber: Subscriber, events: number, messages: number, compressed: number) => void = () => undefined;
  /** Called when a client acknowledged or drained what it was sent (the views' own flow control). */
  onWake: () => void = () => undefined;
  /** Called as a subscriber is cut off: too slow, or fell out of the window (metrics). */
  onCutOff: (subscriber: Subscriber, reason: "slow" | "window") => void = () => undefined;
  /**
   * Called shortly before a stream's bookmark before its end, when the hub has nothing newer to
   * send it: learn how far the upstream has got, unless heard since `since` (the stream's start, ms).
   */
  onProgressWanted: (since: number) => void = () => undefined;

  constructor(source: FanoutSource, settings: FanoutSettings, log: Log, clock: Clock = realClock) {
    this.#source = source;
    this.#settings = settings;
    this.#log = log;
    this.#clock = clock;
    this.#inFlight = inFlightLimit(settings.budget);
    this.#paceBytes = this.#inFlight / 4;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /** Subscribers that are not replicas of this hub: the clients it serves itself. */
  get clients(): number {
    return this.#subscribers.size - this.#replicas;
  }

  /** Whether any subscriber takes deltas (so the feed encodes them). */
  get wantsDeltas(): boolean {
    return this.#deltaSubscribers > 0;
  }

  get subscribers(): Iterable<Subscriber> {
    return this.#subscribers;
  }

  attach(subscriber: Subscriber): void {
    this.#subscribers.add(subscriber);
    subscriber.initial?.acquire();
    if (subscriber.options.deltasAfter !== undefined) this.#deltaSubscribers++;
    if (subscriber.options.replica !== undefined) this.#replicas++;
    const timeoutMs = subscriber.options.timeoutMs;
    if (timeoutMs !== undefined) this.#deadlines.set(subscriber, this.#timers(subscriber, timeoutMs));
    this.#schedule(0);
  }

  /**
   * The end of a stream at `timeoutMs`, and, if it asked for bookmarks, its bookmark
   * `BOOKMARK_BEFORE_END_MS` before (none for a stream too short for it, as the API server's),
   * with a look `PROGRESS_LEAD_MS` before that at whether the hub has anything newer for it.
   */
  #timers(subscriber: Subscriber, timeoutMs: number): Cancel {
    const cancels = [this.#clock.after(timeoutMs, () => this.#expire(subscriber))];
    const bookmarkMs = timeoutMs - BOOKMARK_BEFORE_END_MS;
    if (subscriber.options.bookmarks && bookmarkMs > 0) {
      const since = this.#clock.now();
      cancels.push(
        this.#clock.after(Math.max(0, bookmarkMs - PROGRESS_LEAD_MS), () => {
          if (this.#hasAll(subscriber) && subscriber.position >= this.#source.window.head) this.onProgressWanted(since);
        }),
        this.#clock.after(bookmarkMs, () => {
          if (this.#behindOnlyByBookmark(subscriber)) this.#toHead(subscriber);
        }),
      );
    }
    return () => {
      for (const cancel of cancels) cancel();
    };
  }

  /** Remove a subscriber, closing its sink with `reason` when given. Idempotent. */
  detach(subscriber: Subscriber, reason?: CloseReason): void {
    if (!this.#subscribers.delete(subscriber)) return;
    subscriber.initial?.release();
    subscriber.initial = undefined;
    if (subscriber.options.deltasAfter !== undefined) this.#deltaSubscribers--;
    if (subscriber.options.replica !== undefined) this.#replicas--;
    this.#deadlines.get(subscriber)?.();
    this.#deadlines.delete(subscriber);
    if (reason) subscriber.sink.close(reason);
    this.onDetach(subscriber);
  }

  /** End a stream with an ERROR event carrying `status`, as the API server fails a running watch. */
  fail(subscriber: Subscriber, status: Status, reason: CloseReason): void {
    this.#send(subscriber, LineBatch.of(errorLine(status)));
    this.detach(subscriber, reason);
  }

  /** New events are in the window (committed): the first turn runs now, the rest as the hub yields. */
  publish(): void {
    this.#turnTimer?.();
    this.#turn();
  }

  /** Send a BOOKMARK at the head to every caught-up subscriber that asked for them and is behind it. */
  bookmarks(): void {
    let line: string | undefined;
    for (const subscriber of [...this.#subscribers]) {
      if (!this.#behindOnlyByBookmark(subscriber)) continue;
      // The slow tick is where a quiet hub finds a socket that died without its close arriving.
      if (!subscriber.sink.alive()) {
        this.detach(subscriber);
        continue;
      }
      line = this.#toHead(subscriber, line);
    }
  }

  /** Let every HTTP stream that was sent nothing lately be written to, so the runtime notices the clients that left. */
  keepAlive(): void {
    for (const subscriber of this.#subscribers) subscriber.sink.keepAlive?.();
  }

  /**
   * History was reset at `oldest`: every subscriber's position is gone. Tell each, as the API
   * server would: 410 for a position before the new history, "too large" for one after it (the
   * upstream went back in time), on which client-go's reflector relists too.
   */
  expireAll(oldest: number): void {
    for (const subscriber of [...this.#subscribers]) {
      // A view has no position: it is sent its window afresh.
      if (subscriber.options.view) continue;
      const ahead = subscriber.position > oldest;
      const status = ahead ? tooLargeResourceVersion(subscriber.position, oldest) : tooOldResourceVersion(subscriber.position, oldest);
      this.fail(subscriber, status, { code: CLOSE.normal, reason: ahead ? "resourceVersion ahead of the upstream's history" : "resourceVersion expired" });
    }
  }

  /** A client acknowledged or drained: subscribers waiting on their backlog may go on. */
  wake(): void {
    this.onWake();
    if (this.#waiting) this.#schedule(0);
  }

  /**
   * One turn: visit subscribers in order and send each what is ready for it, until the turn's
   * messages are spent. Slices are built once per position and shared.
   */
  #turn(): void {
    this.#turnTimer = undefined;
    const window = this.#source.window;
    const slices = new Map<number | string, { batch: LineBatch; last: number } | undefined>();
    let messages = 0;
    let bytes = 0;
    let more = false;
    let blocked = false;
    /** How soon a paced subscriber that was passed over is due (ms). */
    let paced = Infinity;
    const now = this.#clock.now();
    for (const subscriber of [...this.#subscribers]) {
      if (messages >= TURN_MESSAGES || bytes >= TURN_BYTES) {
        more = true;
        break;
      }
      // A view is sent its rows by the hub's views, not events.
      if (subscriber.options.view) continue;
      const pending = subscriber.initial !== undefined || window.hasEventsAfter(subscriber.position);
      if (!pending) {
        this.#caughtUp(subscriber);
        continue;
      }
      // A look at the socket only for whoever is about to be sent something.
      if (!subscriber.sink.alive()) {
        this.detach(subscriber);
        continue;
      }
      const backlog = subscriber.sink.backlog();
      if (backlog > this.#inFlight) {
        if (backlog + window.bytesAfter(subscriber.position) > this.#settings.budget) this.#cutOff(subscriber, `more than ${this.#settings.budget} bytes unsent`, "slow");
        else blocked = true;
        continue;
      }
      // Paced: what comes before it is due again waits, to go with what follows in one message;
      // not more than a fraction of its in-flight bound, so a paced message never holds it back.
      if (subscriber.pausedUntil > now && !subscriber.initial && window.bytesAfter(subscriber.position) < this.#paceBytes) {
        paced = Math.min(paced, subscriber.pausedUntil - now);
        continue;
      }
      // Round-robin: whoever is served goes to the back, so a long replay cannot starve the rest.
      this.#subscribers.delete(subscriber);
      this.#subscribers.add(subscriber);
      if (subscriber.initial) {
        const sent = this.#sendInitial(subscriber);
        if (!sent) {
          this.#cutOff(subscriber, "its initial state's snapshot was not kept for as long as sending it took", "window");
          continue;
        }
        messages += sent.messages;
        bytes += sent.bytes;
        more = true;
        continue;
      }
      // Deltas once past what it was brought to first; a replay before that goes whole. Keyed apart (negative).
      const deltas = subscriber.options.deltasAfter !== undefined && subscriber.position >= subscriber.options.deltasAfter;
      const filter = subscriber.options.filter;
      const position = deltas ? -1 - subscriber.position : subscriber.position;
      const at = filter ? `${position}|${filter.key}` : position;
      let slice = slices.get(at);
      if (!slices.has(at)) {
        const replay = window.after(subscriber.position, SLICE);
        const last = replay.kind === "events" ? replay.events.at(-1) : undefined;
        const events = replay.kind === "events" && filter ? replay.events.filter((e) => filter.admits(e.line)) : replay.kind === "events" ? replay.events : [];
        slice = last ? { batch: new LineBatch(events.map((e) => (deltas ? (e.delta ?? e.line) : e.line))), last: last.rv } : undefined;
        slices.set(at, slice);
      }
      if (!slice) {
        this.#cutOff(subscriber, "fell out of the replay window while catching up", "window");
        continue;
      }
      // A filtered subscriber moves past the events it does not get, sent nothing for them.
      if (slice.batch.lines.length > 0) {
        messages += this.#send(subscriber, slice.batch);
        bytes += slice.batch.size;
      }
      subscriber.position = slice.last;
      if (window.hasEventsAfter(subscriber.position)) more = true;
      else {
        // Paced once at the head: a replay, slice after slice, is not held.
        if (subscriber.options.paceMs !== undefined && slice.batch.lines.length > 0) subscriber.pausedUntil = now + subscriber.options.paceMs;
        this.#caughtUp(subscriber);
      }
    }
    // More to send: go on once the runtime has had its turn. Only blocked subscribers: they wait
    // on acknowledgements (`wake`), or on this.
    this.#waiting = blocked;
    if (more) this.#schedule(0);
    else if (blocked) this.#schedule(BLOCKED_RETRY_MS);
    if (paced !== Infinity) this.#schedule(paced);
  }

  /** A resume that has caught up gets one BOOKMARK at the head: where its replay ended, and a fresh resume point. */
  #caughtUp(subscriber: Subscriber): void {
    if (!subscriber.resumeBookmarkDue) return;
    subscriber.resumeBookmarkDue = false;
    if (subscriber.options.bookmarks && subscriber.position <= this.#source.window.head) this.#toHead(subscriber);
  }

  /** Send a BOOKMARK at the head (`line`, when one was made for it already) and move the subscriber there. */
  #toHead(subscriber: Subscriber, line = this.#source.bookmark(this.#source.window.head)): string {
    this.#send(subscriber, LineBatch.of(line));
    subscriber.position = this.#source.window.head;
    return line;
  }

  /** Send the next slice of what the subscriber gets first (the last slice ends it as asked); what that cost, or `undefined` when its snapshot is gone. */
  #sendInitial(subscriber: Subscriber): { messages: number; bytes: number } | undefined {
    const initial = subscriber.initial as InitialEvents;
    const slice = this.#initialSlice(initial, subscriber.initialCursor, subscriber.options.filter);
    if (!slice) return undefined;
    if (slice.next === undefined) {
      initial.release();
      subscriber.initial = undefined;
    } else {
      subscriber.initialCursor = slice.next;
    }
    if (slice.batch.lines.length === 0) return { messages: 0, bytes: 0 };
    return { messages: this.#send(subscriber, slice.batch), bytes: slice.batch.size };
  }

  /** The slice of `initial` from `cursor` (what `filter` lets through of it), built once for everyone who gets it while the isolate's cache keeps it. */
  #initialSlice(initial: InitialEvents, cursor: string, filter?: LineFilter): InitialSliceBatch | undefined {
    const key = filter ? `${initial.id}:${cursor}|${filter.key}` : `${initial.id}:${cursor}`;
    const built = this.#settings.slices.get(key);
    if (built) return built;
    if (filter) {
      const whole = this.#initialSlice(initial, cursor);
      if (!whole) return undefined;
      const slice = { batch: new LineBatch(whole.batch.lines.filter((line) => filter.admits(line))), next: whole.next };
      this.#settings.slices.set(key, slice, slice.batch.size);
      return slice;
    }
    const read = initial.read(cursor, SLICE);
    if (!read) return undefined;
    const lines = [...read.lines];
    if (read.next === undefined && initial.end) lines.push(this.#source.bookmark(initial.rv, initial.end === "initial-events-end"));
    const slice = { batch: new LineBatch(lines), next: read.next };
    this.#settings.slices.set(key, slice, slice.batch.size);
    return slice;
  }

  /** Run a turn after `delay`, or sooner if one is already due sooner. */
  #schedule(delay: number): void {
    if (this.#turnTimer !== undefined) {
      if (this.#turnDelay <= delay) return;
      this.#turnTimer();
    }
    this.#turnDelay = delay;
    this.#turnTimer = this.#clock.after(delay, () => this.#turn());
  }

  #send(subscriber: Subscriber, batch: LineBatch): number {
    const gzipped = batch.gzipped;
    const messages = subscriber.sink.send(batch);
    this.onSent(subscriber, batch.lines.length, messages, !gzipped && batch.gzipped ? 1 : 0);
    return messages;
  }

  #cutOff(subscriber: Subscriber, why: string, reason: "slow" | "window"): void {
    this.#log("subscriber cut off", { subscriber: subscriber.id, transport: subscriber.sink.transport, why });
    this.onCutOff(subscriber, reason);
    this.detach(subscriber, { code: CLOSE.slow, reason: `slow subscriber: ${why}; resume from your last resourceVersion` });
  }

  /** `timeoutSeconds` reached: a last bookmark if the head moved since the one before the end (so the client resumes from as late as can be), then a clean end. */
  #expire(subscriber: Subscriber): void {
    if (this.#behindOnlyByBookmark(subscriber)) this.#toHead(subscriber);
    this.detach(subscriber, { code: CLOSE.normal, reason: "timeoutSeconds reached" });
  }

  /** It asked for bookmarks, has every event, and the head has moved past it by bookmarks alone. */
  #behindOnlyByBookmark(subscriber: Subscriber): boolean {
    return this.#hasAll(subscriber) && subscriber.position < this.#source.window.head;
  }

  /** It asked for bookmarks and has been sent every event the window holds (its initial state too). */
  #hasAll(subscriber: Subscriber): boolean {
    return subscriber.options.bookmarks && !subscriber.initial && !this.#source.window.hasEventsAfter(subscriber.position);
  }
}
