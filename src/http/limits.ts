/**
 * @module
 * Size limits checked before any other work, so an oversized request costs the relay nothing.
 * The API server (Go's net/http) answers a request head larger than it accepts with 431 — the
 * URL is part of that head; a selector too long to be a real one is a bad request. (Reads carry
 * no body, and the runtime does not pass one on a GET.)
 */
import { failure } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";

export const MAX_URL_BYTES = 8 * 1024;
export const MAX_HEADER_BYTES = 16 * 1024;
export const MAX_SELECTOR_BYTES = 4 * 1024;

export function oversized(request: Request, url: URL): Status | undefined {
  if (request.url.length > MAX_URL_BYTES) {
    return failure(431, "RequestHeaderFieldsTooLarge", `the request URL is longer than ${MAX_URL_BYTES} bytes`);
  }
  let headers = 0;
  request.headers.forEach((value, name) => (headers += name.length + value.length + 4));
  if (headers > MAX_HEADER_BYTES) return failure(431, "RequestHeaderFieldsTooLarge", `the request headers are larger than ${MAX_HEADER_BYTES} bytes`);
  for (const name of ["labelSelector", "fieldSelector"]) {
    const value = url.searchParams.get(name);
    if (value !== null && value.length > MAX_SELECTOR_BYTES) return failure(400, "BadRequest", `${name} is longer than ${MAX_SELECTOR_BYTES} bytes`);
  }
  return undefined;
}
