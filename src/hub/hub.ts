/**
 * @module
 * The WatchHub Durable Object: one per watch key. Every entry point has the same shape — find
 * (or restore) the hub's parts, delegate, and log what fails — and the parts do the work: the
 * feed (reflector, cache, window, storage) keeps the upstream collection, the fan-out sends it
 * to subscribers, admission starts watches, reads serve lists and gets, the sockets module
 * handles WebSocket messages and closes, the lifecycle keeps the heartbeat and the idle stop.
 */
import { DurableObject } from "cloudflare:workers";
import { hubSettings, logLevel, type HubSettings } from "../config.ts";
import { describeKey, hubName, type WatchKey } from "../k8s/key.ts";
import { MEMBERS_BEHIND_HEADER } from "../k8s/members.ts";
import { badRequest, failure, internalError, serviceUnavailable, statusResponse } from "../k8s/status.ts";
import type { WatchOptions } from "../k8s/options.ts";
import type { Status } from "../k8s/types.ts";
import { isWebSocketUpgrade } from "../k8s/websocket.ts";
import { logger, setLogLevel, type Log } from "../log.ts";
import { admitView, admitWatch, holdsStart } from "./admission.ts";
import type { Clock } from "./clock.ts";
import { assemble, type HubEnv, type Parts } from "./assembly.ts";
import type { FirstList } from "./first-list.ts";
import { AHEAD_WAIT_MS, holdsSnapshot, serveGet, serveList, type ListCoding, type ListReader, type ListSource } from "./reads.ts";
import { ObjectTooLarge, UnconfirmedRead, UpstreamError } from "./upstream-error.ts";
import { REPLICAS_HEADER, type NamedReplica, type ReplicaReport, type ReplicaRole, type ReplicaState } from "./replicas.ts";
import { freshnessFor, heldNeeds, hubRequests, notHeld, type HubRequest } from "./request.ts";
import { HubStorage } from "./storage.ts";

/** The bindings a watch hub uses: its parts' (`HubEnv`), and its own namespace, where a replica finds its root. */
export interface WatchHubEnv extends HubEnv {
  WATCH_HUB: DurableObjectNamespace<WatchHub>;
}

export class WatchHub extends DurableObject<WatchHubEnv> {
  readonly #settings: HubSettings;
  readonly #storage: HubStorage;
  #parts: Parts | undefined;
  #log: Log = logger({ hub: "(unopened)" });

  constructor(ctx: DurableObjectState, env: WatchHubEnv) {
    super(ctx, env);
    setLogLevel(logLevel(env));
    this.#settings = hubSettings(env);
    this.#storage = new HubStorage(ctx.storage);
  }

  override async fetch(request: Request): Promise<Response> {
    const hubRequest = hubRequests.read(request);
    if (!hubRequest) return statusResponse(badRequest("a hub is reached through the relay's Kubernetes API paths"));
    // A hub not in memory is not watching: a read held here needs nothing restored or started.
    if (hubRequest.held && !this.#parts) return notHeld();
    const parts = this.#open(hubRequest.key, hubRequest.replicaOf);
    try {
      return await this.#serve(request, hubRequest, parts);
    } catch (e) {
      this.#log("request failed", { verb: hubRequest.verb, error: String(e), stack: (e as Error).stack }, "error");
      return statusResponse(internalError("the hub failed to serve the request"));
    } finally {
      // Served or refused, this request may have started the upstream watch.
      parts.lifecycle.settle();
    }
  }

  /** Heartbeat while the upstream watch runs; stops it once the hub has been idle for the grace period. */
  override async alarm(): Promise<void> {
    const parts = this.#open();
    if (!parts) return;
    try {
      await parts.lifecycle.alarm();
    } catch (e) {
      this.#log("alarm failed", { error: String(e), stack: (e as Error).stack }, "error");
      throw e; // the runtime retries a failed alarm
    }
  }

  /** Numbers for the demo page and tests: who is here, and what the upstream is doing. */
  stats():
    | {
        subscribers: number;
        views: number;
        upstream: string;
        watching: boolean;
        resourceVersion: number;
        windowStart: number;
        windowEvents: number;
        objects: number;
        storageBytes: number;
        memoryBytes: number;
        rowsWritten: number;
        /** Events committed, and events and messages sent by transport, since this instance of the hub started. */
        eventsCommitted: number;
        sent: Record<"websocket" | "http", { events: number; messages: number }>;
        /** Lists sent gzip-coded since this instance of the hub started: pages it compressed, and reads of a page another read compressed. */
        listsGzip: { compressed: number; shared: number };
        replicas: ReplicaState[];
      }
    | undefined {
    const parts = this.#open();
    if (!parts) return undefined;
    const { feed, fanout } = parts;
    const totals = parts.metrics.totals();
    return {
      subscribers: fanout.size,
      views: parts.views.size,
      upstream: feed.upstreamState,
      watching: feed.watching,
      resourceVersion: feed.window.head,
      windowStart: feed.window.start,
      windowEvents: feed.window.size,
      objects: feed.collection.size,
      storageBytes: this.#storage.bytes,
      memoryBytes: feed.window.heldBytes,
      // Since this instance of the hub started.
      rowsWritten: this.#storage.rowsWritten,
      eventsCommitted: totals.committed,
      sent: totals.sent,
      listsGzip: totals.listsGzip,
      replicas: parts.replicas?.live() ?? [],
    };
  }

  /**
   * A merge hub's consistent read asks its members' hubs this (DESIGN.md, "One watch across
   * clusters"): once this hub holds every change its cluster had committed when asked (the check
   * a read without resourceVersion makes, `Feed.synced`), the resourceVersion of its newest
   * event, which a subscriber that has been sent it has every change up to then with.
   * `undefined` when it cannot say: not watching its cluster, or the check failed.
   */
  async readPoint(): Promise<number | undefined> {
    const parts = this.#open();
    if (!parts?.feed.watching) return undefined;
    try {
      await parts.feed.synced("current");
    } catch {
      return undefined;
    }
    return parts.feed.window.last;
  }

  /** A replica's report to its root. */
  replicaReport(report: ReplicaReport): void {
    const parts = this.#open();
    parts?.replicas?.report(report, parts.metrics.commitLagSeconds(report.committed));
  }

  async #serve(request: Request, hubRequest: HubRequest, parts: Parts): Promise<Response> {
    const { feed, quotas } = parts;
    // A hot key's root sends a client's list or watch on to its replicas (DESIGN.md, "Hot keys").
    const placed = hubRequest.verb !== "get" && !hubRequest.fromReplica && !hubRequest.here;
    const replicas = placed ? parts.replicas?.placement(hubRequest.region ?? LOCAL, parts.fanout.clients) : undefined;
    if (replicas && replicas.length > 0) return placedElsewhere(replicas);
    if (hubRequest.held) {
      // A next page is read from the snapshot its token names, kept here or gone (410), however fresh the hub is.
      if (hubRequest.verb === "list" && hubRequest.options.continue) return serveList(parts.reader, hubRequest.key, hubRequest.options, listCoding(hubRequest, parts));
      const reached = heldNeeds(hubRequest);
      if (reached === undefined || !feed.holds(reached)) return notHeld();
    }
    // A replica behind a resourceVersion its tree has given out (restarting, or slow) sends the
    // request to its root, which has it, rather than answer "too large" (DESIGN.md, "Hot keys").
    const ahead = hubRequest.verb === "get" || hubRequest.verb === "view" || hubRequest.options.resourceVersion.kind !== "exact" ? undefined : hubRequest.options.resourceVersion.rv;
    if (hubRequest.replicaOf && ahead !== undefined && ahead > feed.window.head) {
      feed.start();
      if (!(await feed.waitFor(ahead, AHEAD_WAIT_MS))) return placedElsewhere([{ name: hubName(hubRequest.key), subscribers: 0 }]);
    }
    // Each hub that watches costs the cluster a watch: it needs a share of the cluster's quota
    // first. A replica watches its root, not the cluster.
    if (!feed.watching && !hubRequest.replicaOf) {
      const refused = await quotas.admitHub(hubRequest.subject);
      if (refused) return statusResponse(refused);
    }
    const from = hubRequest.verb === "watch" && !hubRequest.replicaOf ? resumedFrom(hubRequest.options) : undefined;
    if (from !== undefined) feed.listFirstAt(from);
    const need = freshnessFor(hubRequest);
    // A merged key's consistent read needs its own state live, whole, and then its members' clusters as of now (below).
    const merged = need === "current" ? parts.merged : undefined;
    // A list is served by the hub's first list as that is staged; anything else waits for the hub
    // to be ready: while it holds no collection yet, for as long as its first list goes on.
    let first: FirstList | undefined;
    try {
      const ready = hubRequest.verb === "list" && !merged ? feed.listable(need) : feed.synced(merged ? "live" : need).then(() => undefined);
      first = await withTimeout(ready, this.#settings.syncWaitMs, parts.clock, () => (feed.identity === undefined ? feed.listing?.at : undefined));
    } catch (e) {
      const now = parts.clock.now();
      const listing = feed.listing;
      if (e instanceof SyncTimeout && listing) return statusResponse(stillListing(listing, now));
      return statusResponse(unavailable(e, feed.held, now));
    }
    // Every change each member's cluster had when the read arrived, once the merged watch has it
    // (`MergedUpstream.current`); a member that cannot say so within its deadline is named behind.
    let late: string[] = [];
    if (merged) {
      const point = await merged.current();
      late = point.late;
      if (!(await feed.waitFor(point.rv, AHEAD_WAIT_MS))) return statusResponse(notReached(point.rv));
    }
    const reader = first ? first.reader(parts.reader.hub, feed.snapshots, (ms) => new Promise((resolve) => parts.clock.after(ms, resolve))) : parts.reader;
    // Nor does a replica answer 410 for what its root holds: a resume from before the replica was
    // made (or from past its window), or a list's snapshot its root gave out (a continue token).
    if (hubRequest.replicaOf && !holds(hubRequest, parts, reader)) return placedElsewhere([{ name: hubName(hubRequest.key), subscribers: 0 }]);
    const response = await this.#answer(request, hubRequest, parts, reader);
    // A merged key's list or HTTP watch names the members whose changes are not arriving now.
    const behind = [...new Set([...(parts.merged?.behind() ?? []), ...late])].sort();
    if (behind.length === 0 || response.webSocket) return response;
    const headers = new Headers(response.headers);
    headers.set(MEMBERS_BEHIND_HEADER, behind.join(","));
    return new Response(response.body, { status: response.status, headers });
  }

  #answer(request: Request, hubRequest: HubRequest, parts: Parts, reader: ListReader): Promise<Response> | Response {
    switch (hubRequest.verb) {
      case "list":
        return serveList(reader, hubRequest.key, hubRequest.options, listCoding(hubRequest, parts));
      case "get":
        return serveGet(parts.reader, hubRequest.key, hubRequest.namespace, hubRequest.name);
      case "watch":
        return admitWatch(parts, hubRequest, isWebSocketUpgrade(request));
      case "view":
        return admitView(parts, hubRequest, isWebSocketUpgrade(request));
    }
  }

  /** The hub's parts, built on first use from the request's key (and role) or, after a restart, the stored ones. */
  #open(key: WatchKey, replica: ReplicaRole | undefined): Parts;
  #open(): Parts | undefined;
  #open(key?: WatchKey, replica?: ReplicaRole): Parts | undefined {
    if (this.#parts) return this.#parts;
    const stored = this.#storage.identity();
    key ??= stored?.key;
    replica ??= stored?.replica;
    if (!key) return undefined;
    this.#log = logger({ hub: describeKey(key), ...(replica ? { replica: replica.name } : {}) });
    const reclaim = async () => {
      await this.#storage.clear();
      this.#parts = undefined;
    };
    this.#parts = assemble(
      { state: this.ctx, env: this.env, hubs: (name) => this.env.WATCH_HUB.getByName(name), settings: this.#settings, storage: this.#storage, log: this.#log, reclaim },
      key,
      replica,
    );
    return this.#parts;
  }
}

/** How a list is written: gzip-coded when the Worker says the client takes it, its compressions counted. */
function listCoding(request: Extract<HubRequest, { verb: "list" }>, parts: Parts): ListCoding {
  return { gzip: request.gzip === true, compressed: (shared) => parts.metrics.listCompressed(shared) };
}

/** The region of a request the Worker placed nowhere (locally, without Cloudflare's `cf`). */
const LOCAL = "local";

/** Whether the hub holds where a request starts (a watch's resume point, a list's snapshot in `lists`), rather than answer it 410. */
function holds(request: HubRequest, { feed }: Parts, lists: ListSource): boolean {
  if (request.verb === "watch") return holdsStart(request.options, feed.window, feed.horizon);
  if (request.verb === "list") return holdsSnapshot(lists, request.options);
  return true;
}

/** A root's answer that a request goes to one of `replicas` instead: the Worker sends it there. */
function placedElsewhere(replicas: NamedReplica[]): Response {
  return new Response(null, { status: 307, headers: { [REPLICAS_HEADER]: JSON.stringify(replicas) } });
}

/** The resourceVersion a watch resumes from: after it exactly, with `compact` its net changes since. */
function resumedFrom(options: WatchOptions): number | undefined {
  return options.resourceVersion.kind === "exact" && options.sendInitialEvents !== true ? options.resourceVersion.rv : undefined;
}

/** A request's wait for the hub to sync ran out. */
class SyncTimeout extends UpstreamError {}

/**
 * `promise`, or a `SyncTimeout` once it has not settled for `ms`; while `progressed` says when
 * the wait last went forward (a first list taking objects), `ms` from then.
 */
function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock, progressed: () => number | undefined): Promise<T> {
  let cancel = () => {};
  const timeout = new Promise<never>((_, reject) => {
    const check = (after: number) => {
      cancel = clock.after(after, () => {
        const since = clock.now() - (progressed() ?? Number.NEGATIVE_INFINITY);
        if (since < ms) check(ms - since);
        else reject(new SyncTimeout(0, `the upstream API server has not answered within ${ms / 1000} s`));
      });
    };
    check(ms);
  });
  return Promise.race([promise, timeout]).finally(() => cancel());
}

/** A merged key's consistent read whose members' changes the merge hub has not committed in time. */
function notReached(rv: number): Status {
  return serviceUnavailable(
    `the merged key has not reached resourceVersion ${rv}, where it has every change its members' clusters had when the read arrived, within ${AHEAD_WAIT_MS / 1000} s; add resourceVersion=0 to read its state as it is`,
    1,
  );
}

/** A relist, or a first list whose upstream sends nothing for a while: the hub is getting there, and says how far. */
function stillListing(listing: { objects: number; since: number }, now: number): Status {
  const seconds = Math.round((now - listing.since) / 1000);
  return serviceUnavailable(
    `the relay is still listing this collection from the upstream (${listing.objects.toLocaleString("en")} objects in ${seconds} s so far) and serves it once the list is complete; try again shortly`,
    5,
  );
}

/**
 * The Status a subscriber gets when the hub cannot serve it because of the upstream: what the
 * upstream said where it is about the request, or that the relay's own credentials are refused,
 * or that the upstream is unreachable (and, when the hub holds the collection, how to read that).
 */
function unavailable(error: unknown, held: { rv: number; since: number } | undefined, now: number): Status {
  if (error instanceof UnconfirmedRead) return serviceUnavailable(`${error.message}; add resourceVersion=0 to read the relay's state as it is`, Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  if (error instanceof ObjectTooLarge) {
    const cached = held ? `; its state as of resourceVersion ${held.rv}, before that object, is served with resourceVersion=0` : "";
    return serviceUnavailable(`${error.message}${cached}`, 30);
  }
  if (error instanceof UpstreamError && [400, 404, 422].includes(error.status)) {
    return failure(error.status, error.status === 404 ? "NotFound" : error.status === 422 ? "Invalid" : "BadRequest", error.message);
  }
  if (error instanceof UpstreamError && error.status === 403) {
    return failure(403, "Forbidden", `the upstream API server refuses the relay's own identity for this collection (give it list and watch there; deploy/ has the RBAC): ${error.message}`);
  }
  if (error instanceof UpstreamError && error.status === 401) {
    return serviceUnavailable(`the upstream API server does not accept the relay's own credentials (UPSTREAM_TOKEN, or the cluster's tokenSecret): ${error.message}`, 30);
  }
  const message = error instanceof Error ? error.message : String(error);
  const cached = held
    ? `; the relay holds this collection as of resourceVersion ${held.rv}, in step with the upstream until ${Math.round((now - held.since) / 1000)} s ago: add resourceVersion=0 to read it`
    : "";
  return serviceUnavailable(`the relay cannot reach the upstream API server: ${message}${cached}`, 5);
}
