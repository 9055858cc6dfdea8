/**
 * @module
 * A pod's log asked of the upstream API server — once (a plain read, passed through by the
 * Worker), for a follower's own history, or followed (a log hub's one stream) — and its
 * refusals as the Status a client gets (`upstream.ts`): the API server's own (`pods "x" not
 * found`, `container "c" in pod "x" is waiting to start: ContainerCreating`), passed on as they
 * are, except where they are about the relay's own credentials, which the client cannot fix.
 */
import { logQuery, type LogOptions } from "../k8s/log-options.ts";
import { failure } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { upstreamRefusal, type Upstream } from "../upstream.ts";
import { logPath, type LogKey } from "./request.ts";

/** GET the log of `key`'s pod with `options` (only what is set), as the API server passes them on. */
export function fetchLog(upstream: Upstream, key: Pick<LogKey, "namespace" | "pod">, options: Partial<LogOptions>, signal?: AbortSignal): Promise<Response> {
  const query = logQuery(options).toString();
  return upstream.fetch(`${logPath(key)}${query ? `?${query}` : ""}`, { headers: { accept: "*/*" }, ...(signal ? { signal } : {}) });
}

/** What a refused log read asked for, and what the relay's identity needs for it. */
const POD_LOG = { what: "this pod's log", needs: "get on pods/log" };

/** The Status of a refused log request, read until `signal` aborts. */
export const logRefusal = (response: Response, signal?: AbortSignal): Promise<Status> => upstreamRefusal(response, POD_LOG, signal);

/** The Status for an upstream that did not answer `what` within `LOG_UPSTREAM_TIMEOUT_SECONDS`. */
export function upstreamTimeout(what: string, ms: number): Status {
  return failure(504, "Timeout", `the upstream API server did not answer ${what} within ${ms / 1000} s (LOG_UPSTREAM_TIMEOUT_SECONDS): try again, or raise the setting if its kubelets are that slow`, {
    retryAfterSeconds: 1,
  });
}
