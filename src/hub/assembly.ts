/**
 * @module
 * A hub's parts, wired together: the feed (reflector, cache, window, storage), the fan-out, the
 * quota claims, the access guard, the lifecycle, the socket registry, the reader lists and
 * gets are served from, and the reporter of the hub's numbers to the metrics registry, all on
 * one clock. Built once per Durable Object instance, from the request's key or the stored one
 * after a restart.
 */
import { maxHubs, maxHubsPerSubject, subscribersPerHub, type HubSettings } from "../config.ts";
import { bookmarkLine } from "../k8s/event.ts";
import { describeKey, hubName, type WatchKey } from "../k8s/key.ts";
import { MEMBERS_BEHIND_ANNOTATION, membersOf } from "../k8s/members.ts";
import type { Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";
import { upstreamFor } from "../upstream.ts";
import { CLOSE } from "../k8s/websocket.ts";
import { HubReporter } from "../metrics/hub-reporter.ts";
import { REGISTRY, type MetricsRegistry } from "../metrics/registry.ts";
import type { Quota } from "../quota/quota.ts";
import type { Vars } from "../vars.ts";
import { AccessGuard, clusterCheck } from "./access.ts";
import { realClock, type Clock } from "./clock.ts";
import { Fanout, inFlightLimit, type InitialSliceBatch } from "./fanout.ts";
import { Gather, gatherMs, replicaGather } from "./gather.ts";
import { Feed } from "./feed.ts";
import { Lifecycle } from "./lifecycle.ts";
import { isolateMemory } from "./memory.ts";
import { HubQuotas } from "./quotas.ts";
import { Replicas, RootReports, type ReplicaReport, type ReplicaRole, type ReplicaState } from "./replicas.ts";
import { rootUpstream, type HubByName } from "./root-upstream.ts";
import { MergePoints } from "./merge-points.ts";
import { mergedUpstream, type MergedUpstream } from "./merged-upstream.ts";
import type { Reader } from "./reads.ts";
import { HubSockets } from "./sockets.ts";
import type { HubStorage } from "./storage.ts";
import type { CloseReason, Subscriber } from "./subscriber.ts";
import { ViewIndexBuilds } from "./view-index-builds.ts";
import { Views } from "./views.ts";

/** The bindings a hub's parts use: the variables, the quota and metrics objects they talk to. */
export interface HubEnv extends Vars {
  QUOTA: DurableObjectNamespace<Quota>;
  METRICS: DurableObjectNamespace<MetricsRegistry>;
}

/** Another hub by name (a replica's root, a merged key's members): what a replica or a merge hub asks of it. */
export type TreeHub = (name: string) => ReturnType<HubByName> & {
  replicaReport(report: ReplicaReport): Promise<unknown>;
  /** What it is doing: a merge hub reads whether a member's hub can read its cluster (`upstream`). */
  stats(): Promise<{ upstream: string } | undefined>;
  /** Where a merge hub's consistent read waits for a member to be (`WatchHub.readPoint`). */
  readPoint(): Promise<number | undefined>;
};

export interface Parts {
  /** The time every part reads and sets its timers on. */
  clock: Clock;
  feed: Feed;
  fanout: Fanout;
  /** The live views open on the hub's collection. */
  views: Views;
  quotas: HubQuotas;
  /** The quota on indexes built for views' orders. */
  indexBuilds: ViewIndexBuilds;
  guard: AccessGuard;
  lifecycle: Lifecycle;
  sockets: HubSockets;
  reader: Reader;
  metrics: HubReporter;
  /** A root's replicas (absent on a replica: a tree is one level deep). */
  replicas: Replicas | undefined;
  /** A merged key's upstream: its members, and which are behind. */
  merged: MergedUpstream | undefined;
}

export interface HubContext {
  state: DurableObjectState;
  env: HubEnv;
  /** The hubs of the key's tree, reached by name: the Durable Object's own namespace. */
  hubs: TreeHub;
  settings: HubSettings;
  storage: HubStorage;
  log: Log;
  /** Delete the hub's stored state and these parts with it: the next request starts afresh. */
  reclaim: () => Promise<void>;
}

/** `replica`: this hub is one of the key's replicas, which watches the key's root instead of the upstream. */
export function assemble({ state, env, hubs, settings, storage, log, reclaim }: HubContext, key: WatchKey, replica: ReplicaRole | undefined): Parts {
  const root = hubName(key);
  const clock = realClock;
  const members = membersOf(key.cluster);
  // A merged key's hub reads its members' hubs (DESIGN.md, "One watch across clusters"); its head is the feed's, made below.
  const memberState = async (name: string) => (await hubs(name).stats())?.upstream;
  const merged =
    members && !replica
      ? mergedUpstream(
          key,
          members,
          root,
          { byName: hubs, state: memberState, point: (name) => hubs(name).readPoint() },
          new MergePoints(() => storage.sql),
          { head: () => feed.window.head, held: (prefix, after, limit) => feed.collection.named(prefix, after, limit) },
          clock,
        )
      : undefined;
  const upstream = replica ? rootUpstream(key, root, replica.name, hubs) : (merged ?? upstreamFor(env, key.cluster));
  if (!upstream) throw new Error(`cluster "${key.cluster}" is not configured (UPSTREAM_URL or CLUSTERS)`);
  const replicas = replica ? undefined : new Replicas(root, subscribersPerHub(env, key.cluster), () => clock.now());
  const memory = isolateMemory<InitialSliceBatch>(settings.memory);
  const metrics = new HubReporter(env.METRICS.getByName(REGISTRY), { hub: replica?.name ?? root, key: describeKey(key), cluster: key.cluster, root: replica ? root : undefined }, log, clock);
  let fanout: Fanout | undefined;
  let views: Views | undefined;
  const feed = new Feed(
    key,
    storage,
    upstream,
    {
      ...settings,
      replica,
      // A tree gathers once, at its root, as one hub of all its clients would (its replicas
      // counted by what they serve, not as subscribers): each replica commits what the root sent as it comes.
      // A merge hub reads what its members' hubs gathered, each with its lateness extra: it gathers its base, and takes no extra of its own.
      gather: replica ? replicaGather() : new Gather(() => gatherMs((fanout?.clients ?? 0) + (replicas?.subscribers() ?? 0)), { lateExtra: !members }),
      // A merged key's list gives all its objects one number, which a delta's base could not tell apart (`k8s/delta.ts`): its events go whole.
      wantDeltas: () => !members && (fanout?.wantsDeltas ?? false),
      wantRows: () => views?.active ?? false,
      observer: metrics.upstream,
      pages: memory.pages,
    },
    {
      published: (events, rows) => {
        metrics.committed(events.length, events.at(-1)!.rv);
        fanout?.publish();
        if (rows) views?.changed(rows);
      },
      reset: (start) => {
        fanout?.expireAll(start);
        views?.reset();
      },
      upstreamChanged: () => metrics.changed(),
    },
    log,
    clock,
    memory.lines.tail(),
  );
  const out = new Fanout(
    { window: feed.window, bookmark: (rv, end) => bookmarkLine(feed.identity?.kind ?? "", feed.identity?.apiVersion ?? "", rv, end, membersBehind(merged)) },
    { budget: settings.subscriberBudget, slices: memory.slices },
    log,
    clock,
  );
  fanout = out;
  views = new Views(
    { rows: feed.viewRows, json: (key) => feed.collection.get(key)?.json, head: () => feed.window.head },
    key,
    inFlightLimit(settings.subscriberBudget),
    (subscriber, status) => out.fail(subscriber, status, { code: CLOSE.normal, reason: "the view failed" }),
    log,
  );
  views.onSent = (subscriber, messages) => metrics.sent(subscriber.sink.transport, 1, messages);
  out.onWake = () => views?.wake();
  // The members behind have changed: the subscribers that take bookmarks are told once the hub has the merged watch's bookmark.
  if (merged) merged.onBehindChanged = (rv) => void feed.waitFor(rv, BEHIND_BOOKMARK_WAIT_MS).then((reached) => reached && out.bookmarks());
  out.onProgressWanted = (since) => feed.progress(since);
  const lagBytes = (subscriber: Subscriber) => subscriber.sink.backlog() + feed.window.bytesAfter(subscriber.position);
  out.onSent = (subscriber, events, messages, compressed) => metrics.sent(subscriber.sink.transport, events, messages, compressed);
  out.onCutOff = (subscriber, reason) =>
    metrics.cutOff(subscriber.sink.transport, reason, subscriber.options.replica === undefined ? { position: subscriber.position, bytes: lagBytes(subscriber) } : undefined);
  metrics.view = {
    snapshot: () => ({
      upstream: feed.upstreamState,
      watching: feed.watching,
      window: { start: feed.window.start, head: feed.window.head, events: feed.window.size, bytes: feed.window.bytes },
      objects: feed.collection.size,
      views: views?.size ?? 0,
      storageBytes: storage.bytes,
      memoryBytes: feed.window.heldBytes,
      replicas: replicas && replicaLags(replicas.live()),
    }),
    *subscribers() {
      for (const s of out.subscribers) if (s.options.replica === undefined) yield { transport: s.sink.transport, position: s.position, lagBytes: lagBytes(s) };
    },
  };
  // Each replica's lag: how long after the root it committed what it last reported committing,
  // or, when more, how long the oldest event its watch has not been sent yet has waited (a
  // replica that stopped taking its stream, found now rather than at its next report).
  const replicaLags = (live: ReplicaState[]) => {
    const unsent = new Map<string, number>();
    for (const s of out.subscribers) {
      const name = s.options.replica;
      if (name !== undefined) unsent.set(name, Math.max(unsent.get(name) ?? 0, metrics.lagSeconds(s.position)));
    }
    return live.map((r) => ({ hub: r.name, region: r.region, subscribers: r.subscribers, lagSeconds: Math.max(r.commitLagSeconds, unsent.get(r.name) ?? 0) }));
  };
  const reports = replica
    ? new RootReports(
        (report) => hubs(root).replicaReport(report),
        () => ({ name: replica.name, region: replica.region, subscribers: out.clients, head: feed.window.head, committed: metrics.lastCommit() }),
        (ms, run) => clock.after(ms, run),
      )
    : undefined;
  const limits = { maxHubs: maxHubs(env, key.cluster), maxHubsPerSubject: maxHubsPerSubject(env, key.cluster), maxPerSubject: settings.maxSubscriptionsPerSubject };
  // Each hub of a tree holds its own share of a subject's subscriptions.
  const quotas = new HubQuotas(env.QUOTA, key.cluster, replica?.name ?? root, limits, log, (quota) => metrics.quotaRefused(quota));
  const indexBuilds = new ViewIndexBuilds(env.QUOTA, replica?.name ?? root, settings.viewIndexBuilds, log, (quota) => metrics.quotaRefused(quota));
  const guard = new AccessGuard(
    clusterCheck((cluster) => upstreamFor(env, cluster)),
    settings.authRecheckMs,
    (subscriber, status) => out.fail(subscriber, status, closeFor(status)),
    log,
    clock,
  );
  const lifecycle = new Lifecycle(
    {
      upstream: {
        get watching() {
          return feed.watching;
        },
        get listingSince() {
          return feed.listing?.since;
        },
        start: () => feed.start(),
        stop: () => feed.stop(),
        renew: () => feed.renew(settings.watchRenewMs),
      },
      subscribers: () => out.size,
      bookmarks: () => out.bookmarks(),
      keepAlive: () => out.keepAlive(),
      quotas,
      metrics,
      views: {
        retireIndexes: () => {
          const dropped = views?.retireIndexes(settings.viewIndexIdleMs) ?? [];
          if (dropped.length > 0) log("dropped indexes of views' orders no view has read through for VIEW_INDEX_IDLE_SECONDS", { indexes: dropped });
        },
      },
      tree: reports,
      storage: {
        get holdsState() {
          return storage.holdsState;
        },
        reclaim,
      },
      alarm: { get: () => state.storage.getAlarm(), set: (at) => state.storage.setAlarm(at) },
    },
    settings,
    log,
    clock,
  );
  out.onDetach = (subscriber) => {
    views?.remove(subscriber);
    guard.remove(subscriber);
    if (subscriber.options.grant) quotas.releaseSubscriber(subscriber.options.grant.subject);
    lifecycle.settle();
  };
  const reader: Reader = {
    hub: replica?.name ?? root,
    get listKind() {
      return feed.identity?.listKind ?? "";
    },
    get apiVersion() {
      return feed.identity?.apiVersion ?? "";
    },
    head: () => feed.window.head,
    waitFor: (rv, ms) => feed.waitFor(rv, ms),
    collection: feed.collection,
    snapshots: feed.snapshots,
    refuses: (cursor) => feed.refuses(cursor),
  };
  return { clock, feed, fanout: out, views, quotas, indexBuilds, guard, lifecycle, sockets: new HubSockets(out, log), reader, metrics, replicas, merged };
}

/** How long a bookmark that names the members behind waits for the hub to have the merged watch's number it is at. */
const BEHIND_BOOKMARK_WAIT_MS = 5000;

/** A merged key's BOOKMARKs name the members whose changes are not arriving now. */
function membersBehind(merged: MergedUpstream | undefined): Record<string, string> | undefined {
  const behind = merged?.behind() ?? [];
  return behind.length > 0 ? { [MEMBERS_BEHIND_ANNOTATION]: behind.join(",") } : undefined;
}

/** The WebSocket close code for a stream ended by an access decision. */
export function closeFor(status: Status): CloseReason {
  if (status.code === 401) return { code: CLOSE.unauthorized, reason: "credentials expired or no longer accepted" };
  if (status.code === 403) return { code: CLOSE.forbidden, reason: "access revoked" };
  return { code: CLOSE.unverified, reason: "access could not be re-verified" };
}
