/**
 * @module
 * WebSocket subprotocol negotiation as the API server does it (golang.org/x/net/websocket under
 * apiserver `watch.go`): at most one protocol is accepted and echoed back verbatim; a bearer
 * token may ride along as `base64url.bearer.authorization.k8s.io.<token>` and is never echoed.
 */
import { offeredProtocols } from "../auth/token.ts";
import { BEARER_PROTOCOL_PREFIX } from "../k8s/websocket.ts";
import type { Parsed } from "../k8s/options.ts";
import { badRequest } from "../k8s/status.ts";

/** The protocol to echo on a WebSocket upgrade (`undefined` when none), or a 400. */
export function websocketProtocol(request: Request): Parsed<string | undefined> {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return { ok: true, value: undefined };
  const others = offeredProtocols(request).filter((p) => !p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (others.length > 1) {
    return { ok: false, status: badRequest(`at most one WebSocket subprotocol may be offered besides the bearer token, got ${others.length}`) };
  }
  return { ok: true, value: others[0] };
}
