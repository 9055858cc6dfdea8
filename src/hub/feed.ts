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
import type { KubeObject } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import type { Cancel, Clock } from "./clock.ts";
import { Collection, identityOf, toRecord, type ObjectEvent, type ObjectRecord } from "./collection.ts";
import { OBJECT_BYTES, READ_BYTES, utf8BytesOver } from "./row-limit.ts";
import { Reflector, type ListedCollection, type ReflectorHandler, type ReflectorState, type UpstreamEvent, type UpstreamObserver } from "./reflector.ts";
import { ObjectTooLarge, tooLarge, UnconfirmedRead, type UpstreamError } from "./upstream-error.ts";
import type { ReplicaRole } from "./replicas.ts";
import type { HubIdentity, HubStorage } from "./storage.ts";
import type { CommitGather } from "./gather.ts";
import { NetChangeEvents, StateEvents, type InitialEvents } from "./initial.ts";
import type { LineTail } from "./memory.ts";
import { FirstList } from "./first-list.ts";
import { StagedList } from "./relist.ts";
import { type Cursor, SnapshotRegistry } from "./snapshots.ts";
import { Tombstones, type Tombstone, type TombstoneLimits } from "./tombstones.ts";
import { EventWindow, type WindowEvent } from "./window.ts";
import { ViewRows, type RowUpdate } from "./view-rows.ts";
import { viewRowOf } from "../k8s/view.ts";
import type { Log } from "../log.ts";
import type { PagePermits } from "./page-permits.ts";

export interface FeedListener {
  /** New events: in the window and written to storage, to be fanned out now; with what they did to rows, while views are open. */
  published(events: readonly WindowEvent[], rows: readonly RowUpdate[] | undefined): void;
  /** History was reset at `start` (upstream history inconsistent with ours): older resumes are gone. */
  reset(start: number): void;
  /** The upstream's state changed (`upstreamState`): its watch opened, a list began, a backoff, a stop. */
  upstreamChanged(): void;
}

/** A change to commit; from the upstream's watch it comes with the object as parsed (relist differences do not). */
type Change = ObjectEvent & { readonly parsed?: KubeObject };

export interface FeedSettings {
  /** This hub is a replica: its upstream is the key's root hub. */
  replica?: ReplicaRole | undefined;
  windowEvents: number;
  windowBytes: number;
  tombstones: TombstoneLimits;
  upstreamStallMs: number;
  stripManagedFields: boolean;
  /** How long the first uncommitted event waits for others to join its commit (`gather.ts`). */
  gather: CommitGather;
  /** Whether any subscriber takes deltas: only then is a MODIFIED also encoded as one. */
  wantDeltas: () => boolean;
  /** Whether any live view is open: only then is what each change did to its row told. */
  wantRows: () => boolean;
  /** A collection of at most this many objects is read without an index for a view's order that has none. */
  viewScanObjects: number;
  /** Who counts what the reflector sees of the upstream. */
  observer: UpstreamObserver;
  /** The isolate's permits for upstream list pages in memory (none: a page needs none). */
  pages?: PagePermits | undefined;
}

/**
 * What a request needs of the hub's state: `stored` (any state it has: a resume from a
 * resourceVersion, served from the window), `live` (the upstream watch running: a list or a
 * watch at `resourceVersion=0`, "any"), or `current` (no older than the upstream at the time of
 * the request: a list with `resourceVersion` unset, or a watch-list without one, which the API
 * server serves as consistent reads). A `current` read waits for a check of the upstream begun
 * after it arrived (`synced`).
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

/** Failures no retry mends without someone changing something: answered at once (413: an object too big to store). */
const DEFINITIVE = new Set([400, 401, 403, 404, 405, 413, 422]);

/** Snapshots kept for paged lists (continue tokens older than this, or than the last few, get 410), and the longest a reader holds one. */
const SNAPSHOTS_KEPT = 4;
const SNAPSHOT_TTL_MS = 5 * 60_000;

/** Events of a relist's difference committed (and fanned out) at a time. */
const DIFF_PAGE = 500;

export class Feed implements ReflectorHandler {
  /** The current objects, in storage. */
  readonly collection: Collection;
  /** What live views order and filter the objects by, in storage. */
  readonly viewRows: ViewRows;
  readonly window: EventWindow;
  readonly tombstones: Tombstones;
  /** The snapshots open on the collection (lists being read, initial states being sent, continue tokens). */
  readonly snapshots: SnapshotRegistry;
  readonly #key: WatchKey;
  readonly #storage: HubStorage;
  readonly #staged: StagedList;
  readonly #listener: FeedListener;
  readonly #log: Log;
  readonly #reflector: Reflector;
  readonly #stripManagedFields: boolean;
  readonly #replica: ReplicaRole | undefined;
  #identity: HubIdentity | undefined;
  /** The upstream watch (or a list) has been established since the last start. */
  #live = false;
  /**
   * The hub is in step with its upstream: its state was known to be the upstream's current one (a
   * list of its current state, or a check that found the upstream where the hub is) since the
   * last start or upstream failure, and the watch has gone on since (a healthy stream's end and
   * re-watch included). A consistent read of such a hub needs no list, only to learn that what
   * the upstream had when it arrived has reached the hub (`Reflector.catchUp`).
   */
  #current = false;
  /** Checks of the upstream begun, and the last that found the hub current as of its beginning. */
  #checks = 0;
  #currentAsOf = 0;
  /**
   * `after`: a waiter for `current` state needs a check begun after it arrived; `first`: a list's
   * waiter, which the hub's first list serves as it is staged (`listable`).
   */
  #waiters: Array<{ need: Freshness; after: number; first: boolean; resolve: (first?: FirstList) => void; reject: (e: UpstreamError) => void }> = [];
  /** Upstream events read but not yet committed: they go to storage and subscribers together. And their lines' characters. */
  #pending: UpstreamEvent[] = [];
  #pendingChars = 0;
  #commitTimer: Cancel | undefined;
  /** When the gathered events' first and last came (ms). */
  #gatherStarted = 0;
  #lastEventAt = 0;
  readonly #clock: Clock;
  readonly #gather: CommitGather;
  readonly #wantDeltas: () => boolean;
  readonly #wantRows: () => boolean;
  readonly #versionWaiters: VersionWaiters;
  /** Net changes can be told from after this resourceVersion on (see `tombstones.ts`). */
  #horizon = 0;
  /**
   * Since its last start the hub has read what the upstream had for it: a list of its current
   * state, a check that found the upstream where the hub is, or its watch open
   * `CATCH_UP_SETTLE_MS`. Before that its state is what it stored, however old; resumes wait for
   * it (`caughtUp`).
   */
  #caughtUp = false;
  #settling: Cancel | undefined;
  #catchUpWaiters = new Set<() => void>();
  /** The upstream has failed since `since` (ms), last with `error`: it is backing off. */
  #failing: { since: number; error: UpstreamError } | undefined;
  /** A list from the upstream under way: objects taken so far, since when, and when it last took some (ms). */
  #listing: { objects: number; since: number; at: number } | undefined;
  /** The hub's first list of the upstream's current state, while it is staged: lists read it as it fills. */
  #first: FirstList | undefined;
  /** The last such list, whole: the continue tokens it gave out are read on from the collection, unless it refuses them. */
  #lastFirst: FirstList | undefined;
  /** The hub's first list is (to be) of a past state (`listFirstAt`): not one lists are served from as it is staged. */
  #pastFirst = false;
  /** When the hub last heard how far the upstream has got: a list, a check, its watch's events or bookmarks, an answer to `progress` (ms). */
  #heardAt = 0;
  #lastInitial: StateEvents | undefined;
  #lastNet: NetChangeEvents | undefined;
  upstreamState: ReflectorState = "stopped";

  /**
   * `clock`: times the gathering of events, stamps what is stored, and is the reflector's;
   * `tail`: where the window keeps its newest lines in memory.
   */
  constructor(key: WatchKey, storage: HubStorage, upstream: Upstream, settings: FeedSettings, listener: FeedListener, log: Log, clock: Clock, tail: LineTail) {
    this.#key = key;
    this.#clock = clock;
    this.#versionWaiters = new VersionWaiters((ms, run) => clock.after(ms, run));
    this.#storage = storage;
    this.#listener = listener;
    this.#log = log;
    this.#stripManagedFields = settings.stripManagedFields;
    this.#replica = settings.replica;
    this.#gather = settings.gather;
    this.#wantDeltas = settings.wantDeltas;
    this.#wantRows = settings.wantRows;
    const sql = () => storage.sql;
    this.collection = new Collection(sql);
    this.viewRows = new ViewRows(sql, () => clock.now(), { size: () => this.collection.size, objects: settings.viewScanObjects });
    this.window = new EventWindow(sql, { maxEvents: settings.windowEvents, maxBytes: settings.windowBytes }, tail);
    this.tombstones = new Tombstones(sql, settings.tombstones);
    this.#staged = new StagedList(sql, (write) => storage.transaction(write));
    this.snapshots = new SnapshotRegistry({ kept: SNAPSHOTS_KEPT, ttlMs: SNAPSHOT_TTL_MS }, () => clock.now());
    this.snapshots.onChange = (oldest) => this.collection.prune(oldest);
    const history = storage.history();
    if (history) {
      this.#identity = { key: history.key, kind: history.kind, listKind: history.listKind, apiVersion: history.apiVersion, replica: history.replica };
      // A list the last instance was staging is of no use: the reflector lists again if it must.
      this.#staged.end();
      this.collection.restore();
      this.tombstones.restore();
      this.window.restore(history.start, history.head);
      this.#horizon = history.horizon;
      log("hub state restored", { objects: this.collection.size, events: this.window.size, head: this.window.head, start: this.window.start });
    }
    this.#reflector = new Reflector(key, upstream, this, {
      stallMs: settings.upstreamStallMs,
      // Restart the watch every 5-9 minutes, as client-go does, so no stream outlives 10.
      watchTimeoutSeconds: () => 300 + Math.floor(Math.random() * 240),
      random: Math.random,
      observer: settings.observer,
      clock,
      followsHub: settings.replica !== undefined || upstream.followsHub === true,
      pages: settings.pages,
      log,
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
    const head = this.window.head;
    const last = this.#lastInitial;
    if (last?.rv === head && last.end === end) return last;
    return (this.#lastInitial = new StateEvents(this.collection, this.snapshots, head, end));
  }

  /**
   * What changed after `rv`, once each, at its state at the head (see `compaction.ts`), closed
   * by a bookmark at the head; `rv` must not be before the horizon. Shared, as `initialState`
   * is, by a storm of resumes from the same point.
   */
  netChangesAfter(rv: number): InitialEvents {
    const head = this.window.head;
    const last = this.#lastNet;
    if (last?.from === rv && last.rv === head) return last;
    return (this.#lastNet = new NetChangeEvents(this.collection, this.tombstones, this.snapshots, rv, head));
  }

  /**
   * Waiters for the new head go on; the shared initial state and net changes are of an older
   * head and are handed out no more (the subscribers that have them hold their snapshot).
   */
  #headMoved(): void {
    this.#lastInitial = undefined;
    this.#lastNet = undefined;
    this.#versionWaiters.reached(this.window.head);
    const at = this.#currentAt;
    if (at !== undefined && this.window.head >= at.rv) this.upToDate(at.check);
  }

  start(): void {
    this.#reflector.start();
  }

  /**
   * A watch from `rv` is about to make a hub that holds nothing yet: its first list is at exactly
   * `rv`, so the watch is replayed what followed it (see `Reflector.listFirstAt`).
   */
  listFirstAt(rv: number): void {
    if (this.#identity !== undefined || this.watching) return;
    this.#reflector.listFirstAt(rv);
    this.#pastFirst = true;
  }

  /**
   * Learn how far the upstream has got (`Reflector.progress`), unless the hub has heard it since
   * `since` (ms): so a subscriber about to end with nothing newer to be bookmarked at is sent the
   * upstream's progress, as the API server sends it 2 s before a watch's end, at the cost of a
   * short upstream watch at most once per subscriber, and none while the upstream speaks (its
   * own bookmarks come about once a minute).
   */
  progress(since: number): void {
    if (this.#heardAt < since) this.#reflector.progress();
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
   * the upstream fails before then. A `current` one waits for a check of the upstream begun after
   * it arrived: a hub in step with its upstream asks whether what the upstream had has reached it
   * (`Reflector.catchUp`: one small request, shared by the reads that arrive while one is under
   * way), any other asks where the upstream is, and relists if it has moved.
   */
  synced(need: Freshness): Promise<void> {
    if (need !== "current" && this.#holds(need)) return Promise.resolve();
    const failing = this.#knownFailing();
    if (failing) return Promise.reject(failing);
    this.start();
    const waited = new Promise<void>((resolve, reject) => this.#waiters.push({ need, after: this.#checks, first: false, resolve: () => resolve(), reject }));
    if (need === "current") {
      if (this.#current && this.watching) this.#reflector.catchUp();
      else this.#reflector.refresh();
    }
    return waited;
  }

  /**
   * Resolves once a list needing `need` can be served: from the collection (`undefined`), as
   * `synced` says; or, while the hub makes its first list of the upstream's current state, from
   * that list as it is staged, once its first batch is stored (its resourceVersion is the
   * upstream's state at its first page: a consistent read for a request that arrived before
   * that; one that arrives after it is read that state, the list's, as every client of the list is).
   */
  listable(need: Freshness): Promise<FirstList | undefined> {
    if (this.#first) return Promise.resolve(this.#first);
    if (this.#identity !== undefined || this.#pastFirst) return this.synced(need).then(() => undefined);
    const failing = this.#knownFailing();
    if (failing) return Promise.reject(failing);
    // No refresh: the first list, read after this request arrived, is as current as a check would make it.
    this.start();
    return new Promise((resolve, reject) => this.#waiters.push({ need, after: this.#checks, first: true, resolve, reject }));
  }

  /** The upstream's failure, when it is known to fail (refused, or down a while): the answer now, not after the next attempt. */
  #knownFailing(): UpstreamError | undefined {
    const failing = this.#failing;
    return failing && (DEFINITIVE.has(failing.error.status) || this.#clock.now() - failing.since >= KNOWN_DOWN_MS) ? failing.error : undefined;
  }

  /**
   * Whether the hub serves a read of a state at `reached` or later, from what it holds now, with
   * its watch running and asking the upstream nothing (a `held` read at `resourceVersion` 0 or N).
   */
  holds(reached: number): boolean {
    return this.watching && this.#holds("live") && this.window.head >= reached;
  }

  /** The state is current, as of check `check`, once the head reaches `rv` (the watch bringing the hub to where a check found the upstream). */
  #currentAt: { rv: number; check: number } | undefined;

  /** A list from the upstream under way (a big collection takes a while): how far it has got, since when, and when it last took objects (ms). */
  get listing(): { objects: number; since: number; at: number } | undefined {
    return this.#listing;
  }

  /**
   * A continue token that must not be read on from: given out by the hub's first list as it was
   * staged, past an object the upstream sent late (`first-list.ts`).
   */
  refuses(cursor: Cursor): boolean {
    return this.#lastFirst?.refuses(cursor) ?? false;
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

  /** Whether the hub has a state to serve a request that needs `need`, `stored` or `live` (`current` needs a check: `#ready`). */
  #holds(need: "stored" | "live"): boolean {
    if (this.#identity === undefined) return false;
    return need === "stored" || this.#live;
  }

  /** Whether a waiter that needs `need` and came after check `after` is served. */
  #ready(need: Freshness, after: number): boolean {
    if (need !== "current") return this.#holds(need);
    return this.#identity !== undefined && this.#current && this.#currentAsOf > after;
  }

  #settle(error?: UpstreamError): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (w.first && this.#first) w.resolve(this.#first);
      // A list's waiter is served by the first list whole, as it would have been by it staged (an empty one has no batch).
      else if (this.#ready(w.need, w.first ? -1 : w.after)) w.resolve();
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

  /**
   * A list from the upstream, a page at a time: staged in storage as it arrives, then either
   * the difference from what the hub holds, committed as ordinary events a page at a time (so
   * connected and resuming subscribers get every change, and the hub serves its state as of
   * the last page meanwhile), or, for a first list or a history that went another way, a new
   * history.
   */
  async listed(list: ListedCollection, check: number): Promise<void> {
    this.#failing = undefined;
    // What the previous watch delivered comes first: the relist is diffed against it.
    this.#commitPending();
    const apiVersion = list.apiVersion || keyApiVersion(this.#key);
    const identity: HubIdentity = { key: this.#key, kind: list.kind.replace(/List$/, ""), listKind: list.kind, apiVersion, replica: this.#replica };
    const to = list.resourceVersion;
    const previous = this.#identity;
    this.#staged.begin(previous !== undefined);
    const listing = (this.#listing ??= { objects: 0, since: this.#clock.now(), at: this.#clock.now() });
    // A first list of the current state is read by lists as it is staged (`first-list.ts`).
    const streamed = previous === undefined && !list.past;
    let first: FirstList | undefined;
    this.#pastFirst = previous === undefined && list.past === true;
    // Lists that waited for the first list find it of a past state: a check after it makes the state current.
    if (this.#pastFirst && this.#waiters.some((w) => w.first && w.need === "current")) this.#reflector.refresh();
    const from = this.window.head;
    // The fan-out sends what it has, and the hub answers its requests, between pages.
    const pause = () => new Promise<void>((resolve) => this.#clock.after(0, resolve));
    let changes: number | undefined;
    let diffMs = 0;
    let staged = 0;
    try {
      for await (const items of list.pages) {
        // A relist takes (serialises, and makes the rows of) only the objects it does not have.
        const taking = previous ? this.#staged.differing(items, identityOf) : items;
        const records: ObjectRecord[] = [];
        for (const item of taking) {
          const taken = this.#take(item, identity);
          if (taken) records.push(taken.object);
        }
        this.#staged.add(records, to);
        if (streamed) {
          const opened = first === undefined;
          first ??= this.#first = this.#lastFirst = new FirstList({ resourceVersion: to, listKind: list.kind, apiVersion, total: list.total }, () => this.#storage.sql, this.collection);
          first.staged(records.map((r) => r.key));
          // The lists waiting for the hub are answered from its first batch on: an object too big
          // to store in that batch fails them with its Status instead, before anything was sent.
          if (opened) this.#settle();
        }
        staged += records.length;
        // Those it already had, and those taken.
        listing.objects += items.length - taking.length + records.length;
        listing.at = this.#clock.now();
      }
      // Still the list under way (an idle hub finishes it): the diff is its last part.
      const diffing = this.#clock.now();
      changes = previous ? await this.#staged.diff(from, to, pause) : undefined;
      diffMs = this.#clock.now() - diffing;
    } catch (e) {
      if (first) {
        // Its readers end with the error; their snapshot, and the continue tokens given out, go with it.
        first.failed(e as Error);
        this.#first = undefined;
        this.snapshots.reset();
      }
      throw e;
    } finally {
      this.#listing = undefined;
      this.#pastFirst = false;
    }
    const listed = listing.objects;
    const listMs = this.#clock.now() - listing.since;
    if (previous && changes !== undefined) {
      this.#log("relisted upstream; emitting the difference as events", { changes, from, to, objects: listed, staged, listMs, diffMs });
      for (let after = from; ; ) {
        const page = this.#staged.events(after, DIFF_PAGE);
        const last = page.at(-1);
        if (!last) break;
        this.#commit(page, last.object.rv);
        after = last.object.rv;
        await pause();
      }
      this.#commit([], to);
      this.#staged.end();
    } else {
      this.#newHistory(identity, to);
      // In the same turn as the staged list became the collection: its readers read on from there.
      first?.whole();
      this.#first = undefined;
      if (previous) {
        this.#log("upstream history is inconsistent with the hub's; window reset", { head: from, listed: to });
        this.#listener.reset(to);
      } else {
        this.#log("synced from upstream list", { objects: listed, resourceVersion: to, listMs, ...(list.past ? { past: true } : {}) });
      }
    }
    this.#live = true;
    // A past state (`listFirstAt`) is caught up with as a resumed watch is: by the watch from it.
    if (!list.past) {
      this.#current = true;
      this.#currentAsOf = Math.max(this.#currentAsOf, check);
      this.#markCaughtUp();
    }
    this.#heardAt = this.#clock.now();
    this.#settle();
  }

  /**
   * The staged list is the collection, at `rv`: an empty window and no tombstones. Every snapshot
   * of the old one is gone; a first list's (its readers', its continue tokens') are of this one.
   */
  #newHistory(identity: HubIdentity, rv: number): void {
    const first = this.#identity === undefined;
    this.#storage.transaction(() => {
      if (this.#staged.against) {
        this.#staged.replaceDiffering();
        this.collection.clearVersions();
      } else {
        this.collection.replaceWithListed();
        this.viewRows.replaceWithListed();
      }
      this.window.clear();
      this.tombstones.clear();
      this.#storage.setMeta("identity", JSON.stringify(identity));
      for (const name of ["head", "start", "horizon"]) this.#storage.setMeta(name, rv);
    });
    this.#staged.end();
    this.#identity = identity;
    this.collection.recount();
    this.tombstones.committed(0);
    this.window.reset(rv);
    this.#horizon = rv;
    if (!first) {
      this.snapshots.reset();
      this.#lastFirst = undefined;
    }
    this.#headMoved();
  }

  /**
   * A batch read from the upstream watch. Upstream chunks arrive one per turn of the runtime's
   * event loop, so committing each alone costs a storage commit (and a fan-out pass) per event
   * in a burst. Events are held back for the gather time (`gather.ts`: 1 ms, more for hubs
   * with many subscribers and while the runtime is behind) from the first of them, longer while
   * a burst's events are still coming back to back, and committed together: one transaction,
   * one write per subscriber.
   */
  events(batch: UpstreamEvent[], chars = 0): void {
    for (const event of batch) this.#pending.push(event);
    this.#pendingChars += chars;
    // A burst of big objects is committed as it comes, not held for the gather time: a stream
    // can bring more than an isolate holds before a timer fires.
    if (this.#pendingChars >= READ_BYTES) {
      this.#commitPending();
      return;
    }
    this.#lastEventAt = this.#clock.now();
    if (this.#commitTimer !== undefined) return;
    this.#gatherStarted = this.#lastEventAt;
    this.#gatherFor(this.#gather.ms);
  }

  /** Commit what was gathered in `ms`, or gather on while a burst's events keep coming. */
  #gatherFor(ms: number): void {
    const due = this.#clock.now() + ms;
    this.#commitTimer = this.#clock.after(ms, () => {
      const now = this.#clock.now();
      const elapsed = now - this.#gatherStarted;
      const more = this.#gather.more(elapsed, now - this.#lastEventAt, this.#lastEventAt > this.#gatherStarted);
      if (more > 0) return this.#gatherFor(more);
      this.#gather.fired(now - due, this.#pending.length, elapsed);
      this.#commitPending();
    });
  }

  #commitPending(): void {
    this.#commitTimer?.();
    this.#commitTimer = undefined;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.#heardAt = this.#clock.now();
    this.#pendingChars = 0;
    const identity = this.#identity;
    if (!identity) return;
    const changes: Change[] = [];
    let head = this.window.head;
    let refused: ObjectTooLarge | undefined;
    for (const event of batch) {
      const rv = objectVersion(event.object);
      if (rv === undefined) {
        this.#log("skipped an upstream event without a resourceVersion", { type: event.type });
      } else if (event.type === "BOOKMARK") {
        head = Math.max(head, rv);
      } else if (rv <= head) {
        this.#log("skipped an upstream event the hub already has", { type: event.type, rv, head });
      } else {
        let taken: { object: ObjectRecord; parsed: KubeObject } | undefined;
        try {
          taken = this.#take(event.object, identity, event.objectJson);
        } catch (e) {
          if (!(e instanceof ObjectTooLarge)) throw e;
          // The hub stays before it: the watch fails, and the hub lists again.
          refused = e;
          break;
        }
        if (taken) changes.push({ type: event.type as ObjectEvent["type"], ...taken });
        head = rv;
      }
    }
    this.#commit(changes, head);
    if (refused) {
      this.#log("an upstream object is too big to store; the watch fails and is retried", { error: refused.message }, "error");
      this.#reflector.fail(refused);
    }
  }

  state(state: ReflectorState, detail?: string, error?: UpstreamError): void {
    const changed = state !== this.upstreamState;
    this.upstreamState = state;
    if (state === "listing") this.#listing ??= { objects: 0, since: this.#clock.now(), at: this.#clock.now() };
    else this.#listing = undefined;
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
    if (changed) this.#listener.upstreamChanged();
  }

  checking(): number {
    return ++this.#checks;
  }

  currentOnceAt(rv: number, check: number): void {
    this.#currentAt = { rv, check };
    this.#headMoved();
  }

  passed(check: number): void {
    // Out of step meanwhile (a list, a failed watch): the reads wait for what comes of that.
    if (!this.#current) return;
    // What the watch has brought so far, not only what was committed.
    this.#commitPending();
    this.#currentAsOf = Math.max(this.#currentAsOf, check);
    this.#settle();
  }

  checkFailed(check: number, error: UpstreamError): void {
    // The relay's own identity refused is said as such (`hub.ts`); anything else, as the read it failed.
    const failed = error.status === 401 || error.status === 403 ? error : new UnconfirmedRead(error);
    this.#waiters = this.#waiters.filter((w) => {
      if (w.need !== "current" || w.after >= check) return true;
      w.reject(failed);
      return false;
    });
  }

  progressed(): void {
    this.#heardAt = this.#clock.now();
  }

  upToDate(check: number): void {
    this.#currentAt = undefined;
    this.#failing = undefined;
    this.#heardAt = this.#clock.now();
    this.#current = true;
    this.#currentAsOf = Math.max(this.#currentAsOf, check);
    this.#markCaughtUp();
    this.#settle();
  }

  /**
   * Apply changes (in RV order) to the collection, the window and the tombstones in one
   * transaction, then to what memory holds of them, then publish them.
   */
  #commit(changes: readonly Change[], head: number): void {
    const deltas = this.#wantDeltas();
    const rows: RowUpdate[] | undefined = this.#wantRows() ? [] : undefined;
    const events: WindowEvent[] = [];
    const gone: Tombstone[] = [];
    let added = 0;
    const written = this.#storage.transaction(() => {
      for (const change of changes) {
        const { type, object } = change;
        // A delta is made from the version it patches, and only while someone takes deltas.
        const patched = type === "MODIFIED" && deltas;
        const full = patched ? this.collection.get(object.key) : undefined;
        const replaced = patched ? full : this.collection.peek(object.key);
        const since = type === "ADDED" || replaced === undefined ? object.rv : replaced.since;
        if (type === "DELETED") gone.push({ ...object, since: replaced?.since ?? 0 });
        added += this.collection.write(type, object, since, replaced, replaced !== undefined && this.snapshots.sees(replaced.rv));
        const row = type === "DELETED" ? undefined : object.row;
        rows?.push({ before: this.viewRows.get(object.key)?.row, after: row });
        this.viewRows.write(object.key, row, object.rv);
        const line = eventLine(type, object.json);
        const delta = full && deltaLine(JSON.parse(full.json) as KubeObject, change.parsed ?? (JSON.parse(object.json) as KubeObject), line);
        events.push({ rv: object.rv, line, delta });
      }
      const window = this.window.write(events);
      const tombstones = this.tombstones.write(gone, this.#clock.now(), this.#horizon);
      if (window.evicted) this.#storage.setMeta("start", window.evicted.to);
      if (tombstones.horizon !== this.#horizon) this.#storage.setMeta("horizon", tombstones.horizon);
      // The head is the last event's, unless a bookmark took it further.
      if (head > (events.at(-1)?.rv ?? 0) && head > this.window.head) this.#storage.setMeta("head", head);
      return { window, tombstones };
    });
    this.collection.committed(added);
    this.window.committed(written.window);
    this.tombstones.committed(written.tombstones.count);
    this.#horizon = written.tombstones.horizon;
    this.window.advance(head);
    this.#headMoved();
    if (events.length > 0) this.#listener.published(events, rows);
  }

  /**
   * An upstream object as the relay serves it (kind and apiVersion set, managedFields dropped),
   * cached, and as parsed; `undefined`, logged, without a uid, name or resourceVersion; an
   * `ObjectTooLarge` thrown when its JSON is more than a row of storage holds (`row-limit.ts`).
   * `json`: its text as the upstream sent it, kept when the object needs no change (a root hub's).
   */
  #take(item: KubeObject, identity: HubIdentity, json?: string): { object: ObjectRecord; parsed: KubeObject } | undefined {
    // Built-in list items come without kind/apiVersion; every watch event object needs them.
    const parsed = item.kind && item.apiVersion ? item : { kind: identity.kind, apiVersion: identity.apiVersion, ...item };
    let unchanged = parsed === item;
    // Who wrote which field is the API server's business, and a large share of every object.
    if (this.#stripManagedFields && parsed.metadata?.managedFields) {
      // Removed, not set to undefined: a delta is computed from this object, not from its JSON.
      const { managedFields: _, ...metadata } = parsed.metadata;
      parsed.metadata = metadata;
      unchanged = false;
    }
    const record = toRecord(parsed, unchanged ? json : undefined);
    if (!record) {
      this.#log("skipped an upstream object without uid, name or resourceVersion");
      return undefined;
    }
    const bytes = utf8BytesOver(record.json, OBJECT_BYTES);
    if (bytes > OBJECT_BYTES) throw tooLarge(`the upstream object ${record.key}`, bytes);
    return { object: { ...record, row: viewRowOf(this.#key, record.key, parsed) }, parsed };
  }
}
