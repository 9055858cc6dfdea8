/**
 * @module
 * Admitting a watch: where its stream starts (the current state, or exactly after the
 * resourceVersion it resumes from), the API server's answers when it cannot start there (410
 * Expired, 504 Too large resource version), the subject's share of the quotas, its sink (a
 * WebSocket or an HTTP body) and the live re-checks of its rights; then the fan-out has it.
 */
import { errorLine } from "../k8s/event.ts";
import type { WatchOptions } from "../k8s/options.ts";
import { admitsEvent, shardKey } from "../k8s/shard.ts";
import { statusResponse, tooLargeResourceVersion, tooOldResourceVersion } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { ViewSpec } from "../k8s/view.ts";
import { BATCH_PROTOCOL, CLOSE, framingOf, PACED_PROTOCOL } from "../k8s/websocket.ts";
import type { AccessGuard } from "./access.ts";
import type { ResumeOutcome } from "../metrics/catalog.ts";
import { PACE_MS, type Fanout } from "./fanout.ts";
import type { Feed } from "./feed.ts";
import type { HubQuotas } from "./quotas.ts";
import { AHEAD_WAIT_MS } from "./reads.ts";
import type { ViewRequest, WatchRequest } from "./request.ts";
import type { HubSockets } from "./sockets.ts";
import { HttpSink, LineBatch, Subscriber, WebSocketSink, type Sink } from "./subscriber.ts";
import type { ViewIndexBuilds } from "./view-index-builds.ts";
import type { Views } from "./views.ts";

export interface AdmissionParts {
  feed: Feed;
  fanout: Fanout;
  quotas: HubQuotas;
  guard: AccessGuard;
  sockets: HubSockets;
  views: Views;
  indexBuilds: ViewIndexBuilds;
  metrics: { resumed(outcome: ResumeOutcome): void };
}

/**
 * Where a watch starts: at `position`, first sent the current state (`state`), a resume's net
 * changes (`net`), or nothing but the window's events after `position`; or why it cannot.
 */
export type Start = { position: number; first: "state" | "net" | undefined } | { refused: Status };

/**
 * The API server's rules for a watch's start (apiserver `watch_cache.go`): without a
 * resourceVersion (or with `sendInitialEvents`) from the current state; from `N`, exactly the
 * events after it, if the window still holds them (410 Expired otherwise) and once the hub has
 * reached it (`reached`; 504 Too large resource version otherwise). And the relay's own: from
 * `N` with `compact=true`, the net changes since `N`, from as far back as the hub's tombstones
 * reach (`horizon`; 410 before it).
 */
export function startOf(options: WatchOptions, window: { head: number; start: number }, horizon: number, reached: boolean): Start {
  const requested = options.resourceVersion;
  if (requested.kind !== "exact" || options.sendInitialEvents === true) {
    return reached ? { position: window.head, first: "state" } : { refused: tooLargeResourceVersion(window.head, window.head) };
  }
  const position = requested.rv;
  if (!reached) return { refused: tooLargeResourceVersion(position, window.head) };
  if (options.compact) return position < horizon ? { refused: tooOldResourceVersion(position, horizon) } : { position: window.head, first: "net" };
  if (position < window.start) return { refused: tooOldResourceVersion(position, window.start) };
  return { position, first: undefined };
}

/** Whether this hub holds where a watch starts: anything but a resume from before its window (or, for net changes, its horizon). */
export function holdsStart(options: WatchOptions, window: { head: number; start: number }, horizon: number): boolean {
  const start = startOf(options, window, horizon, true);
  return !("refused" in start) || start.refused.code !== 410;
}

/**
 * How long a resume waits for a hub that was stopped to catch up with the upstream (a restored
 * hub's first watch opens within a probe and a watch request): what it missed is then replayed
 * before the catch-up bookmark. Past it, or with the upstream failing, the resume is served from
 * what the hub stored, and what it missed follows as it is read.
 */
export const CATCH_UP_WAIT_MS = 3000;

export async function admitWatch(parts: AdmissionParts, request: WatchRequest, websocket: boolean): Promise<Response> {
  const { feed, fanout, quotas, sockets } = parts;
  const options = request.options;
  const requested = options.resourceVersion;
  if (requested.kind === "exact" && options.sendInitialEvents !== true) await feed.caughtUp(CATCH_UP_WAIT_MS);
  // Ahead of the hub: wait a little for it, as the watch cache does, then say so.
  const reached = requested.kind !== "exact" || (await feed.waitFor(requested.rv, AHEAD_WAIT_MS));
  const start = startOf(options, feed.window, feed.horizon, reached);
  if (requested.kind === "exact" && options.sendInitialEvents !== true) parts.metrics.resumed(resumeOutcome(start));
  const grant = request.grant;
  if (!("refused" in start) && grant) {
    const refused = await quotas.admitSubscriber(grant.subject);
    if (refused) return statusResponse(refused);
  }

  let subscriber: Subscriber | undefined;
  const framing = framingOf(request.protocol);
  const opened = websocket
    ? sockets.open(framing, request.protocol)
    : httpStream(
        () => subscriber && fanout.detach(subscriber),
        () => fanout.wake(),
      );
  const sink: Sink = opened.sink;
  if ("refused" in start) {
    // Too old or too new: 200, one ERROR event, then the end, as the API server answers.
    sink.send(LineBatch.of(errorLine(start.refused)));
    sink.close({ code: CLOSE.normal, reason: start.refused.reason === "Expired" ? "resourceVersion expired" : "resourceVersion too large" });
    return opened.response;
  }
  const first =
    start.first === "state"
      ? feed.initialState(options.sendInitialEvents === true && options.allowWatchBookmarks ? "initial-events-end" : undefined)
      : start.first === "net" && requested.kind === "exact"
        ? feed.netChangesAfter(requested.rv)
        : undefined;
  const deltasAfter = websocket && framing.deltas ? feed.window.head : undefined;
  const shard = options.shardSelector;
  const filter = shard && { key: shardKey(shard), admits: (line: string) => admitsEvent(shard, line) };
  const paceMs = websocket && request.protocol === PACED_PROTOCOL ? PACE_MS : undefined;
  subscriber = new Subscriber(sink, start.position, { bookmarks: options.allowWatchBookmarks, deltasAfter, timeoutMs: timeoutOf(options), grant, filter, replica: request.fromReplica, paceMs }, first);
  attach(parts, subscriber, opened.sink, grant);
  return opened.response;
}

/**
 * A live view: its window now (`watch` false), or a stream of it that stays live. A live one is
 * a subscriber as a watch is — its subject's share of the quotas, its rights re-checked, its
 * timeout, its sink — sent its frames by the hub's views instead of events. Either is the
 * window as it is now: a hub restored from storage first catches up with what it missed while
 * it was stopped (as a resume waits for it), so a client reopening its view after the hub
 * restarted gets what changed meanwhile in its first window, not in the frames after it.
 */
export async function admitView(parts: AdmissionParts, request: ViewRequest, websocket: boolean): Promise<Response> {
  const { fanout, quotas, sockets, views } = parts;
  await parts.feed.caughtUp(CATCH_UP_WAIT_MS);
  const spec = views.anchored(request.view);
  if (!spec.ok) return statusResponse(spec.status);
  const grant = request.grant;
  if (request.watch && grant) {
    const refused = await quotas.admitSubscriber(grant.subject);
    if (refused) return statusResponse(refused);
  }
  const refused = await admitIndex(parts, spec.value, request.subject);
  if (refused) {
    if (request.watch && grant) quotas.releaseSubscriber(grant.subject);
    return statusResponse(refused);
  }
  if (!request.watch) {
    const page = views.page(spec.value);
    return page.ok ? new Response(page.value, { headers: { "content-type": "application/json", "cache-control": "no-store" } }) : statusResponse(page.status);
  }
  let subscriber: Subscriber | undefined;
  const opened = websocket
    ? sockets.open({ batched: request.protocol === BATCH_PROTOCOL || request.protocol === PACED_PROTOCOL, compressed: false }, request.protocol)
    : httpStream(
        () => subscriber && fanout.detach(subscriber),
        () => fanout.wake(),
      );
  subscriber = new Subscriber(opened.sink, parts.feed.window.head, { bookmarks: false, timeoutMs: timeoutOf(request), grant, view: true });
  attach(parts, subscriber, opened.sink, grant);
  views.open(subscriber, spec.value);
  return opened.response;
}

/** An order that needs an index built first takes one of the subject's builds and one of the hub's; `undefined`, or the 429. */
async function admitIndex({ views, indexBuilds }: AdmissionParts, spec: ViewSpec, subject: string | undefined): Promise<Status | undefined> {
  const need = views.indexNeed(spec);
  if (need === "full") return indexBuilds.full();
  return need === "build" ? indexBuilds.admit(subject) : undefined;
}

/** A subscriber starts: its rights watched, its socket's messages its own, the upstream watched, the fan-out holding it. */
function attach({ feed, fanout, guard, sockets }: AdmissionParts, subscriber: Subscriber, sink: Sink, grant: WatchRequest["grant"]): void {
  if (grant) guard.add(subscriber, grant);
  if (sink instanceof WebSocketSink) sockets.register(sink, subscriber);
  feed.start();
  fanout.attach(subscriber);
}

function resumeOutcome(start: Start): ResumeOutcome {
  if (!("refused" in start)) return start.first === "net" ? "compacted" : "window";
  return start.refused.code === 410 ? "expired" : "too_large";
}

/**
 * An HTTP watch: a chunked JSON stream, never compressed (a gzip layer would hold events back):
 * `identity` keeps the runtime from coding it, `no-transform` the edge.
 */
function httpStream(onGone: () => void, onDrained: () => void): { sink: HttpSink; response: Response } {
  const sink = new HttpSink(onGone, onDrained);
  const response = new Response(sink.body, {
    headers: { "content-type": "application/json", "cache-control": "no-cache, private, no-transform", "content-encoding": "identity" },
  });
  return { sink, response };
}

/** `timeoutSeconds`, or the API server's default: a random time in [30, 60) minutes. */
function timeoutOf(options: { timeoutSeconds?: number | undefined }): number {
  return (options.timeoutSeconds ?? 1800 + Math.floor(Math.random() * 1800)) * 1000;
}
