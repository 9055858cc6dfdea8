/**
 * @module
 * `/_relay/socket`: many watches on one WebSocket. The Worker admits the socket as it admits a
 * watch WebSocket — `AUTH_MODE`, host, the token (in the subprotocol, beside one other), origin
 * — and hands it to a mux object of its own, which opens each watch the client asks for through
 * the relay's own routes, so every watch is resolved and authorised as a standalone one. A JWT
 * is verified now (its expiry ends the socket); in `kube` mode the default cluster reviews the
 * token first, as it does for the operator routes, so no socket is held, and no op is read, for
 * a token no cluster has taken.
 */
import type { Env } from "../env.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import { MUX_PATH } from "../k8s/mux.ts";
import { badRequest, statusResponse } from "../k8s/status.ts";
import { isWebSocketUpgrade } from "../k8s/websocket.ts";
import { socketRequests } from "../mux/request.ts";
import type { RefusalReason } from "../metrics/catalog.ts";
import { upstreamFor } from "../upstream.ts";
import { frontDoor, originRefusal, type Authenticator } from "./auth.ts";
import { websocketProtocol } from "./websocket.ts";

export async function openSocket(env: Env, request: Request, auth: Authenticator, refused: (reason: RefusalReason) => void): Promise<Response> {
  const mode = frontDoor(env, request, refused);
  if (!mode.ok) return statusResponse(mode.status);
  if (!isWebSocketUpgrade(request)) {
    return statusResponse(badRequest(`${MUX_PATH} is a WebSocket endpoint: connect with Upgrade: websocket, then send {"op":"watch",...} messages`));
  }
  const identity = await auth.authenticate(mode.value, env, request, mode.value === "kube" ? upstreamFor(env, DEFAULT_CLUSTER) : undefined);
  if (!identity.ok) return statusResponse(identity.status);
  const protocol = websocketProtocol(request);
  if (!protocol.ok) return statusResponse(protocol.status);
  const wrongOrigin = originRefusal(env, request, refused);
  if (wrongOrigin) return statusResponse(wrongOrigin);
  const mux = env.WATCH_MUX.get(env.WATCH_MUX.newUniqueId());
  return mux.fetch(socketRequests.attach(request, { protocol: protocol.value, expiresAt: identity.value.expiresAt, subject: identity.value.subject }));
}
