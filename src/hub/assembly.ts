/**
 * @module
 * A hub's parts, wired together: the feed (reflector, cache, window, storage), the fan-out, the
 * quota claims, the access guard, the lifecycle, the socket registry, the reader lists and
 * gets are served from, and the reporter of the hub's numbers to the metrics registry, all on
 * one clock. Built once per Durable Object instance, from the request's key or the stored one
 * after a restart.
 */
import { mayAccess } from "../auth/kube.ts";
import { maxHubs, maxHubsPerSubject, type HubSettings } from "../config.ts";
import { bookmarkLine } from "../k8s/event.ts";
import { describeKey, hubName, type WatchKey } from "../k8s/key.ts";
import type { Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";
import { upstreamFor } from "../upstream.ts";
import { CLOSE } from "../k8s/websocket.ts";
import { HubReporter } from "../metrics/hub-reporter.ts";
import { REGISTRY, type MetricsRegistry } from "../metrics/registry.ts";
import type { Quota } from "../quota/quota.ts";
import type { Vars } from "../vars.ts";
import { AccessGuard } from "./access.ts";
import { realClock, type Clock } from "./clock.ts";
import { Fanout, type InitialSliceBatch } from "./fanout.ts";
import { gatherMs } from "./gather.ts";
import { Feed } from "./feed.ts";
import { Lifecycle } from "./lifecycle.ts";
import { isolateMemory } from "./memory.ts";
import { HubQuotas } from "./quotas.ts";
import type { Reader } from "./reads.ts";
import { HubSockets } from "./sockets.ts";
import type { HubStorage } from "./storage.ts";
import type { CloseReason, Subscriber } from "./subscriber.ts";

/** The bindings a hub uses: the variables, and the quota and metrics objects it talks to. */
export interface HubEnv extends Vars {
  QUOTA: DurableObjectNamespace<Quota>;
  METRICS: DurableObjectNamespace<MetricsRegistry>;
}

export interface Parts {
  /** The time every part reads and sets its timers on. */
  clock: Clock;
  feed: Feed;
  fanout: Fanout;
  quotas: HubQuotas;
  guard: AccessGuard;
  lifecycle: Lifecycle;
  sockets: HubSockets;
  reader: Reader;
  metrics: HubReporter;
}

export interface HubContext {
  state: DurableObjectState;
  env: HubEnv;
  settings: HubSettings;
  storage: HubStorage;
  log: Log;
  /** Delete the hub's stored state and these parts with it: the next request starts afresh. */
  reclaim: () => Promise<void>;
}

export function assemble({ state, env, settings, storage, log, reclaim }: HubContext, key: WatchKey): Parts {
  const upstream = upstreamFor(env, key.cluster);
  if (!upstream) throw new Error(`cluster "${key.cluster}" is not configured (UPSTREAM_URL or CLUSTERS)`);
  const clock = realClock;
  const memory = isolateMemory<InitialSliceBatch>(settings.memory);
  const metrics = new HubReporter(env.METRICS.getByName(REGISTRY), { hub: hubName(key), key: describeKey(key), cluster: key.cluster }, log);
  let fanout: Fanout | undefined;
  const feed = new Feed(
    key,
    storage,
    upstream,
    { ...settings, gatherBaseMs: () => gatherMs(fanout?.size ?? 0), wantDeltas: () => fanout?.wantsDeltas ?? false, observer: metrics.upstream },
    {
      published: (events) => {
        metrics.committed(events.length, feed.window.head);
        fanout?.publish();
      },
      reset: (start) => fanout?.expireAll(start),
    },
    log,
    clock,
    memory.lines.tail(),
  );
  const out = new Fanout(
    { window: feed.window, bookmark: (rv, end) => bookmarkLine(feed.identity?.kind ?? "", feed.identity?.apiVersion ?? "", rv, end) },
    { budget: settings.subscriberBudget, slices: memory.slices },
    log,
    clock,
  );
  fanout = out;
  const lagBytes = (subscriber: Subscriber) => subscriber.sink.backlog() + feed.window.bytesAfter(subscriber.position);
  out.onSent = (subscriber, events, messages) => metrics.sent(subscriber.sink.transport, events, messages);
  out.onCutOff = (subscriber, reason) => metrics.cutOff(subscriber.sink.transport, reason, subscriber.position, lagBytes(subscriber));
  metrics.view = {
    snapshot: () => ({
      upstream: feed.upstreamState,
      watching: feed.watching,
      window: { start: feed.window.start, head: feed.window.head, events: feed.window.size, bytes: feed.window.bytes },
      objects: feed.collection.size,
      storageBytes: storage.bytes,
      memoryBytes: feed.window.heldBytes,
    }),
    *subscribers() {
      for (const s of out.subscribers) yield { transport: s.sink.transport, position: s.position, lagBytes: lagBytes(s) };
    },
  };
  const limits = { maxHubs: maxHubs(env, key.cluster), maxHubsPerSubject: maxHubsPerSubject(env, key.cluster), maxPerSubject: settings.maxSubscriptionsPerSubject };
  const quotas = new HubQuotas(env.QUOTA, key.cluster, hubName(key), limits, log, (quota) => metrics.quotaRefused(quota));
  const guard = new AccessGuard(
    (token, access) => mayAccess(upstream, token, access),
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
        start: () => feed.start(),
        stop: () => feed.stop(),
        renew: () => feed.renew(settings.watchRenewMs),
      },
      subscribers: () => out.size,
      bookmarks: () => out.bookmarks(),
      keepAlive: () => out.keepAlive(),
      quotas,
      metrics,
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
    guard.remove(subscriber);
    if (subscriber.options.grant) quotas.releaseSubscriber(subscriber.options.grant.subject);
    lifecycle.settle();
  };
  const reader: Reader = {
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
  };
  return { clock, feed, fanout: out, quotas, guard, lifecycle, sockets: new HubSockets(out, log), reader, metrics };
}

/** The WebSocket close code for a stream ended by an access decision. */
export function closeFor(status: Status): CloseReason {
  if (status.code === 401) return { code: CLOSE.unauthorized, reason: "credentials expired or no longer accepted" };
  if (status.code === 403) return { code: CLOSE.forbidden, reason: "access revoked" };
  return { code: CLOSE.unverified, reason: "access could not be re-verified" };
}
