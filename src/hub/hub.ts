/**
 * @module
 * The WatchHub Durable Object: one per watch key. Its handlers are thin: requests become
 * subscribers of the fan-out, WebSocket messages become acknowledgements, the alarm is the
 * heartbeat that keeps an active hub's upstream watch alive and stops an idle one. The feed
 * (cache, window, storage, reflector) and the fan-out do the work.
 */
import { DurableObject } from "cloudflare:workers";
import { mayAccess } from "../auth/kube.ts";
import { hubSettings, maxHubs, maxHubsPerSubject, type HubSettings } from "../config.ts";
import type { Env } from "../env.ts";
import { bookmarkLine, errorLine } from "../k8s/event.ts";
import { describeKey, hubName, type WatchKey } from "../k8s/key.ts";
import type { ListOptions, WatchOptions } from "../k8s/options.ts";
import { badRequest, failure, notFound, serviceUnavailable, statusResponse, tooLargeResourceVersion, tooOldResourceVersion } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { BATCH_PROTOCOL, parseAck } from "../k8s/websocket.ts";
import { logger, type Log } from "../log.ts";
import { upstreamFor } from "../upstream.ts";
import { AccessGuard } from "./access.ts";
import type { CachedObject } from "./cache.ts";
import { Fanout, gatherMs } from "./fanout.ts";
import { Feed, type Freshness } from "./feed.ts";
import { Lifecycle } from "./lifecycle.ts";
import { listBody } from "./list.ts";
import { AHEAD_WAIT_MS, listPage } from "./listing.ts";
import { SnapshotStore } from "./pages.ts";
import { UpstreamError } from "./reflector.ts";
import { readHubRequest, type HubRequest } from "./request.ts";
import { HubQuotas } from "./quotas.ts";
import { HubStorage } from "./storage.ts";
import { CLOSE, HttpSink, LineBatch, Subscriber, WebSocketSink, type Sink } from "./subscriber.ts";

/** Snapshots kept for paged lists: continue tokens older than this, or than the last few, get 410. */
const SNAPSHOTS_KEPT = 4;
const SNAPSHOT_TTL_MS = 5 * 60_000;
/** How long a request waits for a hub's first upstream list before answering 503. */
const SYNC_TIMEOUT_MS = 10_000;

/**
 * The extensions the relay agrees to on a watch WebSocket: none. Left unset, workerd accepts the
 * permessage-deflate every browser (and Node's `ws`) offers, and then deflates every message for
 * every subscriber separately, which costs more than the send itself and undoes serialising
 * once; the API server does not compress watch WebSockets either. workerd takes an agreement
 * that names no extension it knows as "no compression" and sends no header.
 */
const NO_EXTENSIONS = "identity";

/** The largest message a subscriber may send: ACKs are a few dozen bytes. */
const MAX_CLIENT_MESSAGE = 4096;

/** Close codes a peer may report but no endpoint may send (RFC 6455 §7.4.1). */
const RESERVED_CLOSE_CODES = new Set([1005, 1006, 1015]);

interface Attachment {
  kwr: { subscriber: number };
}

export class WatchHub extends DurableObject<Env> {
  readonly #settings: HubSettings;
  readonly #storage: HubStorage;
  readonly #sockets = new Map<WebSocket, Subscriber>();
  readonly #snapshots = new SnapshotStore(SNAPSHOTS_KEPT, SNAPSHOT_TTL_MS);
  #feed: Feed | undefined;
  #fanout: Fanout | undefined;
  #quotas: HubQuotas | undefined;
  #guard: AccessGuard | undefined;
  #lifecycle: Lifecycle | undefined;
  #log: Log = logger({ hub: "(unopened)" });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#settings = hubSettings(env);
    this.#storage = new HubStorage(ctx.storage);
  }

  override async fetch(request: Request): Promise<Response> {
    const hubRequest = readHubRequest(request);
    if (!hubRequest) return statusResponse(badRequest("a hub is reached through the relay's Kubernetes API paths"));
    const parts = this.#open(hubRequest.key);
    try {
      return await this.#serve(request, hubRequest, parts);
    } finally {
      // Served or refused, this request may have started the upstream watch.
      parts.lifecycle.settle();
    }
  }

  async #serve(request: Request, hubRequest: HubRequest, parts: Parts): Promise<Response> {
    const { feed, quotas } = parts;
    // Each hub that watches costs the cluster a watch: it needs a share of the cluster's quota first.
    if (!feed.watching) {
      const refused = await quotas.admitHub(hubRequest.subject);
      if (refused) return statusResponse(refused);
    }
    try {
      await withTimeout(feed.synced(freshnessFor(hubRequest)), SYNC_TIMEOUT_MS);
    } catch (e) {
      return statusResponse(unavailable(e));
    }
    switch (hubRequest.verb) {
      case "list":
        return this.#list(feed, hubRequest.key, hubRequest.options);
      case "get":
        return this.#get(feed, hubRequest.key, hubRequest.name);
      case "watch":
        return this.#watch(request, hubRequest, parts);
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const subscriber = this.#sockets.get(ws);
    if (!subscriber) return this.#closeOrphan(ws);
    // The runtime has already taken the message in whole; a peer that sends more than an ACK's
    // worth is not a watch client, and is not given the chance to do it twice.
    const size = typeof message === "string" ? message.length : message.byteLength;
    if (size > MAX_CLIENT_MESSAGE) {
      this.#fanout?.detach(subscriber, { code: CLOSE.tooBig, reason: `a watch client sends only acknowledgements (at most ${MAX_CLIENT_MESSAGE} bytes a message)` });
      return;
    }
    // Anything else a client sends is ignored, as the API server ignores it.
    const received = parseAck(message);
    if (received !== undefined) {
      (subscriber.sink as WebSocketSink).acknowledge(received);
      this.#fanout?.wake();
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#socketGone(ws);
    // Hibernatable sockets do not answer a peer's close frame by themselves: without this the
    // client waits for one until its own timeout and reports an abnormal closure (1006).
    try {
      ws.close(RESERVED_CLOSE_CODES.has(code) ? CLOSE.normal : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#socketGone(ws);
  }

  /** Heartbeat while the upstream watch runs; stops it once the hub has been idle for the grace period. */
  override async alarm(): Promise<void> {
    const hub = this.#open();
    if (!hub) return;
    this.#closeOrphans();
    await hub.lifecycle.alarm();
  }

  /** Numbers for the demo page and tests: who is here, and what the upstream is doing. */
  stats(): { subscribers: number; upstream: string; watching: boolean; resourceVersion: number; windowStart: number; windowEvents: number; objects: number } | undefined {
    const hub = this.#open();
    if (!hub) return undefined;
    return {
      subscribers: hub.fanout.size,
      upstream: hub.feed.upstreamState,
      watching: hub.feed.watching,
      resourceVersion: hub.feed.window.head,
      windowStart: hub.feed.window.start,
      windowEvents: hub.feed.window.size,
      objects: hub.feed.cache.size,
    };
  }

  /** The hub's parts, built on first use from the request's key or, after a restart, the stored one. */
  #open(key?: WatchKey): Parts;
  #open(): Parts | undefined;
  #open(key?: WatchKey): Parts | undefined {
    if (this.#feed && this.#fanout && this.#quotas && this.#guard && this.#lifecycle) {
      return { feed: this.#feed, fanout: this.#fanout, quotas: this.#quotas, guard: this.#guard, lifecycle: this.#lifecycle };
    }
    key ??= this.#storage.identity()?.key;
    if (!key) return undefined;
    const upstream = upstreamFor(this.env, key.cluster);
    if (!upstream) throw new Error(`cluster "${key.cluster}" is not configured (UPSTREAM_URL or CLUSTERS)`);
    const log = (this.#log = logger({ hub: describeKey(key) }));
    const feed = new Feed(key, this.#storage, upstream, { ...this.#settings, coalesceMs: () => gatherMs(this.#fanout?.size ?? 0) }, {
      published: () => this.#fanout?.publish(),
      reset: (start) => this.#fanout?.expireAll(start),
    }, log);
    const fanout = new Fanout(
      {
        window: feed.window,
        bookmark: (rv, end) => bookmarkLine(feed.identity?.kind ?? "", feed.identity?.apiVersion ?? "", rv, end),
      },
      { budget: this.#settings.subscriberBudget },
      log,
    );
    const quotas = new HubQuotas(this.env.QUOTA, key.cluster, hubName(key), { maxHubs: maxHubs(this.env, key.cluster), maxHubsPerSubject: maxHubsPerSubject(this.env, key.cluster), maxPerSubject: this.#settings.maxSubscriptionsPerSubject }, log);
    const guard = new AccessGuard((token, access) => mayAccess(upstream, token, access), this.#settings.authRecheckMs, (subscriber, status) => fanout.fail(subscriber, status, closeFor(status)), log);
    const storage = this.ctx.storage;
    const lifecycle = new Lifecycle(
      {
        upstream: feed,
        subscribers: () => fanout.size,
        bookmarks: () => fanout.bookmarks(),
        quotas,
        alarm: { get: () => storage.getAlarm(), set: (at) => storage.setAlarm(at) },
      },
      this.#settings,
      log,
    );
    fanout.onDetach = (subscriber) => {
      guard.remove(subscriber);
      if (subscriber.options.grant) quotas.releaseSubscriber(subscriber.options.grant.subject);
      lifecycle.settle();
    };
    this.#feed = feed;
    this.#fanout = fanout;
    this.#quotas = quotas;
    this.#guard = guard;
    this.#lifecycle = lifecycle;
    this.#closeOrphans();
    return { feed, fanout, quotas, guard, lifecycle };
  }

  async #list(feed: Feed, key: WatchKey, options: ListOptions): Promise<Response> {
    const identity = feed.identity!;
    const source = { current: () => ({ rv: feed.window.head, objects: feed.cache.snapshot() }), waitFor: (rv: number, ms: number) => feed.waitFor(rv, ms), snapshots: this.#snapshots };
    const listed = await listPage(source, options, Date.now());
    if (!listed.ok) return statusResponse(listed.status);
    const result = listed.value;
    const body = listBody(
      {
        listKind: identity.listKind,
        apiVersion: identity.apiVersion,
        resourceVersion: result.rv,
        continue: result.continue,
        // As the API server: an estimate of what is left, only when nothing is filtered out.
        remainingItemCount: key.labelSelector || key.fieldSelector ? undefined : result.remaining,
      },
      result.objects,
    );
    return new Response(body, { headers: { "content-type": "application/json", "cache-control": "no-cache, private" } });
  }

  #get(feed: Feed, key: WatchKey, name: string): Response {
    const wanted = key.namespace === undefined ? name : `${key.namespace}/${name}`;
    const found = findByKey(feed.cache.snapshot(), wanted);
    if (!found) return statusResponse(notFound(key.resource, name, key.group));
    return new Response(found.json + "\n", { headers: { "content-type": "application/json", "cache-control": "no-cache, private" } });
  }

  async #watch(request: Request, hubRequest: Extract<HubRequest, { verb: "watch" }>, { feed, fanout, quotas, guard }: Parts): Promise<Response> {
    const options = hubRequest.options;
    const requested = options.resourceVersion;
    // Ahead of the hub: wait a little for it, as the watch cache does, then say so.
    const reached = requested.kind !== "exact" || (await feed.waitFor(requested.rv, AHEAD_WAIT_MS));
    const fromState = requested.kind !== "exact" || options.sendInitialEvents === true;
    const position = fromState ? feed.window.head : requested.kind === "exact" ? requested.rv : 0;
    const failed = !reached
      ? tooLargeResourceVersion(position, feed.window.head)
      : !fromState && position < feed.window.start
        ? tooOldResourceVersion(position, feed.window.start)
        : undefined;
    const websocket = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const grant = hubRequest.grant;
    if (!failed && grant) {
      const refused = await quotas.admitSubscriber(grant.subject);
      if (refused) return statusResponse(refused);
    }

    let sink: Sink;
    let response: Response;
    let subscriber: Subscriber | undefined;
    if (websocket) {
      const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
      this.ctx.acceptWebSocket(server);
      sink = new WebSocketSink(server, hubRequest.protocol === BATCH_PROTOCOL);
      const headers: Record<string, string> = { "sec-websocket-extensions": NO_EXTENSIONS };
      if (hubRequest.protocol) headers["sec-websocket-protocol"] = hubRequest.protocol;
      response = new Response(null, { status: 101, webSocket: client, headers });
    } else {
      const http = new HttpSink(
        () => subscriber && fanout.detach(subscriber),
        () => fanout.wake(),
      );
      sink = http;
      response = new Response(http.body, {
        headers: { "content-type": "application/json", "cache-control": "no-cache, private", "content-encoding": "identity" },
      });
    }
    if (failed) {
      // Too old or too new: 200, one ERROR event, then the end, as the API server answers.
      sink.send(LineBatch.of(errorLine(failed)));
      sink.close({ code: CLOSE.normal, reason: failed.reason === "Expired" ? "resourceVersion expired" : "resourceVersion too large" });
      return response;
    }
    subscriber = new Subscriber(sink, position, {
      bookmarks: options.allowWatchBookmarks,
      initialEventsEnd: options.sendInitialEvents === true && options.allowWatchBookmarks,
      deadline: deadlineOf(options),
      grant,
    }, fromState ? feed.cache.snapshot() : undefined);
    if (grant) guard.add(subscriber, grant);
    if (sink instanceof WebSocketSink) {
      sink.socket.serializeAttachment({ kwr: { subscriber: subscriber.id } } satisfies Attachment);
      this.#sockets.set(sink.socket, subscriber);
    }
    feed.start();
    fanout.attach(subscriber);
    return response;
  }

  #socketGone(ws: WebSocket): void {
    const subscriber = this.#sockets.get(ws);
    this.#sockets.delete(ws);
    if (!subscriber) return;
    (subscriber.sink as WebSocketSink).markClosed();
    this.#fanout?.detach(subscriber);
  }

  /** Sockets that outlived an earlier instance (eviction): their positions are unknown, so they must resume. */
  #closeOrphans(): void {
    for (const ws of this.ctx.getWebSockets()) if (!this.#sockets.has(ws)) this.#closeOrphan(ws);
  }

  #closeOrphan(ws: WebSocket): void {
    try {
      ws.close(CLOSE.restarted, "the hub restarted; resume from your last resourceVersion");
    } catch {
      // already closing
    }
  }
}

interface Parts {
  feed: Feed;
  fanout: Fanout;
  quotas: HubQuotas;
  guard: AccessGuard;
  lifecycle: Lifecycle;
}

/**
 * What a request needs of the hub's state, by the API server's rules: `resourceVersion` unset
 * is a consistent read for lists, gets and watch-lists; `0` is "any" (the live cache); a resume
 * from `N` needs only the window.
 */
function freshnessFor(request: HubRequest): Freshness {
  const rv = request.verb === "get" ? { kind: "unset" as const } : request.options.resourceVersion;
  if (request.verb === "watch") {
    if (rv.kind === "exact" && request.options.sendInitialEvents !== true) return "stored";
    return rv.kind === "unset" && request.options.sendInitialEvents === true ? "current" : "live";
  }
  return rv.kind === "unset" ? "current" : "live";
}

/** The WebSocket close code for a stream ended by an access decision. */
function closeFor(status: Status): { code: number; reason: string } {
  if (status.code === 401) return { code: CLOSE.unauthorized, reason: "credentials expired or no longer accepted" };
  if (status.code === 403) return { code: CLOSE.forbidden, reason: "access revoked" };
  return { code: CLOSE.unverified, reason: "access could not be re-verified" };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamError(0, `the upstream API server has not answered within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => timer !== undefined && clearTimeout(timer));
}

/** The Status a subscriber gets when the hub cannot serve it because of the upstream. */
function unavailable(error: unknown): Status {
  if (error instanceof UpstreamError && [400, 404, 422].includes(error.status)) {
    return failure(error.status, error.status === 404 ? "NotFound" : error.status === 422 ? "Invalid" : "BadRequest", error.message);
  }
  const message = error instanceof Error ? error.message : String(error);
  return serviceUnavailable(`the relay cannot reach the upstream API server: ${message}`, 5);
}

/** `timeoutSeconds`, or the API server's default: a random time in [30, 60) minutes. */
function deadlineOf(options: WatchOptions): number {
  const seconds = options.timeoutSeconds ?? 1800 + Math.floor(Math.random() * 1800);
  return Date.now() + seconds * 1000;
}

/** Binary search of a key-ordered snapshot. */
function findByKey(objects: readonly CachedObject[], key: string): CachedObject | undefined {
  let lo = 0;
  let hi = objects.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = (objects[mid] as CachedObject).key;
    if (k === key) return objects[mid];
    if (k < key) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}
