/**
 * @module
 * A hub's life, in one place: while its upstream watch runs, an alarm beats (it renews the
 * hub's quota claims, restarts a reflector loop that died, moves a long-read upstream stream to
 * its own invocation and reports the hub's numbers); while it also has subscribers,
 * bookmarks tick; once it has had no subscriber for the idle grace period (and has finished a
 * list it was reading when the grace ran out), the watch stops and
 * the hub's share of the cluster's watches is given back; once it has been stopped for the
 * retention period, its storage is deleted (and the share its opener still held for it given
 * back). `settle` is called after everything
 * that can change the picture (a request served or refused, a subscriber gone), so no path can
 * leave a watch running without the clock that stops it.
 */
import type { Log } from "../log.ts";
import { HEARTBEAT_MS } from "../heartbeat.ts";
import { realClock, type Cancel, type Clock } from "./clock.ts";

/**
 * How often quiet HTTP streams are written to: a client that left one is noticed within two of
 * these (the API server notices at once; Workers tell a stream's end only on a write).
 */
export const KEEPALIVE_MS = 10_000;

export interface LifecycleParts {
  /**
   * Whether the upstream watch runs, and its controls; `renew` ends an old upstream stream so
   * that it is read on in the alarm's invocation. `listingSince`: when the list it is reading
   * (the first, or a relist) began.
   */
  upstream: { readonly watching: boolean; readonly listingSince: number | undefined; start(): void; stop(): void; renew(): void };
  subscribers(): number;
  bookmarks(): void;
  /** A write to quiet HTTP streams, by which the runtime finds clients that left. */
  keepAlive(): void;
  quotas: { renew(): void; releaseHub(retentionMs: number): void; reclaimed(): void };
  /** The hub's stored state: whether there is any, and its deletion (after which the hub starts afresh). */
  storage: { readonly holdsState: boolean; reclaim(): Promise<void> };
  /** A replica's reports to its root: when its subscribers may have changed, and on each beat. */
  tree?: { changed(): void; beat(): void } | undefined;
  /** The hub's report to the metrics registry: when it watches, on each beat, when it stops. */
  metrics: { watching(subscribers: number): void; beat(): void; stopped(): void };
  /** Indexes made for views' orders that none has read through for a while go, on the heartbeat. */
  views?: { retireIndexes(): void } | undefined;
  /** The object's alarm (one per Durable Object). */
  alarm: { get(): Promise<number | null>; set(at: number): Promise<void> };
}

export interface LifecycleSettings {
  idleGraceMs: number;
  bookmarkIntervalMs: number;
  /** How long stored state outlives the watch's stop. */
  retentionMs: number;
}

export class Lifecycle {
  readonly #parts: LifecycleParts;
  readonly #settings: LifecycleSettings;
  readonly #clock: Clock;
  readonly #log: Log;
  /** Since when the watch has run with nobody subscribed. */
  #idleSince: number | undefined;
  /** When the watch stopped (or, for a hub restored by its alarm, when it was first found stopped). */
  #stoppedAt: number | undefined;
  #stopBookmarks: Cancel | undefined;
  #stopKeepAlive: Cancel | undefined;

  constructor(parts: LifecycleParts, settings: LifecycleSettings, log: Log, clock: Clock = realClock) {
    this.#parts = parts;
    this.#settings = settings;
    this.#log = log;
    this.#clock = clock;
  }

  /** Bring the timers in line with the hub's state: call after anything that may change it. */
  settle(): void {
    const { upstream } = this.#parts;
    if (this.#parts.subscribers() > 0) {
      this.#idleSince = undefined;
      this.#stopBookmarks ??= this.#clock.every(this.#settings.bookmarkIntervalMs, () => this.#parts.bookmarks());
      this.#stopKeepAlive ??= this.#clock.every(KEEPALIVE_MS, () => this.#parts.keepAlive());
    } else {
      this.#stopBookmarks?.();
      this.#stopBookmarks = undefined;
      this.#stopKeepAlive?.();
      this.#stopKeepAlive = undefined;
      this.#idleSince = upstream.watching ? (this.#idleSince ?? this.#clock.now()) : undefined;
    }
    this.#parts.tree?.changed();
    if (upstream.watching) {
      this.#stoppedAt = undefined;
      this.#parts.metrics.watching(this.#parts.subscribers());
      void this.#arm();
    }
  }

  /** The alarm: stop an idle hub whose grace is over, delete a stopped one's storage once its retention is over, else beat and arm the next. */
  async alarm(): Promise<void> {
    const { upstream, quotas } = this.#parts;
    if (!upstream.watching) {
      if (this.#parts.subscribers() === 0) await this.#retain();
      return;
    }
    if (this.#parts.subscribers() === 0) {
      this.#idleSince ??= this.#clock.now();
      const now = this.#clock.now();
      const graceEnd = this.#graceEnd();
      // A list under way when the grace runs out is finished first: a list given up is the API
      // server's work thrown away, and the next client would have all of it read again (the
      // first list of a million pods takes minutes, and the lists it serves as it is staged are
      // not subscribers). One begun after it is not: a list that kept failing and starting over
      // would hold the watch for nobody.
      const since = upstream.listingSince;
      if (now >= graceEnd && since !== undefined && since < graceEnd) {
        this.#log("idle: finishing the list under way before stopping the upstream watch", { listingMs: now - since });
      } else if (now >= graceEnd) {
        await this.#stop(now);
        return;
      }
    } else {
      upstream.start(); // restarts a loop that died; a no-op for a running one
    }
    upstream.renew();
    quotas.renew();
    this.#parts.metrics.beat();
    this.#parts.tree?.beat();
    this.#parts.views?.retireIndexes();
    await this.#arm();
  }

  /** A stopped hub: its storage goes once the retention is over; until then the alarm waits for that. */
  async #retain(): Promise<void> {
    const { storage, quotas } = this.#parts;
    if (!storage.holdsState) return;
    const now = this.#clock.now();
    this.#stoppedAt ??= now;
    const due = this.#stoppedAt + this.#settings.retentionMs;
    if (now < due) {
      await this.#parts.alarm.set(due);
      return;
    }
    this.#log("stopped for the retention period: deleting the hub's storage", { stoppedMs: now - this.#stoppedAt });
    this.#stoppedAt = undefined;
    await storage.reclaim();
    quotas.reclaimed();
  }

  /** The grace is over: the watch stops and the hub's share is given back; its retention begins. */
  async #stop(now: number): Promise<void> {
    this.#log("idle: stopping the upstream watch", { idleMs: now - (this.#idleSince ?? now) });
    this.#parts.upstream.stop();
    this.#parts.quotas.releaseHub(this.#settings.retentionMs);
    this.#parts.metrics.stopped();
    this.#idleSince = undefined;
    this.#stoppedAt = now;
    await this.#retain();
  }

  /** When the idle grace ends (never while someone is subscribed). */
  #graceEnd(): number {
    return this.#idleSince === undefined ? Number.POSITIVE_INFINITY : this.#idleSince + this.#settings.idleGraceMs;
  }

  async #arm(): Promise<void> {
    const now = this.#clock.now();
    // The grace's end; once it has passed (a list being finished), a look every grace, or a beat
    // if that is sooner (at least a second apart).
    const graceEnd = this.#graceEnd();
    const next = graceEnd > now ? Math.min(now + HEARTBEAT_MS, graceEnd) : now + Math.min(HEARTBEAT_MS, Math.max(1_000, this.#settings.idleGraceMs));
    const current = await this.#parts.alarm.get();
    if (current === null || current > next) await this.#parts.alarm.set(next);
  }
}
