/**
 * @module
 * Pod logs as the API server serves them from the kubelet (`GET …/pods/{name}/log`): its checks
 * and wording (`PodLogOptions` conversion and validation, the container to read, `pods "x" not
 * found`), the kubelet's (`validateContainerLogStatus`: waiting, terminated, no previous
 * container), and the reading itself (`tailLines`, then `sinceSeconds`/`sinceTime`, `timestamps`,
 * `limitBytes`, and `follow` until the container stops).
 *
 * What a container writes needs no memory: its log is a function of its container ID and start
 * (and end): line `n` is written `n` intervals after the start (a pod may set its own interval
 * in the annotation `sim.kube-watch-relay.dev/log-interval-ms`; 1 s by default), at a
 * nanosecond timestamp and with text both drawn from the container ID and `n`, so every read of
 * it, followed or not, before or after a restart (`previous`), agrees. A line appears a second
 * after its timestamp, so what a follower was sent is always in the log as read later; a stopped
 * container's log ends with a line saying how it exited. As the kubelet's rotation does, a log
 * keeps only its last few thousand lines.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ContainerStatus, Pod } from "kubernetes-types/core/v1.js";
import { metaNamespaceKey } from "../k8s/key.ts";
import { parseLogOptions, type LogOptions } from "../k8s/log-options.ts";
import { floorSecond, formatRfc3339Nano, type Nanos } from "../k8s/rfc3339.ts";
import { badRequest, notFound } from "../k8s/status.ts";
import { ApiError } from "./errors.ts";
import { apiHeaders } from "./http.ts";
import { resourceByName } from "./resources.ts";
import type { Store } from "./store.ts";

export const LOG_INTERVAL_ANNOTATION = "sim.kube-watch-relay.dev/log-interval-ms";
const DEFAULT_INTERVAL_MS = 1000;
/** A line appears this long after its timestamp (see the module comment). */
const WRITE_DELAY_NS = 1_000_000_000n;
/** Rotation: files of this many lines, the last this many of them kept. */
const FILE_LINES = 1000;
const FILES_KEPT = 5;
/** A follower looks at its container at least this often (did it stop?). */
const FOLLOW_TICK_MS = 250;

const PODS = resourceByName("pods");
const MS = 1_000_000n;

/** One run of a container: its log's identity, extent and pace. */
interface Run {
  container: string;
  id: string;
  start: Nanos;
  intervalNs: Nanos;
  /** When it stopped, and how (a running container has none). */
  end?: { at: Nanos; exitCode: number; reason: string };
}

interface Line {
  time: Nanos;
  text: string;
}

/** FNV-1a: the deterministic draw for a line. */
function draw(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const METHODS = ["GET", "GET", "GET", "POST", "PUT"];

function lineText(run: Run, n: number): string {
  if (n === 0) return `level=info msg="starting" container=${run.container} id=${run.id.slice(-12)}`;
  const h = draw(`${run.id}:${n}`);
  if (n % 15 === 0) return `level=info msg="health check" path=/healthz status=200 line=${n}`;
  const path = `/api/items/${h % 500}`;
  if (h % 11 === 0) return `level=warn msg="slow request" method=GET path=${path} status=200 duration=${300 + (h % 900)}ms line=${n}`;
  return `level=info msg="request served" method=${METHODS[h % METHODS.length]} path=${path} status=${h % 37 === 0 ? 404 : 200} duration=${1 + (h % 40)}ms line=${n}`;
}

/** Line `n`'s timestamp: `n` intervals after the start, and a draw within the first half of the interval. */
const lineTime = (run: Run, n: number): Nanos => run.start + BigInt(n) * run.intervalNs + (BigInt(draw(`${run.id}#${n}`)) % (run.intervalNs / 2n || 1n));

/** The last periodic line of the run as read at `now` (a running one's written a second ago), or -1. */
function lastLine(run: Run, now: Nanos): number {
  const limit = run.end ? run.end.at - 1n : now - WRITE_DELAY_NS;
  if (limit < run.start) return -1;
  let n = Number((limit - run.start) / run.intervalNs);
  while (n >= 0 && lineTime(run, n) > limit) n--;
  return n;
}

/** The run's whole log as read at `now`: what rotation kept of its periodic lines, then, once it stopped, its exit line. */
function logOf(run: Run, now: Nanos): { first: number; last: number; exit: Line | undefined } {
  const last = lastLine(run, now);
  const first = Math.max(0, (Math.floor(last / FILE_LINES) - (FILES_KEPT - 1)) * FILE_LINES);
  const exit = run.end ? { time: run.end.at, text: `level=error msg="exiting" code=${run.end.exitCode} reason=${run.end.reason}` } : undefined;
  return { first, last, exit };
}

const lineAt = (run: Run, n: number): Line => ({ time: lineTime(run, n), text: lineText(run, n) });

/** Nanoseconds of an RFC 3339 time in a pod's status. */
const nanosOf = (time: string | undefined): Nanos => BigInt(Date.parse(time ?? "") || 0) * MS;

function runOf(pod: Pod, container: string, id: string | undefined, state: { startedAt?: string; finishedAt?: string; exitCode?: number; reason?: string }, terminated: boolean): Run {
  const interval = Number(pod.metadata?.annotations?.[LOG_INTERVAL_ANNOTATION] ?? DEFAULT_INTERVAL_MS);
  const run: Run = { container, id: id ?? "", start: nanosOf(state.startedAt), intervalNs: BigInt(Number.isInteger(interval) && interval > 0 ? interval : DEFAULT_INTERVAL_MS) * MS };
  if (terminated) run.end = { at: nanosOf(state.finishedAt), exitCode: state.exitCode ?? 0, reason: state.reason ?? "Completed" };
  return run;
}

const statusOf = (pod: Pod, container: string): ContainerStatus | undefined =>
  [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.ephemeralContainerStatuses ?? [])].find((s) => s.name === container);

/** The kubelet's `validateContainerLogStatus`: which run of the container a request reads, or its 400. */
function runToRead(pod: Pod, container: string, previous: boolean): Run {
  const podName = pod.metadata?.name ?? "";
  const fail = (why: string) => new ApiError(badRequest(`container "${container}" in pod "${podName}" ${why}`));
  const status = statusOf(pod, container);
  if (!status) throw fail("is not available");
  const last = status.lastState?.terminated;
  const { waiting, running, terminated } = status.state ?? {};
  if (previous) {
    if (!last?.containerID) throw new ApiError(badRequest(`previous terminated container "${container}" in pod "${podName}" not found`));
    return runOf(pod, container, last.containerID, last, true);
  }
  if (running) return runOf(pod, container, status.containerID, running, false);
  if (terminated) {
    if (terminated.containerID) return runOf(pod, container, terminated.containerID, terminated, true);
    if (last?.containerID) return runOf(pod, container, last.containerID, last, true);
    throw fail("is terminated");
  }
  if (last) {
    if (!last.containerID) throw fail("is terminated");
    return runOf(pod, container, last.containerID, last, true);
  }
  if (waiting) {
    if (waiting.reason === "ErrImagePull") throw fail("is waiting to start: image can't be pulled");
    if (waiting.reason === "ImagePullBackOff") throw fail("is waiting to start: trying and failing to pull image");
    throw fail(`is waiting to start: ${waiting.reason ?? ""}`);
  }
  throw fail("is waiting to start - no logs yet");
}

/** The API server's `validateContainer`: the container named, or the pod's only one. */
function containerToRead(pod: Pod, container: string | undefined): string {
  const name = pod.metadata?.name ?? "";
  const spec = pod.spec;
  const all = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])].map((c) => c.name);
  if (container !== undefined) {
    if (!all.includes(container)) throw new ApiError(badRequest(`container ${container} is not valid for pod ${name}`));
    return container;
  }
  const containers = spec?.containers ?? [];
  if (containers.length === 1) return containers[0]!.name;
  if (containers.length === 0) throw new ApiError(badRequest(`a container name must be specified for pod ${name}`));
  throw new ApiError(badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(" ")}]`));
}

/** What a reader is sent: its lines as it asked for them, cut at its `limitBytes`. */
class LogWriter {
  readonly #res: ServerResponse;
  readonly #timestamps: boolean;
  #left: number;

  constructor(res: ServerResponse, options: LogOptions) {
    this.#res = res;
    this.#timestamps = options.timestamps;
    this.#left = options.limitBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Write the lines; false once the limit is reached (and the response ended). */
  write(lines: Iterable<Line>): boolean {
    let text = "";
    for (const line of lines) text += this.#timestamps ? `${formatRfc3339Nano(line.time)} ${line.text}\n` : `${line.text}\n`;
    if (text === "") return this.#left > 0;
    let bytes = Buffer.from(text);
    if (bytes.length >= this.#left) bytes = bytes.subarray(0, this.#left);
    this.#left -= bytes.length;
    this.#res.write(bytes);
    if (this.#left > 0) return true;
    this.#res.end();
    return false;
  }
}

function* periodic(run: Run, from: number, to: number): Generator<Line> {
  for (let n = from; n <= to; n++) yield lineAt(run, n);
}

/** The open follows, for the simulator's stats and for a restart that ends them. */
export class LogFollows {
  readonly #open = new Map<ServerResponse, { path: string; container: string; previous: boolean }>();

  add(res: ServerResponse, follow: { path: string; container: string; previous: boolean }): void {
    this.#open.set(res, follow);
    res.once("close", () => this.#open.delete(res));
  }

  list(): Array<{ path: string; container: string; previous: boolean }> {
    return [...this.#open.values()];
  }

  /** End every follow cleanly, as an API server shutting down does. */
  endAll(): void {
    for (const res of this.#open.keys()) res.end();
  }
}

/**
 * A pod's log answered as a broken or hostile kubelet might (fault injection): `bytes` of one
 * line with no newline, whatever `limitBytes` asked, as fast as the client takes them, then
 * nothing, the connection held open until the client leaves.
 */
export function serveHostileLog(res: ServerResponse, bytes: number): void {
  res.writeHead(200, apiHeaders("text/plain"));
  const chunk = Buffer.alloc(64 * 1024, "x");
  let left = bytes;
  res.once("close", () => {
    left = 0;
  });
  const write = () => {
    while (left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) return void res.once("drain", write);
    }
  };
  write();
}

/** `GET /api/v1/namespaces/{namespace}/pods/{name}/log`. */
export function serveLog(store: Store, follows: LogFollows, req: IncomingMessage, res: ServerResponse, namespace: string, name: string, query: URLSearchParams): void {
  const parsed = parseLogOptions(query, name);
  if (!parsed.ok) throw new ApiError(parsed.status);
  const options = parsed.value;
  const key = metaNamespaceKey(namespace, name);
  const pod = store.get(PODS, key) as Pod | undefined;
  if (!pod) throw new ApiError(notFound("pods", name));
  const container = containerToRead(pod, options.container);
  // Not scheduled yet: the API server has no kubelet to ask, and answers an empty log.
  if (!pod.spec?.nodeName) {
    res.writeHead(200, apiHeaders("text/plain"));
    res.end();
    return;
  }
  const run = runToRead(pod, container, options.previous);
  const { first, last, exit } = logOf(run, BigInt(Date.now()) * MS);
  // The kubelet seeks back tailLines lines, then skips what is older than since.
  const count = last - first + 1 + (exit ? 1 : 0);
  let from = options.tailLines === undefined ? first : Math.max(first, first + count - options.tailLines);
  const since = options.sinceTime !== undefined ? floorSecond(options.sinceTime) : options.sinceSeconds !== undefined ? BigInt(Date.now() - options.sinceSeconds * 1000) * MS : undefined;
  if (since !== undefined) while (from <= last && lineTime(run, from) < since) from++;
  const showExit = exit !== undefined && from <= last + 1 && (since === undefined || exit.time >= since);

  res.writeHead(200, apiHeaders("text/plain"));
  const writer = new LogWriter(res, options);
  if (!writer.write(periodic(run, from, last))) return;
  if (showExit && !writer.write([exit])) return;
  if (!options.follow || run.end) {
    res.end();
    return;
  }
  follow(store, follows, req, res, key, run, last + 1, writer, `/api/v1/namespaces/${namespace}/pods/${name}/log`);
}

/** Go on writing the run's lines as they appear, until it stops (then its last lines and its exit line) or the client leaves. */
function follow(store: Store, follows: LogFollows, req: IncomingMessage, res: ServerResponse, key: string, run: Run, next: number, writer: LogWriter, path: string): void {
  follows.add(res, { path, container: run.container, previous: false });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => clearTimeout(timer);
  req.once("close", stop);
  res.once("close", stop);
  const tick = () => {
    if (res.writableEnded || res.destroyed) return;
    const pod = store.get(PODS, key) as Pod | undefined;
    const status = pod && statusOf(pod, run.container);
    const stillRunning = status?.containerID === run.id && status.state?.running !== undefined;
    if (!stillRunning) {
      // It stopped: the rest of its log as the stopped run's, which names its end.
      const end = [status?.state?.terminated, status?.lastState?.terminated].find((t) => t?.containerID === run.id);
      const stopped = end && pod ? runOf(pod, run.container, run.id, end, true) : undefined;
      if (stopped) {
        const { last, exit } = logOf(stopped, BigInt(Date.now()) * MS);
        if (writer.write(periodic(stopped, next, last)) && exit) writer.write([exit]);
      }
      if (!res.writableEnded) res.end();
      return;
    }
    const last = lastLine(run, BigInt(Date.now()) * MS);
    if (!writer.write(periodic(run, next, last))) return;
    next = Math.max(next, last + 1);
    const due = Number((lineTime(run, next) + WRITE_DELAY_NS) / MS) - Date.now();
    timer = setTimeout(tick, Math.max(1, Math.min(FOLLOW_TICK_MS, due)));
  };
  tick();
}
