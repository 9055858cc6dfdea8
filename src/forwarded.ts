/**
 * @module
 * A decision carried to a Durable Object in one header of the request forwarded to it. The
 * request must stay the client's own (a WebSocket upgrade reaches a Durable Object only as a
 * `fetch`), so what the Worker decided rides along as JSON instead of as an RPC argument.
 */
export interface Carrier<T> {
  /** The client's request to forward, with `value` in the header. */
  attach(original: Request, value: T): Request;
  /** What the Worker attached, or `undefined` for a request that did not come through it. */
  read(request: Request): T | undefined;
}

export function carrier<T>(header: string): Carrier<T> {
  return {
    attach(original, value) {
      const headers = new Headers(original.headers);
      headers.set(header, JSON.stringify(value));
      return new Request(original.url, { method: "GET", headers });
    },
    read(request) {
      const value = request.headers.get(header);
      return value ? (JSON.parse(value) as T) : undefined;
    },
  };
}

/**
 * `fetch` options for a Durable Object's answer as the object wrote it: a list it gzip-coded passes
 * through, not decoded here and coded again (the option counts only given to `fetch`: a `Request`
 * does not keep it).
 */
export const AS_WRITTEN = { encodeResponseBody: "manual" } as const;
