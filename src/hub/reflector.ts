/**
 * @module
 * The upstream list + watch loop for one key, after client-go's reflector: list, watch from
 * the list's resourceVersion with bookmarks, re-watch from the last resourceVersion when a
 * stream ends, relist when the upstream answers 410, back off (with jitter, honouring
 * `Retry-After`) on errors, and treat a silent stream as dead. It never gives up while started.
 */
import { Backoff, REFLECTOR_BACKOFF } from "../k8s/backoff.ts";
import { upstreamCollectionUrl, type WatchKey } from "../k8s/key.ts";
import { objectJsonOf, parseEventLine } from "../k8s/event.ts";
import { LineSplitter, LineTooLong } from "../k8s/ndjson.ts";
import type { KubeObject, Status, WatchEvent } from "../k8s/types.ts";
import { isTooLargeResourceVersion } from "../k8s/status.ts";
import { UPSTREAM_OBJECT_CHARS } from "./row-limit.ts";
import { openList, parseItem } from "./list-reader.ts";
import { probeUpstream, type ProbeAnswer } from "./probe.ts";
import { ObjectTooLarge, tooLarge, upstreamFailure, UpstreamError } from "./upstream-error.ts";
import type { Upstream } from "../upstream.ts";
import { realClock, type Cancel, type Clock } from "./clock.ts";
import type { PagePermits } from "./page-permits.ts";
import type { Log } from "../log.ts";

export interface ListedCollection {
  /** `PodList`, `WidgetList`, ... */
  kind: string;
  apiVersion: string;
  resourceVersion: number;
  /** Listed at exactly `resourceVersion`, a past state (`Reflector.listFirstAt`), not the upstream's current one. */
  past?: boolean | undefined;
  /** How many objects the list holds, as its first page counted them (the page's and its `remainingItemCount`), when it did. */
  total?: number | undefined;
  /** The items a page at a time, as the upstream sends them: the first read, the rest asked for as they are taken. */
  pages: AsyncIterable<KubeObject[]>;
}

export type ReflectorState = "listing" | "watching" | "backoff" | "stopped";

/** An upstream watch event; from a root hub (`followsHub`), with its object's JSON text as the root stores it. */
export type UpstreamEvent = WatchEvent & { objectJson?: string | undefined };

/** What the reflector feeds: the hub's cache and window. */
export interface ReflectorHandler {
  /** The RV to watch from, or `undefined` when the hub has nothing and must list first. */
  resumeVersion(): number | undefined;
  /** Resolves once every page is taken (a failure to read one rejects); `check`: the list's number among the checks. */
  listed(list: ListedCollection, check: number): Promise<void>;
  /** A batch of events from one read of the stream, in order (ERROR events excluded), and the characters of their lines. */
  events(batch: UpstreamEvent[], chars: number): void;
  state(state: ReflectorState, detail?: string, error?: UpstreamError): void;
  /** A check of the upstream begins (a request for its resourceVersion, a list, a probe): its number, which the calls below name. */
  checking(): number;
  /** The check found the upstream where the hub is: its state is current. */
  upToDate(check: number): void;
  /** The check found the upstream at `rv`, ahead of the hub: current once the watch has brought it there. */
  currentOnceAt(rv: number, check: number): void;
  /** A probe (`catchUp`) found the open watch had been sent every change the upstream had made when the check began. */
  passed(check: number): void;
  /** A probe failed: the reads it was for get `error`. */
  checkFailed(check: number, error: UpstreamError): void;
  /** A watch asked for how far the upstream has got has ended: what it had to say (a BOOKMARK, if it had moved) has been delivered. */
  progressed(): void;
}

/** What the reflector reports of the upstream, for the relay's metrics. */
export interface UpstreamObserver {
  /** A watch request; `reconnect` when an earlier watch of this run ended or failed. */
  watch(reconnect: boolean): void;
  relisted(): void;
  expired(): void;
  stalled(): void;
  renewed(): void;
  failed(status: number, message: string): void;
}

export interface ReflectorOptions {
  stallMs: number;
  /** Server-side watch timeout: the watch restarts at least this often (≤ 10 minutes). */
  watchTimeoutSeconds: () => number;
  random: () => number;
  observer: UpstreamObserver;
  /** Retry delays after failures (client-go's reflector's by default). */
  backoff?: { initialMs: number; maxMs: number };
  /** Stalls, backoff sleeps and stream ages are timed on it (the runtime's by default). */
  clock?: Clock;
  /**
   * The upstream is this key's root hub, whose resourceVersions are this key's own history
   * (not a whole cluster's): a hub behind it catches up by watching from where it is, never by
   * relisting (DESIGN.md, "Hot keys").
   */
  followsHub?: boolean;
  /** Permits for list pages in memory, shared by the isolate's hubs (none: a page needs none). */
  pages?: PagePermits | undefined;
  /** Where the reflector says what it decided about its upstream (none: nowhere). */
  log?: Log | undefined;
}

/** A watch ended because it went silent: counted as a stall, not as an upstream error. */
class StallError extends UpstreamError {}

/** Objects asked for in each page of an upstream list, at most. */
export const PAGE_SIZE = 500;
/** What a page of an upstream list should hold, in characters: pages of big objects ask for fewer than `PAGE_SIZE` (84 MB would be 70 ConfigMaps of 1.2 MB). */
export const PAGE_CHARS = 8 * 1024 * 1024;
/**
 * A page is handed over in batches of items of at most this many characters (or one item, if
 * bigger): each batch is a transaction of the staged list, so a page of 500 ordinary objects
 * (pods of 4 KB) stays one, while a page of big ones holds no more than this.
 */
export const BATCH_CHARS = 4 * 1024 * 1024;

/**
 * `timeoutSeconds` of a watch that asks how far the upstream has got: the API server sends a
 * watch a BOOKMARK 2 s before its end if its resourceVersion has moved past what the watch was
 * sent (cacher `nextBookmarkTime`), so this one's comes about a second in.
 */
export const PROGRESS_TIMEOUT_SECONDS = 3;

/** How a watch ended: its stream ended, its resume point is too old (410), or ahead of the upstream. */
type WatchOutcome = "ended" | "expired" | "ahead";

export class Reflector {
  readonly #key: WatchKey;
  readonly #upstream: Upstream;
  readonly #handler: ReflectorHandler;
  readonly #options: ReflectorOptions;
  readonly #backoff: Backoff;
  readonly #clock: Clock;
  /** Objects to ask for in the next list page: fewer than `PAGE_SIZE` once pages are big (`PAGE_CHARS`). */
  #pageLimit = PAGE_SIZE;
  /** Gives back the list page permit this hub holds, if it holds one. */
  #pageHeld: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;
  #abort: AbortController | undefined;
  #wake: (() => void) | undefined;
  /**
   * Someone needs the state to be current: check the upstream, and relist if it has moved; or,
   * `in-step` (the hub's watch has run since it was last current), have the watch bring the hub to
   * where the check found the upstream.
   */
  #refresh: "relist" | "in-step" | undefined;
  /** Whether the upstream serves watch-lists, which `catchUp` probes with: unknown until a probe says. */
  #watchLists: boolean | undefined;
  /** A probe is under way; another is wanted (reads came while it was, or while no stream was open). */
  #probing = false;
  #probeWanted = false;
  /** A watch stream is open: the upstream took the request and has not ended it. */
  #streaming = false;
  /** Where an `in-step` check found the upstream: the watch that asks how far it has got should bring the hub there. */
  #passing: number | undefined;
  /** Where the first list is made, when a watch from there made the hub (`listFirstAt`). */
  #firstAt: number | undefined;
  /** The open watch stream is being ended so that it is read on in a fresh invocation. */
  #renewing = false;
  /** How far the upstream has got: to be asked (the open stream is being ended for it), being asked, or not wanted. */
  #progress: "asked" | "asking" | undefined;
  /** When the open watch stream was requested (0: none is open). */
  #streamSince = 0;
  /** Last time bytes arrived from upstream (or a request was answered). */
  #lastActivity = 0;

  constructor(key: WatchKey, upstream: Upstream, handler: ReflectorHandler, options: ReflectorOptions) {
    this.#key = key;
    this.#upstream = upstream;
    this.#handler = handler;
    this.#options = options;
    this.#backoff = new Backoff({ ...(options.backoff ?? REFLECTOR_BACKOFF), random: options.random });
    this.#clock = options.clock ?? realClock;
  }

  /** Started and not stopped (a stopped loop may take a moment to wind down). */
  get running(): boolean {
    return this.#running !== undefined && !this.#stopped;
  }

  /** Start the loop if it is not running (idempotent). */
  start(): void {
    this.#stopped = false;
    this.#running ??= this.#loop().finally(() => {
      this.#running = undefined;
      // Started again while the stopped loop was winding down.
      if (!this.#stopped) this.start();
    });
  }

  stop(): void {
    this.#stopped = true;
    // Nobody waits on a probe of a stopped hub: its next start asks none.
    this.#probeWanted = false;
    this.#abort?.abort();
    this.#wake?.();
  }

  /**
   * Make the hub's first list at exactly `rv` (a past state the upstream still holds: a list
   * answered by the upstream, or a hub whose storage was deleted, gave a client `rv`), so a watch
   * from `rv` that made the hub is replayed exactly what followed it; not a 410 for a history that
   * began after it. One attempt: a state the upstream no longer has (410), or any other refusal,
   * and the list is of the current state, as always.
   */
  listFirstAt(rv: number): void {
    if (this.#handler.resumeVersion() === undefined) this.#firstAt = rv;
  }

  /**
   * Make the state current: the loop asks the upstream for its resourceVersion (a `limit=1`
   * list, the cheapest consistent read) and relists when it has moved past the hub. A running
   * watch is ended for it; a backoff is not cut short.
   */
  refresh(): void {
    if (this.#refresh === "relist") return;
    this.#refresh = "relist";
    this.#abort?.abort();
  }

  /**
   * For reads arriving now at a hub in step with its upstream (its watch has run since its state
   * was last known current): make sure the hub holds every change the upstream had made by now,
   * without a list. With watch-lists, a probe beside the watch (`probe.ts`), one at a time: the
   * reads that arrive while one is under way share the next, sent once it is answered (`checking`
   * numbers each, and `passed` serves the reads that came before it was sent). Without, the check
   * `refresh` makes, then the watch asked how far the upstream has got (`progress`) until the hub
   * is where the check found the upstream. Following a root hub, a refresh (which never relists).
   */
  catchUp(): void {
    if (this.#watchLists === false || this.#options.followsHub) {
      if (this.#refresh !== undefined) return;
      this.#refresh = "in-step";
      this.#abort?.abort();
      return;
    }
    this.#probeWanted = true;
    this.#probeNext();
  }

  /** The next probe, if one is wanted and none is under way; only while a stream is open (the probe vouches for it). */
  #probeNext(): void {
    if (!this.#probeWanted || this.#probing || !this.#streaming || this.#stopped) return;
    this.#probeWanted = false;
    this.#probing = true;
    void this.#probe().finally(() => {
      this.#probing = false;
      this.#probeNext();
    });
  }

  async #probe(): Promise<void> {
    const check = this.#handler.checking();
    let answer: ProbeAnswer;
    try {
      answer = await probeUpstream(this.#key, (url, signal) => this.#fetch(url, signal), this.#clock);
    } catch (e) {
      this.#handler.checkFailed(check, e instanceof UpstreamError ? e : new UpstreamError(0, `connection failed: ${(e as Error).message}`));
      return;
    }
    if ("unsupported" in answer) {
      // From now on the check and the watch's progress; the reads waiting now too.
      this.#watchLists = false;
      this.#options.log?.("the upstream serves no watch-lists: consistent reads wait for its watch to say how far it has got", { reason: answer.unsupported });
      this.catchUp();
      return;
    }
    this.#watchLists = true;
    // The stream open now was open when the upstream answered: it had been sent every change the
    // upstream's cache had by then. Between streams, the next one may still be to bring some:
    // asked again once it is open.
    if (this.#streaming) this.#handler.passed(check);
    else this.#probeWanted = true;
  }

  /**
   * The hub cannot take what the open watch brought (an object too big to store): the watch
   * fails with `error`, and the loop backs off and lists again.
   */
  fail(error: UpstreamError): void {
    this.#abort?.abort(error);
  }

  /**
   * End the open watch stream if it was requested more than `maxAgeMs` ago; the loop re-watches
   * at once from the last resourceVersion, in the caller's invocation (the heartbeat), so no
   * invocation's reads outlive its CPU limit. Subscribers notice nothing.
   */
  renew(maxAgeMs: number): void {
    if (this.#streamSince === 0 || this.#clock.now() - this.#streamSince < maxAgeMs || this.#renewing) return;
    this.#renewing = true;
    this.#options.observer.renewed();
    this.#abort?.abort();
  }

  /**
   * Learn how far the upstream has got, which a watch of a quiet selector hears only from the
   * API server's bookmarks, about once a minute: the open stream is ended and the next one asked
   * with `PROGRESS_TIMEOUT_SECONDS`, so the API server's bookmark before its end says where it
   * is (if it has moved), then the watch goes on as before. A watch from where the hub is, so
   * nothing is missed or read twice; one at a time, and nothing to ask without an open stream (a
   * list, a backoff).
   */
  progress(): void {
    if (this.#streamSince === 0 || this.#progress !== undefined) return;
    this.#progress = "asked";
    this.#abort?.abort();
  }

  async #loop(): Promise<void> {
    const observer = this.#options.observer;
    let watched = false;
    let mustList = this.#handler.resumeVersion() === undefined;
    // A resume point from before this start (storage, an idle stop) is only good if the upstream
    // has not gone back in time since (restored etcd, a rebuilt cluster behind the same URL): a
    // watch from a future resourceVersion would just wait, and the hub would serve stale data.
    let mustProbe = !mustList;
    /** The last watch was refused as ahead of the upstream: a probe tells a rewound upstream from a lagging one. */
    let refusedAhead = false;
    while (!this.#stopped) {
      try {
        if (mustList) {
          const at = this.#handler.resumeVersion() === undefined ? this.#firstAt : undefined;
          this.#firstAt = undefined;
          // A list is as current as a check can make it; one of a past state is not.
          if (at === undefined) this.#refresh = undefined;
          if (this.#handler.resumeVersion() !== undefined) observer.relisted();
          const check = this.#handler.checking();
          this.#handler.state("listing");
          try {
            await this.#handler.listed(await this.#listFrom(at), check);
          } finally {
            this.#pageHeld?.();
            this.#pageHeld = undefined;
          }
          mustList = mustProbe = false;
        } else if (mustProbe || this.#refresh) {
          const refresh = this.#refresh;
          this.#refresh = undefined;
          const check = this.#handler.checking();
          // Following a root hub, a check that is not for a consistent read asks for its state as
          // it is: a consistent one would make a restarted root relist, and sum up for everyone the
          // changes it could have replayed exactly.
          const current = await this.#currentVersion(!refresh && this.#options.followsHub === true);
          const resume = this.#handler.resumeVersion() ?? 0;
          mustProbe = false;
          const ahead = refusedAhead;
          refusedAhead = false;
          if (current < resume) {
            this.#handler.state("listing", `the upstream is at resourceVersion ${current}, behind the hub's ${resume}: relisting`);
            mustList = true;
            continue;
          }
          // Its storage is where the hub is but its watch cache is not (an API server replica
          // behind the others): the watch is retried after a backoff, the history stands.
          if (ahead) throw new UpstreamError(504, `the upstream refused a watch from resourceVersion ${resume} as too large, though it lists at ${current}; retrying`);
          if (current === resume) {
            this.#handler.upToDate(check);
          } else if (refresh && this.#options.followsHub) {
            // The root's history is this key's: the watch from here replays up to it, and the
            // root's bookmark once caught up brings the hub to its head.
            this.#handler.currentOnceAt(current, check);
          } else if (refresh === "in-step") {
            // The watch has run since the hub was current: what the hub lacks is on its way, or
            // nothing of this key changed. The watch asks how far the upstream has got; its
            // bookmark brings the hub to `current`, or else a list does (below).
            this.#handler.currentOnceAt(current, check);
            this.#passing = current;
            this.#progress = "asked";
          } else if (refresh) {
            // Nothing cheaper tells whether this key changed: the upstream's resourceVersion is
            // cluster-wide, and an idle collection's watch carries no progress.
            mustList = true;
            continue;
          }
        }
        if (this.#refresh) continue; // asked again while checking
        const started = this.#clock.now();
        observer.watch(watched);
        watched = true;
        const progress = this.#progress === "asked";
        this.#progress = progress ? "asking" : undefined;
        const passing = progress ? this.#passing : undefined;
        this.#passing = undefined;
        const { outcome, received } = await this.#watch(this.#handler.resumeVersion() ?? 0, progress ? PROGRESS_TIMEOUT_SECONDS : this.#options.watchTimeoutSeconds()).finally(() => {
          if (progress) this.#progress = undefined;
        });
        if (progress && outcome === "ended") {
          this.#handler.progressed();
          // The upstream's bookmark did not bring the hub where the check found it (an upstream
          // that bookmarks late, or not at all): a list does.
          if (passing !== undefined && (this.#handler.resumeVersion() ?? 0) < passing) {
            mustList = true;
            continue;
          }
        }
        if (outcome === "expired") {
          observer.expired();
          mustList = true;
          continue;
        }
        if (outcome === "ahead") {
          // What an etcd restore looks like, or a relay upstream that restarted: client-go's
          // reflector relists on it. The probe says whether the upstream went back in time.
          refusedAhead = mustProbe = true;
          continue;
        }
        // A stream that closed at once with nothing in it is a failure, not a healthy end:
        // without backoff it would become a hot loop against the API server.
        if (!received && this.#clock.now() - started < 1000) throw new UpstreamError(0, "the watch closed immediately");
      } catch (e) {
        if (this.#stopped) break;
        if (this.#refresh) continue; // the watch was ended for a refresh, not by a fault
        if (this.#renewing) {
          this.#renewing = false;
          continue; // ended to be read on in a fresh invocation
        }
        if (this.#progress === "asked") continue; // ended to ask how far the upstream has got
        const error = e instanceof UpstreamError ? e : new UpstreamError(0, `connection failed: ${(e as Error).message}`);
        // The watch would bring the same object again: a list finds the collection as it is now,
        // and the hub takes it once the object is small enough again, or gone.
        if (error instanceof ObjectTooLarge) mustList = true;
        if (error instanceof StallError) observer.stalled();
        else observer.failed(error.status, error.message);
        const delay = this.#backoff.next(error.retryAfterMs);
        this.#handler.state("backoff", `${error.message}; retrying in ${delay} ms`, error);
        await this.#sleep(delay);
      }
    }
    this.#handler.state("stopped");
  }

  /**
   * The collection from the upstream, a page at a time (each asked for once the one before is
   * taken, and only with one of the isolate's page permits), consistent at the first page's
   * resourceVersion (a continue token keeps the upstream's snapshot; one that expires fails the
   * list, and it is made again). A page is read as it streams in and handed over in batches of
   * about `BATCH_CHARS`, so what a page holds in memory is bounded whatever its objects' size.
   */
  async #list(at?: number): Promise<ListedCollection> {
    const first = await this.#page(undefined, at);
    const pages = async function* (this: Reflector): AsyncGenerator<KubeObject[]> {
      let page = first;
      for (;;) {
        yield* page.batches;
        // Taken: the page's permit goes back before the next is asked for.
        this.#pageHeld?.();
        this.#pageHeld = undefined;
        if (!page.continue) return;
        page = await this.#page(page.continue);
      }
    };
    return { kind: first.kind, apiVersion: first.apiVersion, resourceVersion: first.resourceVersion, past: at !== undefined, total: first.total, pages: pages.call(this) };
  }

  /** The list at exactly `at` (see `listFirstAt`), or, refused, of the current state. */
  async #listFrom(at: number | undefined): Promise<ListedCollection> {
    if (at !== undefined) {
      try {
        return await this.#list(at);
      } catch (e) {
        if (!(e instanceof UpstreamError) || this.#stopped) throw e;
        this.#pageHeld?.();
        this.#pageHeld = undefined;
        this.#handler.state("listing", `the upstream cannot list resourceVersion ${at} exactly (${e.message}): listing its current state`);
        this.#refresh = undefined;
      }
    }
    return this.#list();
  }

  /** A page of the list (at exactly `at`, when given): its head, read before the items, and its items in batches as they arrive. */
  async #page(
    cont: string | undefined,
    at?: number,
  ): Promise<{ kind: string; apiVersion: string; resourceVersion: number; continue: string | undefined; total: number | undefined; batches: AsyncGenerator<KubeObject[]> }> {
    const limit = this.#pageLimit;
    const params: Record<string, string> = { limit: String(limit) };
    if (cont) params.continue = cont;
    // The next pages' continue tokens keep the first's snapshot.
    if (at !== undefined) Object.assign(params, { resourceVersion: String(at), resourceVersionMatch: "Exact" });
    // Held until the page is taken (`#list`), or the list ends however it ends (`run`).
    this.#pageHeld = await this.#options.pages?.take(this.#clock, () => this.#stopped);
    // Stopped while it waited: the list ends here, without asking the upstream for its page.
    if (this.#stopped) throw new UpstreamError(0, "the hub stopped before its list's next page");
    const url = upstreamCollectionUrl(this.#key, params);
    const list = await openList(await this.#request(url), url);
    const { head, rv } = list;
    const batches = async function* (this: Reflector): AsyncGenerator<KubeObject[]> {
      /** Items read and not yet handed over, their characters; and the page's, to size the next page by. */
      let waiting: string[] = [];
      let waitingChars = 0;
      let count = 0;
      let chars = 0;
      const batch = (): KubeObject[] => {
        const texts = waiting;
        count += texts.length;
        chars += waitingChars;
        waiting = [];
        waitingChars = 0;
        return texts.map((text) => parseItem(text, url));
      };
      try {
        for (let items = await list.next(); items !== undefined; items = await list.next()) {
          for (const item of items) {
            // Handed over before it would pass BATCH_CHARS: a batch is at most that, or one object.
            if (waiting.length > 0 && waitingChars + item.length > BATCH_CHARS) yield batch();
            waiting.push(item);
            waitingChars += item.length;
          }
        }
        if (waiting.length > 0) yield batch();
      } finally {
        list.cancel();
      }
      // Pages of big objects ask for fewer: about `PAGE_CHARS` a page, never more than `PAGE_SIZE` objects.
      if (count > 0) this.#pageLimit = Math.max(1, Math.min(PAGE_SIZE, Math.floor(PAGE_CHARS / (chars / count))));
    };
    const metadata = head.metadata as { continue?: string; remainingItemCount?: unknown } | undefined;
    const remaining = metadata?.remainingItemCount;
    return {
      kind: head.kind as string,
      apiVersion: typeof head.apiVersion === "string" ? head.apiVersion : "",
      resourceVersion: rv,
      continue: metadata?.continue || undefined,
      // A page followed by `remaining` more objects was full.
      total: metadata?.continue && typeof remaining === "number" && Number.isSafeInteger(remaining) && remaining >= 0 ? limit + remaining : undefined,
      batches: batches.call(this),
    };
  }

  /** The upstream's current resourceVersion, from the cheapest list there is; `any`: as its cache has it (`resourceVersion=0`), else a consistent read. */
  async #currentVersion(any: boolean): Promise<number> {
    if (this.#upstream.head) return this.#upstream.head();
    const url = upstreamCollectionUrl(this.#key, any ? { limit: "1", resourceVersion: "0" } : { limit: "1" });
    // Only the head is read: an API server's cache lists everything for `resourceVersion=0`, whatever the limit.
    const list = await openList(await this.#request(url), url);
    list.cancel();
    return list.rv;
  }

  async #request(url: string, signal?: AbortSignal): Promise<Response> {
    const response = await this.#upstream.fetch(url, signal ? { signal } : undefined);
    this.#lastActivity = this.#clock.now();
    return this.#answered(response, url);
  }

  /** As `#request`, but the stream's activity is not the answer's (a probe beside it). */
  async #fetch(url: string, signal?: AbortSignal): Promise<Response> {
    return this.#answered(await this.#upstream.fetch(url, signal ? { signal } : undefined), url);
  }

  /** The upstream's answer, or what it failed with as an `UpstreamError`. */
  async #answered(response: Response, url: string): Promise<Response> {
    if (response.ok) return response;
    throw await upstreamFailure(response, url, this.#clock.now());
  }

  async #watch(from: number, timeoutSeconds: number): Promise<{ outcome: WatchOutcome; received: boolean }> {
    const abort = new AbortController();
    this.#abort = abort;
    this.#streamSince = this.#clock.now();
    this.#renewing = false;
    const url = upstreamCollectionUrl(this.#key, {
      watch: "1",
      resourceVersion: String(from),
      allowWatchBookmarks: "true",
      timeoutSeconds: String(timeoutSeconds),
    });
    // One timer for the whole stream, re-armed only when it fires: moving it on every chunk
    // costs more than the rest of reading the chunk.
    this.#lastActivity = this.#clock.now();
    const check = () => {
      const quiet = this.#clock.now() - this.#lastActivity;
      if (quiet >= this.#options.stallMs) abort.abort(new StallError(0, `no data from the upstream watch for ${this.#options.stallMs} ms`));
      else stall = this.#clock.after(this.#options.stallMs - quiet, check);
    };
    let stall: Cancel = this.#clock.after(this.#options.stallMs, check);
    let received = false;
    try {
      let response: Response;
      try {
        response = await this.#request(url, abort.signal);
      } catch (e) {
        if (e instanceof UpstreamError && e.status === 410) return { outcome: "expired", received };
        if (e instanceof UpstreamError && e.tooLarge) return { outcome: "ahead", received };
        throw e;
      }
      this.#handler.state("watching", `from resourceVersion ${from}`);
      if (!response.body) throw new UpstreamError(502, "the upstream watch has no body");
      this.#streaming = true;
      this.#probeNext();
      const reader = response.body.getReader();
      // A line longer than any object a hub can store fails the watch before more of it is held.
      const lines = new LineSplitter(UPSTREAM_OBJECT_CHARS);
      for (;;) {
        const { done, value } = await reader.read().catch((e: unknown) => {
          throw abort.signal.reason instanceof UpstreamError ? abort.signal.reason : e;
        });
        if (done) return { outcome: "ended", received };
        this.#lastActivity = this.#clock.now();
        if (!received) {
          // The stream works: a later failure is a new fault, retried quickly, not the next
          // step of an escalating backoff.
          this.#backoff.reset();
          received = true;
        }
        const batch: UpstreamEvent[] = [];
        let chars = 0;
        let complete: string[];
        try {
          complete = lines.push(value);
        } catch (e) {
          if (e instanceof LineTooLong) throw tooLarge(`an event of the upstream watch from resourceVersion ${from}`, e.chars);
          throw e;
        }
        for (const line of complete) {
          const event = parseEventLine(line);
          if (event === undefined) {
            this.#deliver(batch, chars);
            throw new UpstreamError(502, `malformed line in the upstream watch: ${line.slice(0, 120)}`);
          }
          if (event.type === "ERROR") {
            this.#deliver(batch, chars);
            const status = event.object as Status;
            if (status.code === 410) return { outcome: "expired", received };
            if (isTooLargeResourceVersion(status)) return { outcome: "ahead", received };
            throw new UpstreamError(status.code ?? 500, `upstream watch error: ${status.message ?? "unknown"}`, (status.details?.retryAfterSeconds ?? 0) * 1000);
          }
          // A root hub's lines hold its objects' JSON as it stores them: a replica keeps that text.
          if (this.#options.followsHub) (event as UpstreamEvent).objectJson = objectJsonOf(line, event.type);
          batch.push(event);
          chars += line.length;
        }
        this.#deliver(batch, chars);
      }
    } finally {
      stall();
      abort.abort();
      this.#abort = undefined;
      this.#streamSince = 0;
      this.#streaming = false;
    }
  }

  #deliver(batch: UpstreamEvent[], chars: number): void {
    if (batch.length > 0) this.#handler.events(batch, chars);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.#clock.after(ms, done);
      function done() {
        cancel();
        resolve();
      }
      this.#wake = done;
    });
  }
}
