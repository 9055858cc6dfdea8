/**
 * @module
 * The LogHub Durable Object: one per followed log — a container of a pod on a cluster, its
 * current run or, with `previous`, the one before — holding one upstream stream of it however
 * many follow it (`source.ts`), a buffer of its recent lines (`buffer.ts`) and its followers
 * (`followers.ts`: HTTP bodies and WebSockets). It checks their rights again and counts them in
 * their subject's quota as a watch hub does its subscribers (the same parts: `AccessGuard`,
 * `HubQuotas`, `HubSockets`, `Lifecycle`), and stops its stream a short grace after its last
 * follower left (`LOG_IDLE_GRACE_SECONDS`). It keeps nothing in storage: a log hub evicted or
 * redeployed drops its followers' connections, and they follow again.
 */
import { DurableObject } from "cloudflare:workers";
import { mayAccess } from "../auth/kube.ts";
import { hubSettings, logSettings, maxHubs, maxHubsPerSubject } from "../config.ts";
import { HEARTBEAT_MS } from "../heartbeat.ts";
import { parseLogOptions, type LogOptions } from "../k8s/log-options.ts";
import { logMessage } from "../k8s/log-socket.ts";
import { floorSecond, type Nanos } from "../k8s/rfc3339.ts";
import { badRequest, internalError, statusResponse } from "../k8s/status.ts";
import { isWebSocketUpgrade } from "../k8s/websocket.ts";
import { logger, type Log } from "../log.ts";
import { LogReporter } from "../metrics/log-reporter.ts";
import { REGISTRY } from "../metrics/registry.ts";
import { upstreamFor } from "../upstream.ts";
import { AccessGuard } from "../hub/access.ts";
import { closeFor, type HubEnv } from "../hub/assembly.ts";
import { realClock, type Clock } from "../hub/clock.ts";
import { Lifecycle } from "../hub/lifecycle.ts";
import { HubQuotas } from "../hub/quotas.ts";
import { HubSockets } from "../hub/sockets.ts";
import { HttpSink } from "../hub/subscriber.ts";
import { isolateLogMemory } from "./buffer.ts";
import { Follower, LogFanout, type LogSink } from "./followers.ts";
import { describeLogKey, logHubName, logRequests, type LogKey, type LogRequest } from "./request.ts";
import { LogSource } from "./source.ts";

interface Parts {
  clock: Clock;
  log: Log;
  source: LogSource;
  fanout: LogFanout;
  quotas: HubQuotas;
  guard: AccessGuard<Follower>;
  lifecycle: Lifecycle;
  sockets: HubSockets<Follower>;
}

export class LogHub extends DurableObject<HubEnv> {
  #parts: Parts | undefined;

  override async fetch(request: Request): Promise<Response> {
    const logRequest = logRequests.read(request);
    if (!logRequest) return statusResponse(badRequest("a log hub is reached through the relay's pod log paths"));
    const parts = (this.#parts ??= assemble(this.ctx, this.env, logRequest.key));
    try {
      return await admit(parts, logRequest, isWebSocketUpgrade(request));
    } catch (e) {
      parts.log("request failed", { error: String(e), stack: (e as Error).stack });
      return statusResponse(internalError("the log hub failed to serve the request"));
    } finally {
      // Served or refused, this request may have started the upstream stream.
      parts.lifecycle.settle();
    }
  }

  /** Heartbeat while the stream runs: renewals, quota leases, the report; the stop once nobody has followed for the grace. */
  override async alarm(): Promise<void> {
    const parts = this.#parts;
    if (!parts) return; // a new instance: nothing runs, nothing to keep
    try {
      await parts.lifecycle.alarm();
    } catch (e) {
      parts.log("alarm failed", { error: String(e), stack: (e as Error).stack });
      throw e;
    }
  }
}

function assemble(state: DurableObjectState, env: HubEnv, key: LogKey): Parts {
  const upstream = upstreamFor(env, key.cluster);
  if (!upstream) throw new Error(`cluster "${key.cluster}" is not configured (UPSTREAM_URL or CLUSTERS)`);
  const settings = hubSettings(env);
  const logs = logSettings(env);
  const clock = realClock;
  const name = logHubName(key);
  const log = logger({ logHub: describeLogKey(key) });
  const metrics = new LogReporter(env.METRICS.getByName(REGISTRY), { hub: name, key: describeLogKey(key), cluster: key.cluster }, log, clock);
  const fanout = new LogFanout(settings.subscriberBudget, log, clock);
  const source = new LogSource(
    key,
    upstream,
    logs.upstreamTimeoutMs,
    { memory: isolateLogMemory(logs.memoryBytes), maxLines: logs.bufferLines },
    {
      published: (buffer) => {
        fanout.publish();
        buffer.trim(fanout.lowest(buffer));
      },
      // Its followers end once they have everything (the turn sees the buffer ended).
      ended: () => {
        fanout.publish();
        if (fanout.size === 0) metrics.stopped();
      },
    },
    metrics,
    log,
    clock,
  );
  fanout.onSent = (follower, lines) => metrics.sent(follower.sink.transport, lines);
  fanout.onCutOff = (_, reason) => metrics.cutOff(reason);
  metrics.view = () => {
    const followers = { websocket: 0, http: 0 };
    for (const follower of fanout.followers) followers[follower.sink.transport]++;
    return { followers, streaming: source.streaming, bufferBytes: source.buffer?.bytes ?? 0 };
  };
  const limits = { maxHubs: maxHubs(env, key.cluster), maxHubsPerSubject: maxHubsPerSubject(env, key.cluster), maxPerSubject: settings.maxSubscriptionsPerSubject };
  const quotas = new HubQuotas(env.QUOTA, key.cluster, name, limits, log, (quota) => metrics.quotaRefused(quota));
  const guard = new AccessGuard<Follower>(
    (token, access) => mayAccess(upstream, token, access),
    settings.authRecheckMs,
    (follower, status) => fanout.detach(follower, closeFor(status)),
    log,
    clock,
  );
  const lifecycle = new Lifecycle(
    {
      upstream: {
        get watching() {
          return source.streaming;
        },
        listingSince: undefined, // a log has no list to finish
        // A stream that ended on its own is the container's end: the next follower starts another.
        start: () => undefined,
        stop: () => source.stop(),
        renew: () => source.renew(settings.watchRenewMs),
      },
      subscribers: () => fanout.size,
      bookmarks: () => undefined,
      keepAlive: () => undefined,
      quotas: { renew: () => quotas.renew(), releaseHub: () => undefined, reclaimed: () => undefined },
      storage: { holdsState: false, reclaim: async () => undefined },
      metrics,
      alarm: { get: () => state.storage.getAlarm(), set: (at) => state.storage.setAlarm(at) },
    },
    { idleGraceMs: logs.idleGraceMs, bookmarkIntervalMs: HEARTBEAT_MS, retentionMs: 0 },
    log,
    clock,
  );
  fanout.onDetach = (follower) => {
    guard.remove(follower);
    if (follower.options.grant) quotas.releaseSubscriber(follower.options.grant.subject);
    if (fanout.size === 0 && !source.streaming) metrics.stopped();
    lifecycle.settle();
  };
  return { clock, log, source, fanout, quotas, guard, lifecycle, sockets: new HubSockets<Follower>(fanout, log) };
}

/** Where `since` is on the log's clock: `sinceTime` to the second (as the API server passes it on), or `sinceSeconds` before now (the relay's clock). */
function sinceOf(options: LogOptions, nowMs: number): Nanos | undefined {
  if (options.sinceTime !== undefined) return floorSecond(options.sinceTime);
  if (options.sinceSeconds !== undefined) return BigInt(nowMs - options.sinceSeconds * 1000) * 1_000_000n;
  return undefined;
}

/**
 * A new follower: its share of the quota, the log's buffer (its stream started if none runs; the
 * upstream's refusal is its answer), where in it the follower starts (or its own history, asked
 * of the upstream once its place is taken), and its sink.
 */
async function admit(parts: Parts, request: LogRequest, websocket: boolean): Promise<Response> {
  const { quotas } = parts;
  const parsed = parseLogOptions(new URLSearchParams(request.query), request.key.pod);
  if (!parsed.ok) return statusResponse(parsed.status);
  const options = parsed.value;
  const subject = request.grant?.subject;
  if (subject !== undefined) {
    const refused = await quotas.admitSubscriber(subject);
    if (refused) return statusResponse(refused);
  }
  // Its share goes back unless it follows (then it goes back when the follower leaves).
  const release = () => {
    if (subject !== undefined) quotas.releaseSubscriber(subject);
  };
  try {
    return await follow(parts, request, options, websocket, release);
  } catch (e) {
    release();
    throw e;
  }
}

/** An admitted follower's start in the log, and its sink; `release` gives its share back if it does not follow. */
async function follow(parts: Parts, request: LogRequest, options: LogOptions, websocket: boolean, release: () => void): Promise<Response> {
  const { source, fanout, guard, sockets, clock } = parts;
  const refuse = (response: Response) => {
    release();
    return response;
  };
  const opened = await source.open();
  if (!opened.ok) return refuse(statusResponse(opened.status));
  const buffer = opened.value;
  const since = sinceOf(options, clock.now());
  let position = buffer.startFor(options.tailLines, since);
  let history: ReadableStream<Uint8Array> | undefined;
  if (position === undefined) {
    // Its place first: whatever the stream brings while its history is read waits for it there.
    position = buffer.head;
    const answer = await source.history(options);
    if (!answer.ok) return refuse(statusResponse(answer.status));
    history = answer.value;
  }

  let follower: Follower | undefined;
  let sink: LogSink;
  let response: Response;
  if (websocket) {
    const opened = sockets.open({ batched: false, compressed: false }, request.protocol);
    const socket = opened.sink;
    // The API server's first message on a log socket is an empty one.
    socket.sendMessage(logMessage(new Uint8Array(0), request.protocol));
    sink = {
      transport: "websocket",
      deliver: (bytes) => socket.sendMessage(logMessage(bytes, request.protocol)),
      backlog: () => socket.backlog(),
      alive: () => socket.alive(),
      close: (reason) => socket.close(reason),
      get closed() {
        return socket.closed;
      },
    };
    response = opened.response;
    follower = new Follower(sink, { timestamps: options.timestamps, limitBytes: options.limitBytes, since, grant: request.grant }, buffer, position, history !== undefined);
    sockets.register(socket, follower);
  } else {
    // A chunked text/plain stream as the API server's, never compressed (a gzip layer would hold lines back).
    const body = new HttpSink(
      () => follower && fanout.detach(follower),
      () => fanout.wake(),
    );
    sink = {
      transport: "http",
      deliver: (bytes) => body.write(bytes),
      backlog: () => body.backlog(),
      alive: () => body.alive(),
      close: (reason) => body.close(reason),
      get closed() {
        return body.closed;
      },
    };
    response = new Response(body.body, { headers: { "content-type": "text/plain", "cache-control": "no-cache, private", "content-encoding": "identity" } });
    follower = new Follower(sink, { timestamps: options.timestamps, limitBytes: options.limitBytes, since, grant: request.grant }, buffer, position, history !== undefined);
  }
  if (request.grant) guard.add(follower, request.grant);
  fanout.attach(follower);
  if (history) void fanout.history(follower, history);
  return response;
}
