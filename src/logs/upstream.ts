/**
 * @module
 * A pod's log asked of the upstream API server — once (a plain read, passed through by the
 * Worker), for a follower's own history, or followed (a log hub's one stream) — and its
 * refusals as the Status a client gets: the API server's own (`pods "x" not found`, `container
 * "c" in pod "x" is waiting to start: ContainerCreating`), passed on as they are, except where
 * they are about the relay's own credentials, which the client cannot fix.
 */
import { readAtMost } from "../bounded-read.ts";
import { logQuery, type LogOptions } from "../k8s/log-options.ts";
import { failure, serviceUnavailable } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import { logPath, type LogKey } from "./request.ts";

/** GET the log of `key`'s pod with `options` (only what is set), as the API server passes them on. */
export function fetchLog(upstream: Upstream, key: Pick<LogKey, "namespace" | "pod">, options: Partial<LogOptions>, signal?: AbortSignal): Promise<Response> {
  const query = logQuery(options).toString();
  return upstream.fetch(`${logPath(key)}${query ? `?${query}` : ""}`, { headers: { accept: "*/*" }, ...(signal ? { signal } : {}) });
}

const REASONS: Record<number, string> = { 400: "BadRequest", 404: "NotFound", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout" };

/** The most of a refusal's body read: a Status is a few hundred bytes. */
const STATUS_BYTES = 64 * 1024;

/** The Status of a refused log request (the upstream's own where it sent one), from at most 64 KiB of its body, read until `signal` aborts. */
export async function upstreamStatus(response: Response, signal?: AbortSignal): Promise<Status> {
  const text = new TextDecoder().decode((await readAtMost(response.body, STATUS_BYTES, signal)).bytes);
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(text) as Status;
    if (parsed.kind === "Status") status = parsed;
  } catch {
    // not JSON: a proxy's answer
  }
  const message = status?.message ?? text.trim().slice(0, 500);
  if (response.status === 401) return serviceUnavailable(`the upstream API server does not accept the relay's own credentials (UPSTREAM_TOKEN, or the cluster's tokenSecret): ${message}`, 30);
  if (response.status === 403) {
    return failure(403, "Forbidden", `the upstream API server refuses the relay's own identity for this pod's log (give it get on pods/log; deploy/rbac.yaml has it): ${message}`);
  }
  return status ?? failure(response.status, REASONS[response.status] ?? "InternalError", message || `the upstream API server answered ${response.status}`);
}

/** The Status for an upstream that did not answer `what` within `LOG_UPSTREAM_TIMEOUT_SECONDS`. */
export function upstreamTimeout(what: string, ms: number): Status {
  return failure(504, "Timeout", `the upstream API server did not answer ${what} within ${ms / 1000} s (LOG_UPSTREAM_TIMEOUT_SECONDS): try again, or raise the setting if its kubelets are that slow`, {
    retryAfterSeconds: 1,
  });
}

/** The Status for an upstream that could not be reached. */
export function unreachable(error: unknown): Status {
  return serviceUnavailable(`the relay cannot reach the upstream API server: ${error instanceof Error ? error.message : String(error)}`, 5);
}
