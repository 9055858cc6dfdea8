/**
 * @module
 * Fault injection for the relay's resilience tests: failing the next N requests with a chosen
 * status or holding them a while, answering pod log reads as a hostile kubelet would, and acting
 * on every open watch (drop mid-event, stall, expire, malformed lines) or on the history
 * (compaction). Restart is the server's job; `parseFaults` only validates it.
 */
import { badRequest, failure, internalError, serviceUnavailable, tooManyRequests } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject } from "./meta.ts";
import type { Verb } from "./requestlog.ts";
import type { Store } from "./store.ts";
import type { Watchers } from "./watchers.ts";

/** Which requests a fault counts: the next `count` of them. */
interface RequestScope {
  count: number;
  /** Only requests with these verbs count; all Kubernetes requests when absent. */
  verbs?: Verb[];
  /** Only requests whose path starts with this count (one collection among many clients). */
  path?: string;
}

export interface FailRequests extends RequestScope {
  /** 500, 429 and 503 get the API server's own wording; any other 4xx/5xx a generic one. */
  status: number;
  retryAfterSeconds?: number;
}

/** Requests answered only after `ms`: an API server slow to serve them (a list of a big collection). */
export interface DelayRequests extends RequestScope {
  ms: number;
}

/**
 * Pod log reads (followed or not) answered as a broken or hostile kubelet might: `bytes` of one
 * line with no newline, whatever `limitBytes` asked, as fast as the client takes them, then
 * nothing, the connection held open until the client leaves.
 */
export interface HostileLogs extends RequestScope {
  bytes: number;
}

export interface FaultRequest {
  dropWatches?: boolean;
  stallWatches?: boolean;
  expireWatches?: boolean;
  failRequests?: FailRequests;
  delayRequests?: DelayRequests;
  hostileLogs?: HostileLogs;
  malformedLines?: number;
  compact?: true | { resourceVersion: string };
  restart?: { downtimeMs: number };
}

const VERBS: readonly Verb[] = ["list", "watch", "get", "create", "update", "patch", "delete", "discovery"];

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** Validate a `POST /_sim/faults` body; throws a 400 naming the bad field. */
export function parseFaults(body: unknown): FaultRequest {
  const bad = (why: string) => new ApiError(badRequest(`invalid fault request: ${why}`));
  if (!isJsonObject(body)) throw bad("the body must be a JSON object");
  const f = body;
  const known = new Set(["dropWatches", "stallWatches", "expireWatches", "failRequests", "delayRequests", "hostileLogs", "malformedLines", "compact", "restart"]);
  for (const key of Object.keys(f)) if (!known.has(key)) throw bad(`unknown field "${key}" (known: ${[...known].join(", ")})`);
  for (const key of ["dropWatches", "stallWatches", "expireWatches"]) {
    if (f[key] !== undefined && typeof f[key] !== "boolean") throw bad(`${key} must be a boolean`);
  }
  if (f.malformedLines !== undefined && !isCount(f.malformedLines)) throw bad("malformedLines must be a non-negative integer");
  /** A fault on the next requests: an object with their count, verbs and path; its fields, to check the rest of. */
  const scoped = (name: string): Record<string, unknown> | undefined => {
    const r = f[name] as Record<string, unknown> | undefined;
    if (r === undefined) return undefined;
    if (typeof r !== "object" || r === null) throw bad(`${name} must be an object`);
    if (!isCount(r.count)) throw bad(`${name}.count must be a non-negative integer`);
    if (r.verbs !== undefined && (!Array.isArray(r.verbs) || r.verbs.some((v) => !VERBS.includes(v as Verb)))) {
      throw bad(`${name}.verbs must be a list of ${VERBS.join(", ")}`);
    }
    if (r.path !== undefined && typeof r.path !== "string") throw bad(`${name}.path must be a path prefix string`);
    return r;
  };
  const fail = scoped("failRequests");
  if (fail) {
    if (typeof fail.status !== "number" || fail.status < 400 || fail.status > 599) throw bad("failRequests.status must be an HTTP error status (400-599)");
    if (fail.retryAfterSeconds !== undefined && !isCount(fail.retryAfterSeconds)) throw bad("failRequests.retryAfterSeconds must be a non-negative integer");
  }
  const delay = scoped("delayRequests");
  if (delay && !isCount(delay.ms)) throw bad("delayRequests.ms must be a non-negative integer");
  const hostile = scoped("hostileLogs");
  if (hostile && !isCount(hostile.bytes)) throw bad("hostileLogs.bytes must be a non-negative integer");
  if (f.compact !== undefined && f.compact !== true) {
    const rv = (f.compact as { resourceVersion?: unknown } | null)?.resourceVersion;
    if (typeof rv !== "string" || !/^[0-9]+$/.test(rv)) throw bad('compact must be true or {"resourceVersion": "<digits>"}');
  }
  if (f.restart !== undefined && !isCount((f.restart as { downtimeMs?: unknown } | null)?.downtimeMs)) {
    throw bad("restart.downtimeMs must be a non-negative integer");
  }
  return f as FaultRequest;
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  504: "Timeout",
};

function injectedStatus(code: number, retryAfterSeconds: number | undefined): Status {
  const retry = retryAfterSeconds || undefined;
  if (code === 429) {
    const message = "the server has received too many requests and has asked us to try again later";
    return retry ? tooManyRequests(message, retry) : failure(429, "TooManyRequests", message);
  }
  if (code === 503) return serviceUnavailable("the server is currently unable to handle the request", retry);
  const status = code === 500 ? internalError("injected fault") : failure(code, REASONS[code] ?? "InternalError", `injected fault: HTTP ${code}`);
  if (retry) status.details = { ...status.details, retryAfterSeconds: retry };
  return status;
}

/** Whether a request counts for `scope` (and is counted): one of its next `count` of this verb and path. */
function take(scope: RequestScope & { remaining: number }, verb: Verb, path: string): boolean {
  if (scope.remaining <= 0 || (scope.verbs && !scope.verbs.includes(verb)) || (scope.path && !path.startsWith(scope.path))) return false;
  scope.remaining--;
  return true;
}

export class Faults {
  #fail: (FailRequests & { remaining: number }) | undefined;
  #delay: (DelayRequests & { remaining: number }) | undefined;
  #hostileLogs: (HostileLogs & { remaining: number }) | undefined;

  /** Consume one injected failure if the next request with this verb should fail. */
  takeFailure(verb: Verb, path: string): Status | undefined {
    const fail = this.#fail;
    return fail && take(fail, verb, path) ? injectedStatus(fail.status, fail.retryAfterSeconds) : undefined;
  }

  /** How long to hold the request before serving it (ms; 0: at once), consuming one injected delay. */
  takeDelay(verb: Verb, path: string): number {
    const delay = this.#delay;
    return delay && take(delay, verb, path) ? delay.ms : 0;
  }

  /** How many bytes of one endless line to answer a pod's log read at `path` with, consuming one injected hostile answer; `undefined`: the log as it is. */
  takeHostileLog(path: string): number | undefined {
    const hostile = this.#hostileLogs;
    return hostile && take(hostile, "get", path) ? hostile.bytes : undefined;
  }

  /** Apply everything but `restart` (which the server performs after answering). */
  apply(request: FaultRequest, watchers: Watchers, store: Store): void {
    const compactTo = request.compact === undefined || request.compact === true ? store.resourceVersion : Number(request.compact.resourceVersion);
    if (compactTo > store.resourceVersion) {
      throw new ApiError(badRequest(`invalid fault request: compact.resourceVersion ${compactTo} is ahead of the current resourceVersion ${store.resourceVersion}`));
    }
    if (request.failRequests) this.#fail = { ...request.failRequests, remaining: request.failRequests.count };
    if (request.delayRequests) this.#delay = { ...request.delayRequests, remaining: request.delayRequests.count };
    if (request.hostileLogs) this.#hostileLogs = { ...request.hostileLogs, remaining: request.hostileLogs.count };
    if (request.malformedLines) {
      const count = request.malformedLines;
      watchers.forEach((w) => w.injectMalformed(count));
    }
    if (request.compact) store.compact(compactTo);
    if (request.expireWatches) watchers.forEach((w) => w.expire());
    if (request.stallWatches) watchers.forEach((w) => w.stall());
    if (request.dropWatches) watchers.forEach((w) => w.drop());
  }

  clear(): void {
    this.#fail = undefined;
    this.#delay = undefined;
    this.#hostileLogs = undefined;
  }
}
