/**
 * @module
 * Builders for `Status` objects, in the API server's field order and wording, so clients
 * (client-go's `apierrors`, kubectl's messages) read the relay's errors as they read the
 * API server's. Sources: apimachinery `pkg/api/errors/errors.go`, apiserver
 * `pkg/storage/errors.go`.
 */
import type { Status } from "./types.ts";

/** The outcome of anything that can refuse: a value, or the Kubernetes `Status` that says why not. */
export type Result<T> = { ok: true; value: T } | { ok: false; status: Status };

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A failure `Status`; `code` doubles as the HTTP status when sent before a stream starts. */
export function failure(code: number, reason: string, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason };
  if (details) status.details = details;
  status.code = code;
  return status;
}

export const badRequest = (message: string): Status => failure(400, "BadRequest", message);

export const unauthorized = (message = "Unauthorized"): Status => failure(401, "Unauthorized", message);

/** RBAC wording: `pods is forbidden: User "x" cannot watch resource "pods" in API group "" in the namespace "dev"`. */
export function forbidden(resource: string, name: string | undefined, message: string, group = ""): Status {
  const subject = name ? `${resource}${group ? `.${group}` : ""} "${name}"` : `${resource}${group ? `.${group}` : ""}`;
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (group) details.group = group;
  details.kind = resource;
  return failure(403, "Forbidden", `${subject} is forbidden: ${message}`, details);
}

export function notFound(resource: string, name: string, group = ""): Status {
  const details: StatusDetails = { name };
  if (group) details.group = group;
  details.kind = resource;
  return failure(404, "NotFound", `${resource}${group ? `.${group}` : ""} "${name}" not found`, details);
}

/** The go-restful answer for a path that exists but not for this verb. */
export const methodNotAllowed = (message = "the server does not allow this method on the requested resource"): Status => failure(405, "MethodNotAllowed", message, {});

/** Too old: `too old resource version: <requested> (<oldest resumable>)` (watch_cache_history.go). */
export const expired = (message: string): Status => failure(410, "Expired", message);

export const tooOldResourceVersion = (requested: number, oldest: number): Status => expired(`too old resource version: ${requested} (${oldest})`);

/**
 * A continue token whose snapshot is gone (etcd compacted past it): 410 with `metadata.continue`,
 * a token that goes on from the same key at the latest state, for a client that will take an
 * inconsistent list (apiserver `pkg/storage/etcd3/errors.go` `handleCompactedErrorForPaging`).
 */
export function continueExpired(latestToken: string): Status {
  const status = expired(
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
  );
  status.metadata = { continue: latestToken };
  return status;
}

/** `ListOptions.meta.k8s.io "" is invalid: field: Forbidden: ...` as `apierrors.NewInvalid` writes it. */
export function invalidListOptions(causes: Array<{ field: string; type: "Forbidden" | "Invalid" | "Unsupported"; detail: string; value?: string }>): Status {
  const describe = (c: (typeof causes)[number]) => (c.type === "Forbidden" ? `Forbidden: ${c.detail}` : `${c.type} value: ${JSON.stringify(c.value ?? "")}: ${c.detail}`);
  const message = `ListOptions.meta.k8s.io "" is invalid: ${causes.map((c) => `${c.field}: ${describe(c)}`).join(", ")}`;
  const reasonOf = { Forbidden: "FieldValueForbidden", Invalid: "FieldValueInvalid", Unsupported: "FieldValueNotSupported" } as const;
  return failure(422, "Invalid", causes.length === 1 ? message : `[${message}]`, {
    group: "meta.k8s.io",
    kind: "ListOptions",
    causes: causes.map((c) => ({ reason: reasonOf[c.type], message: describe(c), field: c.field })),
  });
}

export const tooManyRequests = (message: string, retryAfterSeconds: number): Status => failure(429, "TooManyRequests", message, { retryAfterSeconds });

export const internalError = (message: string): Status => failure(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });

export const serviceUnavailable = (message: string, retryAfterSeconds?: number): Status =>
  failure(503, "ServiceUnavailable", message, retryAfterSeconds === undefined ? undefined : { retryAfterSeconds });

/** A resourceVersion ahead of what is cached, after waiting (`NewTooLargeResourceVersionError`). */
export const tooLargeResourceVersion = (requested: number, current: number, retryAfterSeconds = 1): Status =>
  failure(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds,
  });

/**
 * Whether a Status says the requested resourceVersion is ahead of the server: after an etcd
 * restore, or behind another relay that restarted, the history a client holds is gone, and
 * client-go's reflector relists (`isTooLargeResourceVersionError`: the cause, or the message
 * older servers sent).
 */
export function isTooLargeResourceVersion(status: Pick<Status, "message" | "details"> | undefined): boolean {
  if (!status) return false;
  return status.details?.causes?.some((c) => c.reason === "ResourceVersionTooLarge") === true || (status.message ?? "").includes("Too large resource version");
}

/** The `Retry-After` header a Status asks for, as the API server's `ErrorNegotiated` copies it. */
export function retryAfterHeader(status: Status): string | undefined {
  const seconds = status.details?.retryAfterSeconds;
  return seconds && seconds > 0 ? String(seconds) : undefined;
}

/** An error before a stream starts: the Status as JSON with its code, and `Retry-After` when it asks for one. */
export function statusResponse(status: Status, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  h.set("cache-control", "no-cache, private");
  const retryAfter = retryAfterHeader(status);
  if (retryAfter) h.set("retry-after", retryAfter);
  return new Response(`${JSON.stringify(status)}\n`, { status: status.code ?? 500, headers: h });
}
