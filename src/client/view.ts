/**
 * @module
 * `view()`: a live view of a collection (DESIGN.md, "Live views"): a window of its rows in an
 * order and under a filter, the count of the rows that pass the filter, and the relay's row
 * changes to both, so a client shows a page of a hundred thousand objects holding only that page.
 *
 * `update()` moves the window or changes its order or filter: the new view opens beside the
 * one shown, which ends only once the new window has arrived, so the rows never go empty in
 * between (and a newer `update()` replaces one still opening). After any close the view opens
 * again and takes the window as it is now; when that is the window it was showing, it tells
 * what changed meanwhile as row changes, so nothing is missed and nothing that did not change
 * is redrawn. It goes over `transport` as `watch()` does: a WebSocket of its own by default, or
 * an op on a relay socket (`relaySocket().view()`).
 */
import { Backoff, REFLECTOR_BACKOFF } from "../k8s/backoff.ts";
import type { KubeObject, Status } from "../k8s/types.ts";
import { applyChanges, VIEW_LIMIT_DEFAULT, windowChanges, type RowChange } from "../k8s/view.ts";
import { CLOSE, watchProtocols } from "../k8s/websocket.ts";
import { Acknowledger } from "./ack.ts";
import { protocolError, socketFailed, statusError, WatchError } from "./errors.ts";
import { responseError } from "./list.ts";
import { authorization, transportOf } from "./transport.ts";
import type { Closed, Connected, KubeResource, Resumed, Retrying, Transport, WatchOptions, WatchSocket } from "./types.ts";
import { collectionUrl, viewUrl, type ViewQuery } from "./url.ts";

/** A Table cell, as `kubectl get` prints it. */
export type ViewCell = string | number | boolean | null;

/** One row of a view: the object's key and resourceVersion, and its Table cells (`rows: "cells"`) or the object (`rows: "object"`). */
export interface ViewRow<T = KubeResource> {
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  resourceVersion: string;
  /** With cells: the object's creation time, so an Age cell can tick on without the relay. */
  creationTimestamp?: string | null;
  cells?: ViewCell[];
  object?: T;
}

/** A column of the resource's Table (`meta.k8s.io/v1` `TableColumnDefinition`): what each row's cells are. */
export interface ViewColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  /** 0 for the columns `kubectl get` prints, more for those it prints with `-o wide`. */
  priority: number;
}

/** The window: where it starts in the order, how many rows, the order (`-Status,name`) and the filter (`name~web,Status=Running`). */
export interface ViewWindow {
  sort?: string;
  filter?: string;
  offset?: number;
  /**
   * The window's first row, by key (`namespace/name`), instead of `offset`: the window opens at
   * that row's offset, which `window.offset` then says (the view stays at that offset, and
   * reopens there). A row that is not one of the view's fails the view with the relay's 404.
   */
  anchor?: string;
  limit?: number;
}

/** The view's own lifecycle: a socket open, a close (it reopens after `retryInMs`), a failure it retries, a reopened view caught up. */
export type ViewStatus = Connected | Resumed | Closed | Retrying;

export interface ViewOptions<T> extends ViewWindow, Pick<WatchOptions, "token" | "timeoutSeconds" | "signal" | "backoff" | "transport"> {
  /** Each row as its Table cells (default) or as the object. */
  rows?: "cells" | "object";
  /** A new window replaced the rows: the first, and each one `update()` asked for (`count` is already its count). */
  onReset?(rows: ReadonlyArray<ViewRow<T>>): void;
  /** A row came into the window at `at` (pushing those from `at` on down). */
  onInsert?(row: ViewRow<T>, at: number): void;
  /** The row at `at` left the window. */
  onRemove?(row: ViewRow<T>, at: number): void;
  /** The row at `at` changed. */
  onUpdate?(row: ViewRow<T>, previous: ViewRow<T>, at: number): void;
  /** The row at `from` moved to `to` (its place after the move). */
  onMove?(row: ViewRow<T>, from: number, to: number): void;
  /** The number of rows that pass the filter changed. */
  onCount?(count: number, previous: number): void;
  onStatus?(status: ViewStatus): void;
}

/** What a view asks the relay for, with the defaults filled in. */
interface Spec {
  sort: string;
  filter: string;
  offset: number;
  /** "" for none. */
  anchor: string;
  limit: number;
}

const specOf = (window: ViewWindow): Spec => ({
  sort: window.sort ?? "",
  filter: window.filter ?? "",
  offset: window.offset ?? 0,
  anchor: window.anchor ?? "",
  limit: window.limit ?? VIEW_LIMIT_DEFAULT,
});
const sameSpec = (a: Spec, b: Spec): boolean => a.sort === b.sort && a.filter === b.filter && a.offset === b.offset && a.anchor === b.anchor && a.limit === b.limit;

type Frame<T> =
  | { type: "VIEW"; resourceVersion: string; count: number; offset: number; limit: number; columns: ViewColumn[]; rows: Array<ViewRow<T>> }
  | { type: "ROWS"; resourceVersion: string; count: number; changes: Array<RowChange<ViewRow<T>>> }
  | { type: "ERROR"; object: Status };

/** One view asked of the relay: its socket, from open to close. */
class Session<T> {
  readonly spec: Spec;
  socket: WatchSocket | undefined;
  ack: Acknowledger | undefined;
  /** A VIEW came: the relay served it. */
  served = false;
  /** Characters received. */
  bytes = 0;
  ended = false;
  /** A window sent in parts, as far as it has come: a `VIEW` of its first rows, then the `ROWS` that insert the rest. */
  filling: WindowFrame<T> | undefined;

  constructor(spec: Spec) {
    this.spec = spec;
  }

  end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.ack?.stop();
    try {
      this.socket?.close(CLOSE.normal, reason);
    } catch {
      // already closing
    }
  }
}

type WindowFrame<T> = Extract<Frame<T>, { type: "VIEW" }>;

/** Whether a window holds all its rows: as many as its count leaves from its offset, up to its limit. */
const whole = ({ rows, count, offset, limit }: WindowFrame<unknown>): boolean => rows.length >= Math.min(limit, Math.max(0, count - offset));

type Loss = { kind: "closed"; code: number; reason: string } | { kind: "failed"; error: WatchError };

export class View<T extends KubeResource = KubeObject> {
  readonly #collection: URL;
  readonly #options: ViewOptions<T>;
  readonly #transport: Transport;
  readonly #backoff: Backoff;
  readonly #protocols: string[];
  #rows: ReadonlyArray<ViewRow<T>> = [];
  #count = 0;
  #columns: readonly ViewColumn[] = [];
  #resourceVersion: string | undefined;
  /** The window the rows are of; `undefined` until the first arrives. */
  #shown: Spec | undefined;
  /** The window asked for last. */
  #wanted: Spec;
  /** The view whose frames the rows follow. */
  #live: Session<T> | undefined;
  /** The view opened for `#wanted`, until its window arrives. */
  #opening: Session<T> | undefined;
  /** Since when, and from where, nothing has been live (a window had been shown). */
  #lost: { from: string; at: number } | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** `update()`s waiting for the window asked for last. */
  #waiters: Array<{ resolve(): void; reject(error: Error): void }> = [];
  #markReady!: () => void;
  #failReady!: (error: Error) => void;
  #finish!: () => void;
  #fail!: (error: Error) => void;

  /** Resolves once the first window is in `rows`; rejects if the view fails or is closed first. */
  readonly ready: Promise<void>;
  /** Resolves when closed; rejects with the `WatchError` (or a callback's error) that ended it. */
  readonly done: Promise<void>;

  constructor(url: string | URL, options: ViewOptions<T> = {}) {
    this.#collection = collectionUrl(url);
    this.#options = options;
    this.#transport = transportOf(options.transport);
    this.#backoff = new Backoff({ ...REFLECTOR_BACKOFF, random: Math.random, ...options.backoff });
    // Views are frames of the relay's own, never deltas: the batch framing.
    this.#protocols = watchProtocols(options.token, false);
    this.#wanted = specOf(options);
    this.ready = new Promise<void>((resolve, reject) => {
      this.#markReady = resolve;
      this.#failReady = reject;
    });
    this.done = new Promise<void>((resolve, reject) => {
      this.#finish = resolve;
      this.#fail = reject;
    });
    // `done` carries the failure; an unawaited `ready` must not report it a second time.
    this.ready.catch(() => undefined);
    if (options.signal?.aborted) {
      this.close();
      return;
    }
    options.signal?.addEventListener("abort", () => this.close());
    this.#open();
  }

  /** The window's rows, in the view's order. Replaced (never modified) as the window changes. */
  get rows(): ReadonlyArray<ViewRow<T>> {
    return this.#rows;
  }

  /** How many rows of the collection pass the filter. */
  get count(): number {
    return this.#count;
  }

  /** The resource's Table columns (what each row's cells are). */
  get columns(): readonly ViewColumn[] {
    return this.#columns;
  }

  /** The resourceVersion of the collection the rows are as of. */
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /** The window the rows are of (until the first arrives, the one asked for: with its anchor, if it has one). */
  get window(): Required<Omit<ViewWindow, "anchor">> & Pick<ViewWindow, "anchor"> {
    const { anchor, ...window } = this.#shown ?? this.#wanted;
    return anchor === "" ? window : { ...window, anchor };
  }

  /**
   * Move the window, or change its order or filter (what is not given stays). Resolves once the
   * rows are of the window asked for, or of one asked for after it; rejects with the relay's
   * refusal (a `WatchError`: an unknown column, say), and the view stays on the window it shows.
   */
  update(change: ViewWindow): Promise<void> {
    if (this.#closed) return Promise.reject(new WatchError("the view is closed", { retryable: false }));
    // An offset asked for replaces an anchor asked for before.
    const wanted = specOf({ ...this.#wanted, ...(change.offset === undefined ? {} : { anchor: "" }), ...change });
    const waiting = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (sameSpec(wanted, this.#wanted) && (this.#opening !== undefined || this.#retry !== undefined || this.#shown === undefined)) return waiting;
    this.#wanted = wanted;
    if (this.#shown && sameSpec(wanted, this.#shown) && this.#live) {
      // Back to the window shown: whatever was opening for another is dropped.
      this.#opening?.end("the view moved back");
      this.#opening = undefined;
      this.#settle();
    } else if (this.#retry === undefined) this.#open();
    return waiting;
  }

  /** End the view. `done` resolves. */
  close(): void {
    if (this.#closed) return;
    this.#stop();
    const closed = new WatchError("the view was closed", { retryable: false });
    this.#failReady(closed);
    this.#rejectWaiters(closed);
    this.#finish();
  }

  #open(): void {
    this.#opening?.end("the view moved");
    const session = new Session<T>(this.#wanted);
    this.#opening = session;
    void this.#connect(session);
  }

  async #connect(session: Session<T>): Promise<void> {
    const url = viewUrl(this.#collection, this.#query(session.spec), true, this.#options.timeoutSeconds);
    let socket: WatchSocket;
    try {
      socket = await this.#transport.connect(url, this.#protocols);
    } catch (e) {
      if (session.ended) return;
      // A refused WebSocket upgrade does not say why (a browser cannot read it): the window
      // once, over HTTP, does, as a Status.
      this.#lose(session, { kind: "failed", error: (await this.#refusal(session.spec)) ?? socketFailed(url, e) });
      return;
    }
    if (session.ended) {
      // Replaced while it opened.
      socket.close(CLOSE.normal, "the view moved");
      return;
    }
    session.socket = socket;
    session.ack = new Acknowledger((text) => socket.send(text));
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") this.#message(session, event.data);
    });
    socket.addEventListener("close", (event) => this.#lose(session, { kind: "closed", code: event.code, reason: event.reason }));
    socket.addEventListener("error", () => this.#lose(session, { kind: "closed", code: CLOSE.abnormal, reason: "the connection failed" }));
    if (!this.#live) this.#status({ type: "connected", resourceVersion: this.#resourceVersion ?? "", resuming: this.#lost !== undefined });
  }

  #query(spec: Spec): ViewQuery {
    return { ...spec, rows: this.#options.rows ?? "cells" };
  }

  /** Why the relay refuses a view, from its answer to the same view's window over HTTP; `undefined` if it does not. */
  async #refusal(spec: Spec): Promise<WatchError | undefined> {
    const url = viewUrl(this.#collection, this.#query(spec), false);
    try {
      const response = await this.#transport.fetch(url, { headers: { accept: "application/json", ...authorization(this.#options.token) } });
      const text = await response.text();
      return response.ok ? undefined : responseError(`GET ${url}`, response, text);
    } catch {
      return undefined;
    }
  }

  /** A message of the view's socket: its frames, in order, then acknowledged as taken. */
  #message(session: Session<T>, text: string): void {
    if (session.ended) return;
    session.bytes += text.length;
    try {
      for (const line of text.split("\n")) {
        if (line === "" || session.ended) continue;
        const frame = parseFrame<T>(line);
        if (!frame) throw protocolError(`the view sent a line that is not a view frame (${line.slice(0, 80)})`);
        if (frame.type === "ERROR") return this.#lose(session, { kind: "failed", error: statusError("the view failed", frame.object) });
        if (frame.type === "VIEW") this.#fill(session, frame);
        else if (session.filling) this.#fill(session, { ...session.filling, resourceVersion: frame.resourceVersion, count: frame.count, rows: applyChanges(session.filling.rows, frame.changes) });
        else if (session === this.#live) this.#changes(frame);
      }
    } catch (error) {
      // The relay's nonsense, or a callback's own error: either ends the view.
      return this.#failAll(error instanceof Error ? error : new Error(String(error)));
    }
    if (!session.ended) session.ack?.taken(text.length);
  }

  /**
   * A window as far as it has come: a window too large for one frame comes as a `VIEW` of its
   * first rows and `ROWS` inserting the rest, so it is told only once it holds all its rows (a
   * count that changes meanwhile comes with them).
   */
  #fill(session: Session<T>, window: WindowFrame<T>): void {
    if (!whole(window)) {
      session.filling = window;
      return;
    }
    session.filling = undefined;
    this.#window(session, window);
  }

  /** A whole window: the first of a view, or the relay's own fresh start of the one live. */
  #window(session: Session<T>, frame: WindowFrame<T>): void {
    if (session === this.#opening) {
      this.#opening = undefined;
      this.#live?.end("the view moved");
      this.#live = session;
    } else if (session !== this.#live) return;
    session.served = true;
    this.#backoff.reset();
    // An anchored window is, from now on, the window at the offset its anchor was found at.
    let spec = session.spec;
    if (spec.anchor !== "") {
      spec = { ...spec, anchor: "", offset: frame.offset };
      if (sameSpec(this.#wanted, session.spec)) this.#wanted = spec;
    }
    this.#columns = frame.columns;
    this.#resourceVersion = frame.resourceVersion;
    const first = this.#shown === undefined;
    let replayed: number;
    if (this.#shown && sameSpec(this.#shown, spec)) {
      // The same window again (reopened, or sent afresh): what changed in it, as row changes.
      const changes = windowChanges(
        this.#rows,
        frame.rows,
        (r) => r.key,
        (r) => r.resourceVersion,
      );
      this.#apply(changes);
      replayed = changes.length;
      this.#setCount(frame.count);
    } else {
      // The rows and the count of the new window together, when it is told.
      const previous = this.#count;
      this.#shown = spec;
      this.#rows = frame.rows;
      this.#count = frame.count;
      this.#options.onReset?.(this.#rows);
      if (frame.count !== previous) this.#options.onCount?.(frame.count, previous);
      replayed = frame.rows.length;
    }
    const lost = this.#lost;
    this.#lost = undefined;
    if (lost) this.#status({ type: "resumed", from: lost.from, resourceVersion: frame.resourceVersion, replayed, bytes: session.bytes, ms: Date.now() - lost.at });
    if (first) this.#markReady();
    this.#settle();
  }

  #changes(frame: Extract<Frame<T>, { type: "ROWS" }>): void {
    this.#resourceVersion = frame.resourceVersion;
    this.#apply(frame.changes);
    this.#setCount(frame.count);
  }

  #apply(changes: ReadonlyArray<RowChange<ViewRow<T>>>): void {
    const on = this.#options;
    for (const change of changes) {
      const before = this.#rows;
      this.#rows = applyChanges(before, [change]);
      if (change.op === "insert") on.onInsert?.(change.row, change.at);
      else if (change.op === "remove") on.onRemove?.(before[change.at] as ViewRow<T>, change.at);
      else if (change.op === "update") on.onUpdate?.(change.row, before[change.at] as ViewRow<T>, change.at);
      else on.onMove?.(before[change.from] as ViewRow<T>, change.from, change.to);
    }
  }

  #setCount(count: number): void {
    const previous = this.#count;
    this.#count = count;
    if (count !== previous) this.#options.onCount?.(count, previous);
  }

  /** The rows are of the window asked for last: the `update()`s waiting for it are done. */
  #settle(): void {
    if (!this.#shown || !sameSpec(this.#shown, this.#wanted)) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  /** A view's socket closed, or the relay refused or ended the view. */
  #lose(session: Session<T>, loss: Loss): void {
    if (session.ended) return;
    session.end("the view ended");
    const live = session === this.#live;
    const opening = session === this.#opening;
    if (!live && !opening) return;
    if (live) this.#live = undefined;
    if (opening) this.#opening = undefined;
    if (loss.kind === "failed" && !loss.error.retryable) {
      // A window the relay refuses (an update's unknown column, say): the view stays on the one it shows.
      if (opening && this.#shown && !sameSpec(session.spec, this.#shown)) {
        this.#wanted = this.#shown;
        this.#rejectWaiters(loss.error);
        if (this.#live) return;
      } else return this.#failAll(loss.error);
    }
    if (this.#live || this.#opening) {
      // The window shown is still live: an update's view that closed before its window came is asked again.
      if (opening && this.#retry === undefined) this.#schedule(this.#backoff.next(loss.kind === "failed" ? loss.error.retryAfterMs : 0));
      return;
    }
    if (this.#shown) this.#lost ??= { from: this.#resourceVersion ?? "", at: Date.now() };
    let retryInMs: number;
    if (loss.kind === "failed") {
      retryInMs = this.#backoff.next(loss.error.retryAfterMs);
      this.#status({ type: "error", error: loss.error, retryInMs });
    } else {
      // A view the relay ended at timeoutSeconds, having served it, opens again at once.
      retryInMs = loss.code === CLOSE.normal && session.served ? 0 : this.#backoff.next();
      this.#status({ type: "closed", code: loss.code, reason: loss.reason, retryInMs });
    }
    this.#schedule(retryInMs);
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#closed) this.#open();
    }, ms);
  }

  #status(status: ViewStatus): void {
    try {
      this.#options.onStatus?.(status);
    } catch (error) {
      this.#failAll(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #rejectWaiters(error: Error): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  /** Nothing more: every socket closed, no reopening. */
  #stop(): void {
    this.#closed = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#live?.end("the client closed the view");
    this.#opening?.end("the client closed the view");
    this.#live = this.#opening = undefined;
  }

  #failAll(error: Error): void {
    if (this.#closed) return;
    this.#stop();
    this.#failReady(error);
    this.#rejectWaiters(error);
    this.#fail(error);
  }
}

function parseFrame<T>(line: string): Frame<T> | undefined {
  try {
    const frame = JSON.parse(line) as Frame<T>;
    return frame.type === "VIEW" || frame.type === "ROWS" || frame.type === "ERROR" ? frame : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A live view of a collection: `const pods = view<Pod>("https://relay/api/v1/pods", { sort: "-Status", limit: 50, onUpdate })`,
 * then `await pods.ready` and read `pods.rows` and `pods.count`; `pods.update({ offset: 50 })`
 * to move it; `pods.close()` to end it.
 * @throws TypeError at once if `url` is not a collection URL.
 */
export function view<T extends KubeResource = KubeObject>(url: string | URL, options: ViewOptions<T> = {}): View<T> {
  return new View<T>(url, options);
}
