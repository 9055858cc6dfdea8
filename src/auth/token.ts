/**
 * @module
 * Where a subscriber's bearer token travels: the `Authorization` header, or — for browsers,
 * whose WebSocket API cannot set headers — the WebSocket subprotocol
 * `base64url.bearer.authorization.k8s.io.<base64url(token)>`, as the API server accepts it
 * (apiserver `pkg/authentication/request/websocket/protocol.go`). Tokens are identified by a
 * hash in caches and logs, never by themselves.
 */
import { BEARER_PROTOCOL_PREFIX, tokenOfProtocol } from "../k8s/websocket.ts";

export function offeredProtocols(request: Request): string[] {
  return (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** The request's bearer token, if it carries one; `null` if it carries a malformed one. */
export function bearerToken(request: Request): string | undefined | null {
  const header = request.headers.get("authorization");
  if (header !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1] : null;
  }
  const protocol = offeredProtocols(request).find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (protocol === undefined) return undefined;
  return tokenOfProtocol(protocol) ?? null;
}

/** A stable, non-reversible id for a token: SHA-256, hex, first 16 bytes. */
export async function tokenId(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
