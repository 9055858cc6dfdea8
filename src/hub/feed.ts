/**
 * @module
 * The hub's view of its upstream collection, as the API server's cacher is of etcd: the
 * reflector feeds it, it keeps the current objects (for snapshots) and the window (for
 * resumes), writes both to storage, and hands each new batch to the fan-out, serialised once.
 */
import { deltaLine } from "../k8s/delta.ts";
import { eventLine } from "../k8s/event.ts";
import { keyApiVersion, type WatchKey } from "../k8s/key.ts";
import { objectVersion } from "../k8s/rv.ts";
import { VersionWaiters } from "../k8s/waiters.ts";
import type { KubeObject, WatchEvent } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import { realClock, type Cancel, type Clock } from "./clock.ts";
import { ObjectCache, objectEventOf, relistDiff, toCachedObject, type CachedObject, type ObjectEvent } from "./cache.ts";
import { Reflector, type UpstreamError, type ListedCollection, type ReflectorHandler, type ReflectorState, type UpstreamObserver } from "./reflector.ts";
import type { Checkpoint, HubIdentity, HubStorage, StoredObject, Tombstone } from "./storage.ts";
import { Gather } from "./gather.ts";
import { netChanges } from "./compaction.ts";
import type { InitialEvents } from "./subscriber.ts";
import { EventWindow, type WindowEvent } from "./window.ts";
import type { Log } from "../log.ts";

export interface FeedListener {
  /** New events: in the window and written to storage, to be fanned out now. */
  published(events: readonly WindowEvent[]): void;
  /** History was reset at `start` (upstream history inconsistent with ours): older resumes are gone. */
  reset(start: number): void;
}

/** A change to commit; from the upstream's watch it comes with the object as parsed (relist differences do not). */
type Change = ObjectEvent & { readonly parsed?: KubeObject };

export interface FeedSettings {
  windowEvents: number;
  windowBytes: number;
  upstreamStallMs: number;
  stripManagedFields: boolean;
  /**
   * How long the first uncommitted event waits for others to join its commit (ms), at the least:
   * the base of the feed's gather (`gather.ts`), which the hub grows with what one commit costs
   * it to fan out.
   */
  gatherBaseMs: () => number;
  /** Whether any subscriber takes deltas: only then is a MODIFIED also encoded as one. */
  wantDeltas: () => boolean;
  /** Who counts what the reflector sees of the upstream. */
  observer: UpstreamObserver;
}

/**
 * What a request needs of the hub's state: `stored` (any state it has: a resume from a
 * resourceVersion, served from the window), `live` (the upstream watch running: a list or a
 * watch at `resourceVersion=0`, "any"), or `current` (no older than the upstream at the time of
 * the request: a list or get with `resourceVersion` unset, or a watch-list without one, which the
 * API server serves as consistent reads).
 */
export type Freshness = "stored" | "live" | "current";

/**
 * How long the upstream must have failed before a request that needs it is answered at once
 * rather than after waiting for the next attempt: long enough that a blip (a dropped stream, a
 * restart of the API server) still costs a request only a short wait.
 */
const KNOWN_DOWN_MS = 5000;

/**
 * How long after its upstream watch opens a hub that was stopped (restored from storage, or
 * stopped idle) counts as caught up with the upstream: the API server sends a resumed watch
 * everything after its resourceVersion at once, so what it missed has arrived by then, unless a
 * list or a check of the upstream's resourceVersion said so sooner.
 */
const CATCH_UP_SETTLE_MS = 250;

/** Failures no retry mends without someone changing something: answered at once. */
const DEFINITIVE = new Set([400, 401, 403, 404, 405, 422]);

/**
 * Objects changed since the last checkpoint when the next is written: bounds the size of one
 * checkpoint. (What a restore replays is bounded by the window: it checkpoints before evicting.)
 */
const CHECKPOINT_OBJECTS = 1000;

export class Feed implements ReflectorHandler {
  readonly cache = new ObjectCache();
  readonly window: EventWindow;
  readonly #key: WatchKey;
  readonly #storage: HubStorage;
  readonly #listener: FeedListener;
  readonly #log: Log;
  readonly #reflector: Reflector;
  readonly #stripManagedFields: boolean;
  /** What changed since the objects table's checkpoint: uid → object, or `null` when gone. */
  readonly #dirty = new Map<string, CachedObject | null>();
  #checkpoint = 0;
  #identity: HubIdentity | undefined;
  /** The upstream watch (or a list) has been established since the last start. */
  #live = false;
  /**
   * The state is known to be the upstream's current one: a list, or a probe that found the
   * upstream where the hub is, since the last start or upstream failure; kept while the watch
   * goes on (a healthy stream's end and re-watch included).
   */
  #current = false;
  /** Checks of the upstream begun, and the one that last made the state current. */
  #checks = 0;
  #currentAsOf = 0;
  /** `after`: a waiter for `current` state needs a check begun after it arrived. */
  #waiters: Array<{ need: Freshness; after: number; resolve: () => void; reject: (e: UpstreamError) => void }> = [];
  /** Upstream events read but not yet committed: they go to storage and subscribers together. */
  #pending: WatchEvent[] = [];
  #commitTimer: Cancel | undefined;
  readonly #clock: Clock;
  readonly #gather: Gather;
  readonly #wantDeltas: () => boolean;
  readonly #versionWaiters: VersionWaiters;
  /** Net changes can be told from after this resourceVersion on (see `storage.ts`). */
  #horizon = 0;
  /**
   * Since its last start the hub has read what the upstream had for it: a list, a check that
   * found the upstream where the hub is, or its watch open `CATCH_UP_SETTLE_MS`. Before that its
   * state is what it stored, however old; resumes wait for it (`caughtUp`).
   */
  #caughtUp = false;
  #settling: Cancel | undefined;
  #catchUpWaiters = new Set<() => void>();
  /** The upstream has failed since `since` (ms), last with `error`: it is backing off. */
  #failing: { since: number; error: UpstreamError } | undefined;
  #lastInitial: InitialEvents | undefined;
  #lastNet: { from: number; events: InitialEvents } | undefined;
  upstreamState: ReflectorState = "stopped";

  /** `clock`: times the gathering of events, stamps what is stored, and is the reflector's. */
  constructor(key: WatchKey, storage: HubStorage, upstream: Upstream, settings: FeedSettings, listener: FeedListener, log: Log, clock: Clock = realClock) {
    this.#key = key;
    this.#clock = clock;
    this.#versionWaiters = new VersionWaiters((ms, run) => clock.after(ms, run));
    this.#storage = storage;
    this.#listener = listener;
    this.#log = log;
    this.#stripManagedFields = settings.stripManagedFields;
    this.#gather = new Gather(settings.gatherBaseMs);
    this.#wantDeltas = settings.wantDeltas;
    this.window = new EventWindow({ maxEvents: settings.windowEvents, maxBytes: settings.windowBytes });
    const stored = storage.load();
    if (stored) {
      this.#identity = { key: stored.key, kind: stored.kind, listKind: stored.listKind, apiVersion: stored.apiVersion };
      const since = new Map(stored.objects.map((o) => [o.object.uid, o.since]));
      this.cache.replace(
        stored.objects.map((o) => o.object),
        (o) => since.get(o.uid) ?? 0,
      );
      // The objects table is as of the checkpoint; the window's later events bring it up to date.
      for (const event of stored.events) {
        if (event.rv <= stored.checkpoint) continue;
        const change = objectEventOf(event.line);
        if (change) this.#changed(change);
      }
      this.#checkpoint = stored.checkpoint;
      this.#horizon = stored.horizon;
      this.window.restore(stored.events, stored.start, stored.head);
      log("hub state restored", { objects: this.cache.size, events: stored.events.length, head: stored.head, start: stored.start, checkpoint: stored.checkpoint });
    }
    this.#reflector = new Reflector(key, upstream, this, {
      stallMs: settings.upstreamStallMs,
      // Restart the watch every 5-9 minutes, as client-go does, so no stream outlives 10.
      watchTimeoutSeconds: () => 300 + Math.floor(Math.random() * 240),
      random: Math.random,
      observer: settings.observer,
      clock,
    });
  }

  get identity(): HubIdentity | undefined {
    return this.#identity;
  }

  get watching(): boolean {
    return this.#reflector.running;
  }

  /** Net changes can be told from after this resourceVersion on: older resumes for them get 410. */
  get horizon(): number {
    return this.#horizon;
  }

  /**
   * The current state, to send a new subscriber first: one value while nothing changes, so the
   * subscribers that start together share its serialised slices.
   */
  initialState(end: InitialEvents["end"]): InitialEvents {
    const objects = this.cache.snapshot();
    const head = this.window.head;
    const last = this.#lastInitial;
    if (last?.objects === objects && last.rv === head && last.end === end) return last;
    return (this.#lastInitial = { rv: head, objects, end });
  }

  /**
   * What changed after `rv`, once each, at its latest state (see `compaction.ts`), closed by a
   * bookmark at the head; `rv` must not be before the horizon. Shared, as `initialState` is, by
   * a storm of resumes from the same point.
   */
  netChangesAfter(rv: number): InitialEvents {
    const head = this.window.head;
    const last = this.#lastNet;
    if (last?.from === rv && last.events.rv === head) return last.events;
    const changes = netChanges(this.cache, this.#storage.tombstonesAfter(rv), rv);
    const events: InitialEvents = { rv: head, objects: changes.map((c) => c.object), types: changes.map((c) => c.type), end: "bookmark" };
    this.#lastNet = { from: rv, events };
    return events;
  }

  /**
   * Waiters for the new head go on; the shared initial state and net changes are of an older
   * head and can never be handed out again, so they (and the slices built of them) are let go.
   */
  #headMoved(): void {
    this.#lastInitial = undefined;
    this.#lastNet = undefined;
    this.#versionWaiters.reached(this.window.head);
  }

  start(): void {
    this.#reflector.start();
  }

  /** End an upstream watch stream older than `maxAgeMs`, to be read on in the caller's invocation. */
  renew(maxAgeMs: number): void {
    this.#reflector.renew(maxAgeMs);
  }

  stop(): void {
    this.#live = false;
    this.#current = false;
    this.#caughtUp = false;
    this.#settling?.();
    this.#settling = undefined;
    this.#reflector.stop();
    this.#commitPending();
  }

  /**
   * Resolves once the hub has caught up with the upstream since it started (see `#caughtUp`),
   * when the upstream is failing (the stored state is what there is), or after `ms`: a resume
   * then gets what the hub missed while it was stopped before its catch-up bookmark, as changes
   * it is replayed, rather than a bookmark at once and those changes after, as if live.
   */
  caughtUp(ms: number): Promise<void> {
    this.start();
    if (this.#caughtUp || this.#failing) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        this.#catchUpWaiters.delete(done);
        resolve();
      };
      const cancel = this.#clock.after(ms, done);
      this.#catchUpWaiters.add(done);
    });
  }

  #markCaughtUp(): void {
    this.#settling?.();
    this.#settling = undefined;
    this.#caughtUp = true;
    for (const done of [...this.#catchUpWaiters]) done();
  }

  /**
   * Resolves once the hub can serve a request that needs `need` (see `Freshness`); rejects when
   * the upstream fails before then. A hub that is not known to be current makes its reflector
   * check, and relist if the upstream has moved.
   */
  synced(need: Freshness): Promise<void> {
    if (this.#ready(need)) return Promise.resolve();
    // Known to fail (refused, or down a while): the answer now, not after the next attempt.
    const failing = this.#failing;
    if (failing && (DEFINITIVE.has(failing.error.status) || this.#clock.now() - failing.since >= KNOWN_DOWN_MS)) return Promise.reject(failing.error);
    this.start();
    if (need === "current") this.#reflector.refresh();
    return new Promise((resolve, reject) => this.#waiters.push({ need, after: this.#checks, resolve, reject }));
  }

  /** What the hub can serve while the upstream fails: its state as of `rv`, in step with the upstream until `since` (ms). */
  get held(): { rv: number; since: number } | undefined {
    return this.#live && this.#failing ? { rv: this.window.head, since: this.#failing.since } : undefined;
  }

  /**
   * Resolves `true` once the hub has reached `rv` (events or bookmarks), `false` after `ms`:
   * how a request for a resourceVersion ahead of the hub waits, as the watch cache does.
   */
  waitFor(rv: number, ms: number): Promise<boolean> {
    return this.#versionWaiters.wait(this.window.head, rv, ms);
  }

  /** `after`: for a waiter, the checks begun before it arrived, which cannot vouch for it. */
  #ready(need: Freshness, after?: number): boolean {
    if (this.#identity === undefined) return false;
    if (need === "stored") return true;
    if (need === "live") return this.#live;
    return this.#current && (after === undefined || this.#currentAsOf > after);
  }

  #settle(error?: UpstreamError): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (this.#ready(w.need, w.after)) w.resolve();
      else if (error) w.reject(error);
      else return true;
      return false;
    });
  }

  // ReflectorHandler

  resumeVersion(): number | undefined {
    // Resume after everything read so far, not only what was committed.
    this.#commitPending();
    return this.#identity ? this.window.head : undefined;
  }

  listed(list: ListedCollection): void {
    this.#failing = undefined;
    // What the previous watch delivered comes first: the relist is diffed against it.
    this.#commitPending();
    const apiVersion = list.apiVersion || keyApiVersion(this.#key);
    const identity: HubIdentity = { key: this.#key, kind: list.kind.replace(/List$/, ""), listKind: list.kind, apiVersion };
    const objects: CachedObject[] = [];
    for (const item of list.items) {
      const taken = this.#take(item, identity);
      if (taken) objects.push(taken.object);
    }
    this.#live = true;
    this.#current = true;
    this.#currentAsOf = this.#checks;
    const previous = this.#identity;
    const head = this.window.head;
    const diff = previous ? relistDiff(this.cache.values(), objects, head, list.resourceVersion) : undefined;
    if (previous && diff) {
      this.#log("relisted upstream; emitting the difference as events", { changes: diff.length, from: head, to: list.resourceVersion });
      this.#commit(diff, list.resourceVersion);
      this.#markCaughtUp();
      this.#settle();
      return;
    }
    this.#identity = identity;
    this.cache.replace(objects, list.resourceVersion);
    this.#dirty.clear();
    this.#checkpoint = list.resourceVersion;
    this.#horizon = list.resourceVersion;
    this.window.reset(list.resourceVersion);
    this.#storage.saveSnapshot(identity, objects, list.resourceVersion);
    this.#headMoved();
    if (previous) {
      this.#log("upstream history is inconsistent with the hub's; window reset", { head, listed: list.resourceVersion });
      this.#listener.reset(list.resourceVersion);
    } else {
      this.#log("synced from upstream list", { objects: objects.length, resourceVersion: list.resourceVersion });
    }
    this.#markCaughtUp();
    this.#settle();
  }

  /**
   * A batch read from the upstream watch. Upstream chunks arrive one per turn of the runtime's
   * event loop, so committing each alone costs a storage commit (and a fan-out pass) per event
   * in a burst. Events are held back for the gather time (`gather.ts`: 1 ms, more for hubs
   * with many subscribers and while the runtime is behind) from the first of them, and
   * committed together: one transaction, one write per subscriber.
   */
  events(batch: WatchEvent[]): void {
    for (const event of batch) this.#pending.push(event);
    if (this.#commitTimer !== undefined) return;
    const ms = this.#gather.ms;
    const started = this.#clock.now();
    this.#commitTimer = this.#clock.after(ms, () => {
      const elapsed = this.#clock.now() - started;
      this.#gather.fired(elapsed - ms, this.#pending.length, elapsed);
      this.#commitPending();
    });
  }

  #commitPending(): void {
    this.#commitTimer?.();
    this.#commitTimer = undefined;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const identity = this.#identity;
    if (!identity) return;
    const changes: Change[] = [];
    let head = this.window.head;
    for (const event of batch) {
      const rv = objectVersion(event.object);
      if (rv === undefined) {
        this.#log("skipped an upstream event without a resourceVersion", { type: event.type });
      } else if (event.type === "BOOKMARK") {
        head = Math.max(head, rv);
      } else if (rv <= head) {
        this.#log("skipped an upstream event the hub already has", { type: event.type, rv, head });
      } else {
        const taken = this.#take(event.object, identity);
        if (taken) changes.push({ type: event.type as ObjectEvent["type"], ...taken });
        head = rv;
      }
    }
    this.#commit(changes, head);
  }

  state(state: ReflectorState, detail?: string, error?: UpstreamError): void {
    this.upstreamState = state;
    if (state === "backoff" && error) this.#failing = { since: this.#failing?.since ?? this.#clock.now(), error };
    else if (state === "watching" || state === "stopped") this.#failing = undefined;
    if (state !== "watching" || detail) this.#log(`upstream ${state}`, detail ? { detail } : undefined);
    if (state === "watching") this.#live = true;
    if (state === "watching" && !this.#caughtUp && !this.#settling) {
      this.#settling = this.#clock.after(CATCH_UP_SETTLE_MS, () => {
        this.#settling = undefined;
        this.#commitPending();
        this.#markCaughtUp();
      });
    }
    // A gap in the watch: what happened meanwhile is unknown until a check or a list.
    if (state === "backoff" || state === "listing") this.#current = false;
    // Failing, the stored state is what there is: resumes waiting for the upstream go on with it.
    if (error) for (const done of [...this.#catchUpWaiters]) done();
    this.#settle(error);
  }

  checking(): void {
    this.#checks++;
  }

  upToDate(): void {
    this.#failing = undefined;
    this.#current = true;
    this.#currentAsOf = this.#checks;
    this.#markCaughtUp();
    this.#settle();
  }

  /** Apply changes (in RV order) to cache, window and storage, then publish them. */
  #commit(changes: readonly Change[], head: number): void {
    const appended: WindowEvent[] = [];
    const tombstones: Tombstone[] = [];
    let evictedTo: number | undefined;
    const deltas = this.#wantDeltas();
    for (const change of changes) {
      if (change.type === "DELETED") tombstones.push({ object: change.object, since: this.cache.sinceOf(change.object.uid) ?? 0 });
      const before = change.type === "MODIFIED" && deltas ? this.cache.get(change.object.uid) : undefined;
      this.#changed(change);
      const line = eventLine(change.type, change.object.json);
      const event: WindowEvent = {
        rv: change.object.rv,
        line,
        delta: before && deltaLine(JSON.parse(before.json) as KubeObject, change.parsed ?? (JSON.parse(change.object.json) as KubeObject), line),
      };
      evictedTo = this.window.append(event) ?? evictedTo;
      appended.push(event);
    }
    this.window.advance(head);
    this.#headMoved();
    if (appended.length === 0) {
      this.#storage.saveHead(this.window.head);
      return;
    }
    // A restore replays the window after the checkpoint, so the window must not lose what it needs.
    const due = this.#dirty.size >= CHECKPOINT_OBJECTS || (evictedTo !== undefined && evictedTo > this.#checkpoint);
    const batch = { events: appended, head: this.window.head, start: this.window.start, evictedTo, checkpoint: due ? this.#takeCheckpoint() : undefined, tombstones };
    this.#horizon = this.#storage.saveBatch(batch, this.#clock.now(), this.#horizon);
    this.#listener.published(appended);
  }

  #changed(change: ObjectEvent): void {
    this.cache.apply(change);
    this.#dirty.set(change.object.uid, change.type === "DELETED" ? null : change.object);
  }

  /** The objects table's catch-up to the current head. */
  #takeCheckpoint(): Checkpoint {
    const changed: StoredObject[] = [];
    const removed: string[] = [];
    for (const [uid, object] of this.#dirty) {
      if (object) changed.push({ object, since: this.cache.sinceOf(uid) ?? object.rv });
      else removed.push(uid);
    }
    this.#dirty.clear();
    this.#checkpoint = this.window.head;
    return { rv: this.window.head, changed, removed };
  }

  /**
   * An upstream object as the relay serves it (kind and apiVersion set, managedFields dropped),
   * cached, and as parsed; `undefined`, logged, without a uid, name or resourceVersion.
   */
  #take(item: KubeObject, identity: HubIdentity): { object: CachedObject; parsed: KubeObject } | undefined {
    // Built-in list items come without kind/apiVersion; every watch event object needs them.
    const parsed = item.kind && item.apiVersion ? item : { kind: identity.kind, apiVersion: identity.apiVersion, ...item };
    // Who wrote which field is the API server's business, and a large share of every object.
    if (this.#stripManagedFields && parsed.metadata?.managedFields) {
      // Removed, not set to undefined: a delta is computed from this object, not from its JSON.
      const { managedFields: _, ...metadata } = parsed.metadata;
      parsed.metadata = metadata;
    }
    const object = toCachedObject(parsed);
    if (!object) this.#log("skipped an upstream object without uid, name or resourceVersion");
    return object && { object, parsed };
  }
}
