/**
 * @module
 * `WatchError`: every failure the client reports, with the relay's `Status` when it sent one,
 * whether the watch retries it, and a message that says what probably went wrong.
 */
import type { Status } from "../k8s/types.ts";

export interface WatchErrorDetails {
  /** The Kubernetes `Status` the relay answered with. */
  status?: Status;
  /** HTTP status, or the `Status`'s code. */
  code?: number;
  /** Worth retrying: something is unavailable, the request itself is fine. */
  retryable: boolean;
  /** How long the server asked to wait (`Retry-After`, `retryAfterSeconds`). */
  retryAfterMs?: number;
  cause?: unknown;
}

export class WatchError extends Error {
  override readonly name = "WatchError";
  readonly status: Status | undefined;
  readonly code: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number;

  constructor(message: string, details: WatchErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code ?? details.status?.code;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs ?? 0;
  }
}

/** Codes that mean "not now" rather than "not this": the API server's own retry set. */
export const isRetryableCode = (code: number): boolean => code === 408 || code === 429 || code >= 500;

/** What a failure code most likely means for someone watching through the relay. */
function hint(code: number): string {
  if (code === 401) return "the relay wants credentials: pass a token (the `token` option)";
  if (code === 403) return "the token, or the lack of one, may not list and watch this collection";
  if (code === 404) return "this relay serves no such collection or cluster: check the URL's path (/api/v1/..., /apis/<group>/<version>/..., /clusters/<name>/...)";
  if (code === 400 || code === 422) return "the relay rejected the request: check the selectors in the URL (and a view's sort and filter)";
  if (isRetryableCode(code)) return "the relay or the cluster behind it is unavailable; retrying";
  return "unexpected answer from the relay";
}

/** A `Status` (from an HTTP answer or an ERROR event) as an error, with its hint. */
export function statusError(what: string, status: Status, retryAfterHeaderMs = 0): WatchError {
  const code = status.code ?? 500;
  const retryAfterMs = Math.max(retryAfterHeaderMs, (status.details?.retryAfterSeconds ?? 0) * 1000);
  return new WatchError(`${what}: ${code} ${status.reason ?? "Failure"}: ${status.message ?? "(no message)"} (${hint(code)})`, {
    status,
    code,
    retryable: isRetryableCode(code),
    retryAfterMs,
  });
}

/** An HTTP answer without a `Status` body (a proxy's error page, say). */
export function httpError(what: string, code: number, retryAfterMs: number): WatchError {
  return new WatchError(`${what}: HTTP ${code} (${hint(code)})`, { code, retryable: isRetryableCode(code), retryAfterMs });
}

/** `fetch` rejected: nothing answered. */
export function unreachable(url: string, cause: unknown): WatchError {
  const origin = new URL(url).origin;
  return new WatchError(`could not reach the relay at ${origin} (${String((cause as Error)?.message ?? cause)}): is it running, and is the URL right?`, { retryable: true, cause });
}

/** The WebSocket did not open. Browsers hide the upgrade's HTTP status, so say where to look. */
export function socketFailed(url: string, cause: unknown): WatchError {
  return new WatchError(`the WebSocket to ${url} did not open: the relay is unreachable or refused the upgrade (GET the same URL without watch=1 to see its answer)`, { retryable: true, cause });
}

/** The relay sent something that is not the watch protocol: retrying would repeat it. */
export function protocolError(what: string): WatchError {
  return new WatchError(`${what}: is the URL a kube-watch-relay or Kubernetes API collection?`, { retryable: false });
}
