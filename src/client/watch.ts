/**
 * @module
 * `watch()`: one collection's changes over a WebSocket, as an async iterator that outlives its
 * sockets. It lists first (or starts from a resourceVersion you kept), watches from there with
 * bookmarks, and after any close resumes from the last resourceVersion it delivered, so each
 * change arrives once and none is skipped. When the resume point has left the relay's window
 * (an ERROR 410), it does what client-go's reflector does: list again and carry on from that
 * list, which it yields whole so the consumer can drop what disappeared meanwhile.
 *
 * Flow control is the iteration itself: a socket's messages are taken only as the consumer asks
 * for updates, acknowledged to the relay as they are taken, and the watch reconnects only after
 * the consumer has drained what the old socket delivered.
 */
import { Backoff, REFLECTOR_BACKOFF } from "../k8s/backoff.ts";
import { applyDelta, parseDelta } from "../k8s/delta.ts";
import { parseEventLine } from "../k8s/event.ts";
import { isTooLargeResourceVersion } from "../k8s/status.ts";
import { CLOSE, watchProtocols } from "../k8s/websocket.ts";
import type { KubeList, KubeObject, Status, WatchEvent } from "../k8s/types.ts";
import { Acknowledger } from "./ack.ts";
import { HeldObjects } from "./held.ts";
import { protocolError, socketFailed, statusError, WatchError } from "./errors.ts";
import { listCollection } from "./list.ts";
import { canDecompress, SocketReader } from "./socket.ts";
import { transportOf } from "./transport.ts";
import type { KubeResource, Transport, WatchOptions, WatchSocket, WatchUpdate } from "./types.ts";
import { collectionUrl, watchUrl } from "./url.ts";

/** A socket that closes sooner, having delivered nothing, did not work (client-go's "very short watch"). */
const MIN_WATCH_MS = 1000;

type SessionEnd =
  | { kind: "closed"; code: number; reason: string; healthy: boolean }
  | { kind: "failed"; status: Status }
  /** A delta patched a version this watch does not hold: its state is not the relay's. */
  | { kind: "diverged"; reason: string }
  | { kind: "stopped" };

/**
 * Watch a relay collection: `for await (const update of watch<Pod>("https://relay/api/v1/pods"))`.
 *
 * Yields the first `listed` state, then `ADDED`/`MODIFIED`/`DELETED` changes and `BOOKMARK`s,
 * and its lifecycle: `connected`, `closed` (every close is resumed: 1000 at once, 1012,
 * 4008 and lost connections after a jittered backoff), `resumed` (once a resume has caught up,
 * with how many events it replayed), `relisted` (after a 410) and `error` (retried failures).
 * Failures that retrying cannot fix (401, 403, 404, a bad selector) end the iteration by
 * throwing a `WatchError` that says what is wrong. Breaking out of the loop, or aborting
 * `options.signal`, closes the socket.
 *
 * @param url a collection URL, http(s) or ws(s), with `labelSelector`/`fieldSelector` if wanted.
 * @throws TypeError at once if `url` is not a collection URL.
 */
export function watch<T extends KubeResource = KubeObject>(url: string | URL, options: WatchOptions = {}): AsyncGenerator<WatchUpdate<T>, void, undefined> {
  return new Watcher<T>(collectionUrl(url), options).run();
}

class Watcher<T extends KubeResource> {
  readonly #collection: URL;
  readonly #options: WatchOptions;
  readonly #transport: Transport;
  readonly #backoff: Backoff;
  readonly #protocols: string[];
  /** The resume point: the resourceVersion of the last list, event or bookmark delivered. */
  #rv: string | undefined;
  /** A resume under way: where it started, what it has delivered so far, and when the previous connection ended. */
  #catchUp: { from: string; replayed: number; bytes: number; started: number } | undefined;
  /** The objects as this watch has delivered them: what deltas apply to (kept only when offering them). */
  readonly #objects: HeldObjects<T> | undefined;
  /** Set when the next list is a relist: the 410's message. */
  #expired: string | undefined;

  constructor(collection: URL, options: WatchOptions) {
    this.#collection = collection;
    this.#options = options;
    this.#transport = transportOf(options.transport);
    this.#backoff = new Backoff({ ...REFLECTOR_BACKOFF, random: Math.random, ...options.backoff });
    const deltas = options.deltas !== false;
    this.#protocols = watchProtocols(options.token, deltas, options.compressed !== false && canDecompress());
    this.#objects = deltas ? new HeldObjects() : undefined;
    this.#rv = options.resourceVersion;
    if (this.#rv !== undefined) this.#catchUp = catchUp(this.#rv);
  }

  async *run(): AsyncGenerator<WatchUpdate<T>, void, undefined> {
    const signal = this.#options.signal;
    while (!signal?.aborted) {
      if (this.#rv === undefined) {
        const list = yield* this.#list();
        if (!list) return;
        const resourceVersion = (this.#rv = list.metadata.resourceVersion);
        this.#catchUp = undefined;
        this.#objects?.replace(list.items);
        if (this.#expired === undefined) yield { type: "listed", items: list.items, resourceVersion };
        else yield { type: "relisted", items: list.items, resourceVersion, expired: this.#expired };
        this.#expired = undefined;
        continue;
      }

      const url = watchUrl(this.#collection, this.#rv, this.#options.timeoutSeconds, this.#options.compact !== false);
      let socket: WatchSocket;
      try {
        socket = await this.#transport.connect(url, this.#protocols);
      } catch (e) {
        if (signal?.aborted) return;
        const retryInMs = this.#backoff.next();
        yield { type: "error", error: socketFailed(url, e), retryInMs };
        if (!(await sleep(retryInMs, signal))) return;
        continue;
      }

      const end = yield* this.#session(socket, this.#rv);
      if (end.kind === "stopped") return;
      let retryInMs: number;
      if (end.kind === "diverged" || (end.kind === "failed" && (end.status.code === 410 || isTooLargeResourceVersion(end.status)))) {
        // The resume point has left the window, is ahead of a history that went back in time (a
        // restored etcd, a relay in front of one that restarted), or what this watch holds is
        // not what the relay patched: list again, after a backoff, so that a relay answering so
        // to every watch is not met with a tight relist loop.
        this.#expired = end.kind === "diverged" ? end.reason : (end.status.message ?? "410 Expired");
        this.#rv = undefined;
        this.#catchUp = undefined;
        if (!(await sleep(this.#backoff.next(), signal))) return;
        continue;
      }
      if (end.kind === "failed") {
        const error = statusError("the watch failed", end.status);
        if (!error.retryable) throw error;
        retryInMs = this.#backoff.next(error.retryAfterMs);
        yield { type: "error", error, retryInMs };
      } else {
        // Only a socket that worked (delivered something, or lasted) starts backoff afresh.
        if (end.healthy) this.#backoff.reset();
        // A normal end of a working watch (timeoutSeconds) resumes at once, as client-go re-watches.
        retryInMs = end.code === CLOSE.normal && end.healthy ? 0 : this.#backoff.next();
        yield { type: "closed", code: end.code, reason: end.reason, retryInMs };
      }
      this.#catchUp ??= catchUp(this.#rv);
      if (!(await sleep(retryInMs, signal))) return;
    }
  }

  /** List, retrying what is worth retrying; `undefined` when stopped. */
  async *#list(): AsyncGenerator<WatchUpdate<T>, KubeList<T> | undefined> {
    const signal = this.#options.signal;
    for (;;) {
      try {
        return await listCollection<T>(this.#transport, this.#collection.href, this.#options.token, signal);
      } catch (e) {
        if (signal?.aborted) return undefined;
        if (!(e instanceof WatchError) || !e.retryable) throw e;
        const retryInMs = this.#backoff.next(e.retryAfterMs);
        yield { type: "error", error: e, retryInMs };
        if (!(await sleep(retryInMs, signal))) return undefined;
      }
    }
  }

  /** One socket, from open to close: its events, acknowledged as the consumer takes them. */
  async *#session(socket: WatchSocket, from: string): AsyncGenerator<WatchUpdate<T>, SessionEnd> {
    const signal = this.#options.signal;
    // Listen before anything can yield: messages may already be on their way.
    const reader = new SocketReader(socket);
    const ack = new Acknowledger((text) => socket.send(text));
    const stop = () => reader.close(CLOSE.normal, "the client stopped watching");
    signal?.addEventListener("abort", stop);
    const opened = Date.now();
    let messages = 0;
    try {
      if (signal?.aborted) return { kind: "stopped" };
      yield { type: "connected", resourceVersion: from, resuming: this.#catchUp !== undefined };
      for (;;) {
        const item = await reader.next();
        if (signal?.aborted) return { kind: "stopped" };
        if (item.kind === "close") {
          return { kind: "closed", code: item.code, reason: item.reason, healthy: messages > 0 || Date.now() - opened >= MIN_WATCH_MS };
        }
        messages++;
        if (this.#catchUp) this.#catchUp.bytes += item.text.length;
        // A message holds one event, or (batch protocol) several, one per line.
        for (const line of item.text.split("\n")) {
          if (line.length === 0) continue;
          const event = this.#parse(line);
          if ("kind" in event) return event;
          if (event.type === "ERROR") return { kind: "failed", status: event.object as Status };
          yield* this.#apply(event);
        }
        ack.taken(item.text.length);
      }
    } finally {
      signal?.removeEventListener("abort", stop);
      ack.stop();
      reader.close(CLOSE.normal, "the client is done with this socket");
    }
  }

  /** One line: an event, or a delta turned into the MODIFIED it stands for (or, patching a version not held, the end of the session). */
  #parse(line: string): WatchEvent<T> | Extract<SessionEnd, { kind: "diverged" }> {
    const delta = parseDelta(line);
    if (delta) {
      const current = this.#objects?.at(delta.base);
      if (!current) return { kind: "diverged", reason: `the relay sent a change to the object at resourceVersion ${delta.base}, which this watch does not hold` };
      return { type: "MODIFIED", object: applyDelta(current, delta) };
    }
    const event = parseEventLine<T>(line);
    if (!event) throw protocolError(`the watch sent a message that is not a watch event (${line.slice(0, 80)})`);
    return event;
  }

  /** Advance the resume point and turn one event into updates. */
  *#apply(event: WatchEvent<T>): Generator<WatchUpdate<T>> {
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED":
        if (rv) this.#rv = rv;
        if (this.#catchUp) this.#catchUp.replayed++;
        if (event.type === "DELETED") this.#objects?.remove(event.object);
        else this.#objects?.put(event.object);
        yield { type: event.type, object: event.object };
        return;
      case "BOOKMARK": {
        if (rv) this.#rv = rv;
        const resourceVersion = this.#rv as string;
        yield { type: "BOOKMARK", resourceVersion };
        // The relay bookmarks a resumed subscriber as soon as its replay is done.
        const catchUp = this.#catchUp;
        this.#catchUp = undefined;
        if (catchUp) yield { type: "resumed", from: catchUp.from, resourceVersion, replayed: catchUp.replayed, bytes: catchUp.bytes, ms: Date.now() - catchUp.started };
        return;
      }
    }
  }
}

const catchUp = (from: string) => ({ from, replayed: 0, bytes: 0, started: Date.now() });

/** Wait `ms`; `false` if `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const finish = (completed: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      resolve(completed);
    };
    const aborted = () => finish(false);
    const timer = setTimeout(() => finish(true), ms);
    signal?.addEventListener("abort", aborted);
  });
}
