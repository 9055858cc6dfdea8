/**
 * @module
 * How the reflector's upstream fails: an HTTP status and what the server said, or an upstream
 * object too big for a row of the hub's storage, which says what to do about it.
 */
import { retryAfterMs } from "../k8s/backoff.ts";
import { isTooLargeResourceVersion } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { OBJECT_BYTES } from "./row-limit.ts";

/** An upstream failure: an HTTP status (0 for a connection error) and what the server said. */
export class UpstreamError extends Error {
  readonly status: number;
  readonly retryAfterMs: number;
  /** The upstream said the resourceVersion asked for is ahead of it ("Too large resource version"). */
  readonly tooLarge: boolean;
  constructor(status: number, message: string, retryAfter = 0, tooLarge = false) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfter;
    this.tooLarge = tooLarge;
  }
}

/** The upstream's answer to `url`, not a success, as the error it is: its Status's message (or its text), its `Retry-After`, whether it said "too large resource version". */
export async function upstreamFailure(response: Response, url: string, now: number): Promise<UpstreamError> {
  const text = await response.text().catch(() => "");
  let status: Status | undefined;
  try {
    status = JSON.parse(text) as Status;
  } catch {
    // not a Status: its raw text is the message
  }
  const message = status?.message ?? text.slice(0, 300);
  return new UpstreamError(response.status, `upstream ${response.status} for ${url}: ${message}`, retryAfterMs(response.headers.get("retry-after"), now), isTooLargeResourceVersion(status));
}

/**
 * A consistent read whose probe of the upstream failed (`probe.ts`): the relay could not learn
 * whether its hub has what the upstream had, so it does not answer from it.
 */
export class UnconfirmedRead extends UpstreamError {
  constructor(cause: UpstreamError) {
    super(cause.status, `the relay could not ask the upstream API server how far it has got, which a read without resourceVersion needs: ${cause.message}`, cause.retryAfterMs);
  }
}

/** An upstream object too big for a row of the hub's storage: nothing retried mends it until the object changes. */
export class ObjectTooLarge extends UpstreamError {
  constructor(message: string) {
    super(413, message);
  }
}

/** `what` is `chars` long (at least), more than a hub can store: the error that says so, and what to do. */
export function tooLarge(what: string, chars: number): ObjectTooLarge {
  return new ObjectTooLarge(
    `${what} is ${chars.toLocaleString("en")} bytes or more as JSON, over the ${OBJECT_BYTES.toLocaleString("en")} bytes a relay hub stores an object in ` +
      `(Durable Object SQL holds at most 2 MB a row): the relay cannot serve this collection while the collection has that object; ` +
      "read it from the API server, or watch with a label or field selector that leaves the object out",
  );
}
