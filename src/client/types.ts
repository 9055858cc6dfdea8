/**
 * @module
 * What a watch yields and how it is configured. Object shapes are `kubernetes-types`' own
 * (`watch<Pod>(...)`); this file adds only the client's lifecycle around the Kubernetes events.
 */
import type { BackoffOptions } from "../k8s/backoff.ts";
import type { KubeList, ObjectMeta } from "../k8s/types.ts";
import type { WatchError } from "./errors.ts";

/** Any Kubernetes object. `kubernetes-types`' interfaces (`Pod`, `Deployment`, ...) satisfy it. */
export interface KubeResource {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A change to one object, in resourceVersion order. DELETED carries the object's last state. */
export interface ObjectChange<T> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: T;
}

/** The server's "nothing more up to here": a fresh resume point, with no object change. */
export interface Bookmark {
  type: "BOOKMARK";
  resourceVersion: string;
}

/** The first list: the whole collection at `resourceVersion`; changes follow from there. */
export interface Listed<T> {
  type: "listed";
  items: T[];
  resourceVersion: string;
}

/**
 * The resume point had expired (`410`), was ahead of the relay's history (`Too large resource
 * version`: it went back in time), or a delta patched a version the watch did not hold: the
 * collection was listed again. `items` is the whole state now; anything you hold that is
 * not in it was deleted while you were away.
 */
export interface Relisted<T> {
  type: "relisted";
  items: T[];
  resourceVersion: string;
  /** Why: the server's message, e.g. `too old resource version: 12 (340)`, or the version a delta patched that the watch did not hold. */
  expired: string;
}

/** A WebSocket is open and watching from `resourceVersion`. */
export interface Connected {
  type: "connected";
  resourceVersion: string;
  /** Picking up after a close (or from a given resourceVersion) rather than after a list. */
  resuming: boolean;
}

/**
 * A resume has caught up: what happened while away was delivered — every event once, or with
 * `compact` each changed object once at its latest state and each deletion (`replayed` counts
 * them either way).
 */
export interface Resumed {
  type: "resumed";
  /** The resourceVersion the watch resumed from. */
  from: string;
  /** Where the replay ended (the caught-up bookmark). */
  resourceVersion: string;
  replayed: number;
  /**
   * What the catch-up took: the characters received (about bytes for JSON), and the time from
   * losing the previous connection (or starting from a resourceVersion), backoff and retries included.
   */
  bytes: number;
  ms: number;
}

/** The socket closed; the watch resumes from its last resourceVersion after `retryInMs`. */
export interface Closed {
  type: "closed";
  /** WebSocket close code: 1000 timeout or normal end, 4008 too slow, 1006 connection lost (a hub restart too). */
  code: number;
  reason: string;
  retryInMs: number;
}

/** A failure the watch retries after `retryInMs` (the relay unreachable or unavailable). Fatal ones end the iteration instead. */
export interface Retrying {
  type: "error";
  error: WatchError;
  retryInMs: number;
}

/** The watch's own lifecycle, beside the objects' changes. */
export type WatchStatus<T> = Listed<T> | Relisted<T> | Connected | Resumed | Closed | Retrying;

/** Everything a watch yields. */
export type WatchUpdate<T> = ObjectChange<T> | Bookmark | WatchStatus<T>;

/**
 * A WebSocket as far as the watch uses it. The standard `WebSocket` (browsers, Node 22,
 * workerd's `response.webSocket` once accepted) satisfies it.
 */
export interface WatchSocket {
  send(message: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
}

/** How the client reaches the relay. The defaults are the global `fetch` and `WebSocket`. */
export interface Transport {
  /** GET a list. */
  fetch(url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<Response>;
  /** Open a WebSocket (a `ws:`/`wss:` URL) and resolve once it is open; reject if it does not open. */
  connect(url: string, protocols: string[]): Promise<WatchSocket>;
  /** List a collection some other way than a GET (the relay socket's watch-list); failures are `WatchError`s. */
  list?<T>(url: string, token: string | undefined, signal?: AbortSignal): Promise<KubeList<T>>;
}

export interface WatchOptions {
  /** Start from this resourceVersion (one you kept) instead of listing first. */
  resourceVersion?: string;
  /** Bearer token: sent as the API server's WebSocket token subprotocol and as `Authorization` on lists. */
  token?: string;
  /** Ask the relay to end each WebSocket after this long; the watch resumes at once. Default: the relay's (30-60 min). */
  timeoutSeconds?: number;
  /** Stops the watch: the iteration ends without an error. */
  signal?: AbortSignal;
  /** Reconnect delays (default: from 0.8 s doubling to 30 s, jittered with `Math.random`). */
  backoff?: Partial<BackoffOptions>;
  /** Replace `fetch` or the WebSocket (tests, runtimes without the globals). */
  transport?: Partial<Transport>;
  /**
   * Resume with `compact=true` (default `true`): a relay sends what changed while away as each
   * changed object once and each deletion, from as far back as it keeps deletions, instead of
   * every event, or a 410 once it is out of its window.
   */
  compact?: boolean;
  /**
   * Offer the relay's delta subprotocol (default `true`): a change to an object the watch already
   * has may come as a merge patch, which the watch applies (it keeps the objects to do so).
   */
  deltas?: boolean;
  /**
   * Offer the relay's compressed framing (default `true` where `DecompressionStream` exists):
   * messages long enough to pay come gzipped, compressed once by the relay for every subscriber
   * (an initial state about a tenth of its size); a server that does not know the framing sends
   * text, which the watch reads as well.
   */
  compressed?: boolean;
}
