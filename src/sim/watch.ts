/**
 * @module
 * One watch stream, as the API server's cacher serves it: initial ADDED events or replay from
 * history, then live events as the watch cache takes them (`watch-cache.ts`), filtered by
 * namespace and selectors (with the ADDED/DELETED transitions of objects entering or leaving a
 * selector), bookmarks, timeout, and the in-stream ERROR events that end it. Faults (drop, stall, expire, malformed lines) act on an
 * open stream through the methods at the bottom.
 */
import type { ServerResponse } from "node:http";
import { errorLine, eventLine } from "../k8s/event.ts";
import type { WatchOptions } from "../k8s/options.ts";
import { toTable, type TableOptions } from "../k8s/table.ts";
import { expired, tooLargeResourceVersion, tooOldResourceVersion } from "../k8s/status.ts";
import { INITIAL_EVENTS_END, type KubeObject, type Status, type WatchEventType } from "../k8s/types.ts";
import type { ObjectFilter } from "./filter.ts";
import { apiHeaders } from "./http.ts";
import { goJson } from "./json.ts";
import { FRESHNESS_WAIT_MS } from "./list.ts";
import { apiVersionOfResource, type ResourceDef } from "./resources.ts";
import type { ChangeType, Store, StoredEvent } from "./store.ts";
import type { WatchCache } from "./watch-cache.ts";

export interface WatchSpec {
  id: number;
  def: ResourceDef;
  /** Collection path without query, for stats. */
  path: string;
  filter: ObjectFilter;
  /** The `resourceVersion` parameter as sent, for stats. */
  rawResourceVersion: string;
  /** Validated options, after the 1.34 WatchList defaulting. */
  options: WatchOptions;
  table: (TableOptions & { contentType: string }) | undefined;
  timeoutMs: number;
  bookmarkIntervalMs: number;
}

/** Buffered live bytes past which a client counts as unresponsive and its watch is ended (cacher behaviour). */
const MAX_BUFFERED = 16 * 1024 * 1024;

/** Resolves once `res` can take more, or is gone. */
const drained = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });

/** A line that is not valid JSON, for the `malformedLines` fault. */
const MALFORMED_LINE = '{"type":"MODIFIED","object":{"kind":\n';

export class WatchStream {
  readonly id: number;
  readonly path: string;
  readonly labelSelector: string;
  readonly fieldSelector: string;
  readonly resourceVersion: string;
  readonly since = new Date().toISOString();
  readonly #spec: WatchSpec;
  readonly #store: Store;
  readonly #cache: WatchCache;
  readonly #res: ServerResponse;
  readonly #onClose: () => void;
  /** Events with rv ≤ this were already delivered (or precede the requested start). */
  #after = 0;
  /** Highest RV this client was sent, for bookmarks. */
  #lastSent = 0;
  #closed = false;
  #stalled = false;
  #malformed = 0;
  #tableHeaders = true;
  /** Past initial events / replay; only then does a full buffer mean an unresponsive client. */
  #live = false;
  #unsubscribe: (() => void) | undefined;
  readonly #timers: Array<ReturnType<typeof setTimeout>> = [];
  #bookmarkTimer: ReturnType<typeof setInterval> | undefined;

  constructor(spec: WatchSpec, store: Store, cache: WatchCache, res: ServerResponse, onClose: () => void) {
    this.id = spec.id;
    this.path = spec.path;
    this.labelSelector = spec.filter.labelSelector;
    this.fieldSelector = spec.filter.fieldSelector;
    this.resourceVersion = spec.rawResourceVersion;
    this.#spec = spec;
    this.#store = store;
    this.#cache = cache;
    this.#res = res;
    this.#onClose = onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get bufferedBytes(): number {
    return this.#res.writableLength;
  }

  /** Write headers, then initial state or replay, then follow the store. */
  async start(): Promise<void> {
    const res = this.#res;
    res.on("close", () => this.#cleanup());
    res.writeHead(200, apiHeaders(this.#spec.table?.contentType));
    res.flushHeaders();
    const { resourceVersion: rv, sendInitialEvents, allowWatchBookmarks } = this.#spec.options;

    if (sendInitialEvents === true) {
      // The cache's state at least as new as asked: `N`; without a resourceVersion, etcd's
      // revision as the request arrived (a consistent read); with `0`, whatever it has.
      const target = rv.kind === "exact" ? rv.rv : rv.kind === "unset" ? this.#store.resourceVersion : 0;
      if (!(await this.#cache.waitFor(target, FRESHNESS_WAIT_MS))) {
        if (!this.#closed) this.#fail(tooLargeResourceVersion(target, this.#cache.resourceVersion));
        return;
      }
      if (this.#closed) return;
      this.#sendInitialEvents();
      if (allowWatchBookmarks) this.#bookmarkAt(this.#after, true);
    } else if (rv.kind === "exact") {
      this.#after = this.#lastSent = rv.rv;
      if (!(await this.#replay())) return;
    } else if (sendInitialEvents === undefined) {
      // "" or "0" without the WatchList gate: the cache's state as ADDED, with nothing to mark their end.
      this.#sendInitialEvents();
    } else {
      // sendInitialEvents=false with no resourceVersion: start at the most recent state.
      this.#after = this.#lastSent = this.#store.resourceVersion;
    }
    // Stalled during a replay: silent from here on, as `stall` promises.
    if (this.#closed || this.#stalled) return;
    this.#live = true;
    this.#unsubscribe = this.#cache.subscribe((event) => this.#onEvent(event));
    this.#timers.push(setTimeout(() => this.end(), this.#spec.timeoutMs));
    if (allowWatchBookmarks) {
      this.setBookmarkInterval(this.#spec.bookmarkIntervalMs);
      // The cacher also sends a bookmark 2 s before the deadline, so clients can resume from it.
      if (this.#spec.timeoutMs > 2000) this.#timers.push(setTimeout(() => this.#sendBookmark(), this.#spec.timeoutMs - 2000));
    }
  }

  /** The objects as the cache has them (as the store has them, when its history no longer reaches back there), in key order. */
  #sendInitialEvents(): void {
    const at = this.#cache.resourceVersion;
    const snapshot = this.#store.snapshotAt(this.#spec.def, at);
    const objects = snapshot ?? this.#store.objects(this.#spec.def);
    for (const key of [...objects.keys()].sort()) {
      const object = objects.get(key);
      if (object && this.#spec.filter.matches(object)) this.#write("ADDED", object);
    }
    this.#after = this.#lastSent = snapshot ? at : this.#store.resourceVersion;
  }

  /**
   * Replay the history after the requested resourceVersion, up to what the cache has taken, at
   * the client's pace, as the cacher's watcher does through its bounded channel: a client far
   * behind is not handed megabytes at once, which would leave a simulator serving many of them
   * too busy to answer anything else. Changes the cache takes during the replay are replayed too;
   * once none are left the caller subscribes, in the same turn, so nothing falls between. False
   * when the stream ended, with a 410 if the history moved past it.
   */
  async #replay(): Promise<boolean> {
    while (this.#after < this.#cache.resourceVersion) {
      const events = this.#store.eventsAfter(this.#after);
      if (!events) {
        this.#fail(tooOldResourceVersion(this.#after, this.#store.oldestResumable));
        return false;
      }
      if (events.length === 0) break;
      for (const event of events) {
        if (event.rv > this.#cache.resourceVersion) break;
        this.#onEvent(event);
        // Past it whether or not it was for this watch (`#onEvent` moves only for this resource's).
        this.#after = event.rv;
        if (this.#res.writableNeedDrain) await drained(this.#res);
        if (this.#closed) return false;
      }
    }
    return !this.#closed;
  }

  /** Apply the selector transition rules (cacher `convertToWatchEvent`). */
  #onEvent(event: StoredEvent): void {
    if (event.resource !== this.#spec.def || event.rv <= this.#after || this.#closed || this.#stalled) return;
    const filter = this.#spec.filter;
    const matchesNow = filter.matches(event.object);
    if (event.type === "ADDED") {
      if (matchesNow) this.#send(event, "ADDED");
    } else if (event.type === "DELETED") {
      if (matchesNow) this.#send(event, "DELETED");
    } else {
      const matchedBefore = event.prev !== undefined && filter.matches(event.prev);
      if (matchesNow) this.#send(event, matchedBefore ? "MODIFIED" : "ADDED");
      else if (matchedBefore && event.prev) {
        // Leaving the selector: the old object, at this event's resourceVersion.
        this.#write("DELETED", { ...event.prev, metadata: { ...event.prev.metadata, resourceVersion: String(event.rv) } });
      }
    }
    this.#after = event.rv;
  }

  /** A stored change, sent as `type`: watchers not asking for Tables share its encoded line. */
  #send(event: StoredEvent, type: ChangeType): void {
    if (this.#spec.table) this.#write(type, event.object);
    else this.#write(type, event.object, event.line(type));
  }

  #write(type: WatchEventType, object: KubeObject, shared?: Buffer): void {
    if (this.#closed || this.#stalled) return;
    const table = this.#spec.table;
    let line: string | Buffer;
    if (table) {
      line = eventLine(type, goJson(toTable(this.#spec.def, [object], { resourceVersion: object.metadata?.resourceVersion ?? "" }, table, this.#tableHeaders)));
      this.#tableHeaders = false;
    } else {
      line = shared ?? eventLine(type, goJson(object));
    }
    if (this.#malformed > 0) {
      this.#malformed--;
      this.#res.write(MALFORMED_LINE);
    }
    this.#res.write(line);
    const rv = Number(object.metadata?.resourceVersion);
    if (rv > this.#lastSent) this.#lastSent = rv;
    if (this.#live && this.#res.writableLength > MAX_BUFFERED) this.end();
  }

  /** A BOOKMARK at the cache's RV, only if that is past what this client has seen (cacher rule). */
  #sendBookmark(): void {
    this.#bookmarkAt(this.#cache.resourceVersion, false);
  }

  #bookmarkAt(rv: number, initialEventsEnd: boolean): void {
    if (this.#stalled || (!initialEventsEnd && rv <= this.#lastSent)) return;
    const def = this.#spec.def;
    const metadata = initialEventsEnd ? { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END]: "true" } } : { resourceVersion: String(rv) };
    this.#write("BOOKMARK", { kind: def.kind, apiVersion: apiVersionOfResource(def), metadata, ...def.emptyFields });
  }

  /** 200 + one ERROR event + close: how the API server fails a watch that has started. */
  #fail(status: Status): void {
    if (this.#closed) return;
    this.#res.end(errorLine(status));
    this.#cleanup();
  }

  #cleanup(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearTimeout(t);
    clearInterval(this.#bookmarkTimer);
    this.#onClose();
  }

  setBookmarkInterval(ms: number): void {
    clearInterval(this.#bookmarkTimer);
    if (this.#closed || this.#stalled || !this.#spec.options.allowWatchBookmarks) return;
    this.#bookmarkTimer = setInterval(() => this.#sendBookmark(), Math.max(1, ms));
  }

  /** End the stream cleanly (timeout, server shutdown): EOF with no ERROR. */
  end(): void {
    if (this.#closed) return;
    this.#res.end();
    this.#cleanup();
  }

  /** Fault: write the first half of an event line, then cut the connection. */
  drop(): void {
    if (this.#closed) return;
    const def = this.#spec.def;
    const line = eventLine(
      "MODIFIED",
      goJson({ kind: def.kind, apiVersion: apiVersionOfResource(def), metadata: { name: "dropped-mid-event", resourceVersion: String(this.#store.resourceVersion) } }),
    );
    const socket = this.#res.socket;
    this.#cleanup();
    this.#res.write(line.slice(0, Math.floor(line.length / 2)), () => socket?.destroy());
  }

  /** Fault: go silent (no events, no bookmarks, no timeout) until the client hangs up. */
  stall(): void {
    this.#stalled = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearTimeout(t);
    clearInterval(this.#bookmarkTimer);
  }

  /** Fault: the cacher re-initialised; this client's position is gone. */
  expire(): void {
    this.#fail(expired(`too old resource version: ${this.#lastSent} (${this.#store.resourceVersion})`));
  }

  /** Fault: precede the next `count` lines with a line that is not JSON. */
  injectMalformed(count: number): void {
    this.#malformed += count;
  }
}
