/**
 * @module
 * Where a subscriber's bearer token travels: the `Authorization` header, or — on a WebSocket
 * upgrade only, for browsers, whose WebSocket API cannot set headers — the subprotocol
 * `base64url.bearer.authorization.k8s.io.<base64url(token)>`, as the API server accepts it
 * (apiserver `pkg/authentication/request/websocket/protocol.go`). A token must be printable
 * ASCII, so that it is a valid header value upstream and nothing the runtime would warn about
 * (and print) when it is sent. Tokens are identified by a hash in caches and logs, never by
 * themselves.
 */
import { isWebSocketUpgrade, parseOffer } from "../k8s/websocket.ts";

export type Credential = { ok: true; token: string | undefined } | { ok: false; reason: string };

// Every form of Kubernetes token (JWTs, bootstrap and static tokens, cloud providers') fits: token68 and more.
const TOKEN = /^[\x21-\x7e]+$/;

/** The request's bearer token (`undefined`: none), or why what it carries is not one. */
export function bearerToken(request: Request): Credential {
  const header = request.headers.get("authorization");
  let token: string | undefined;
  if (header !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return { ok: false, reason: "the Authorization header is not a bearer token" };
    token = match[1];
  } else if (isWebSocketUpgrade(request)) {
    const offer = parseOffer(request.headers.get("sec-websocket-protocol"));
    if ("refused" in offer) return { ok: false, reason: offer.refused };
    token = offer.token;
  }
  if (token !== undefined && !TOKEN.test(token)) return { ok: false, reason: "the bearer token is malformed: it must be printable ASCII" };
  return { ok: true, token };
}

/** A stable, non-reversible id for a token: SHA-256, hex, first 16 bytes. */
export async function tokenId(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
