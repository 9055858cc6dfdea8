/**
 * @module
 * WebSocket subprotocol negotiation as the API server does it: its protocol authenticator takes
 * the bearer-token protocol out (and refuses it alone, 401), then golang.org/x/net/websocket
 * under apiserver `watch.go` accepts at most one remaining protocol and echoes it back verbatim
 * (two or more: 400). So a client always gets back one of the protocols it offered, never the
 * token. A protocol that is not a token (RFC 6455 §4.1: printable ASCII without HTTP's
 * separators) is refused (400) rather than echoed: no client may accept it back.
 */
import { badRequest, unauthorized, type Result } from "../k8s/status.ts";
import { isWebSocketUpgrade, parseOffer } from "../k8s/websocket.ts";

/** RFC 7230's `token`, which RFC 6455 §4.1 requires of every subprotocol. */
const PROTOCOL_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The protocol to echo on a WebSocket upgrade (`undefined` when none), or the refusal. */
export function websocketProtocol(request: Request): Result<string | undefined> {
  if (!isWebSocketUpgrade(request)) return { ok: true, value: undefined };
  const offer = parseOffer(request.headers.get("sec-websocket-protocol"));
  if ("refused" in offer) return { ok: false, status: unauthorized(`Unauthorized: ${offer.refused}`) };
  if (offer.others.some((protocol) => !PROTOCOL_TOKEN.test(protocol))) {
    return { ok: false, status: badRequest("a WebSocket subprotocol must be a token (RFC 6455 section 4.1): printable ASCII without spaces or separators such as quotes, slashes or =") };
  }
  if (offer.others.length > 1) {
    return { ok: false, status: badRequest(`at most one WebSocket subprotocol may be offered besides the bearer token, got ${offer.others.length}`) };
  }
  return { ok: true, value: offer.others[0] };
}
