/**
 * @module
 * What travels between the Worker and a socket's mux object, and from the mux object back
 * into the relay: the socket as the Worker admitted it (its original request, with what the
 * Worker decided in one header), and each watch or logs op as the standalone WebSocket request
 * it stands for, carrying the socket's token and origin, so the relay resolves, authorises and admits it
 * exactly as that request.
 */
import { bearerToken } from "../auth/token.ts";
import { carrier } from "../forwarded.ts";
import { logsQuery, viewQuery, watchQuery, type StreamOp, type ViewOp, type WatchOp } from "../k8s/mux.ts";
import { logProtocols } from "../k8s/log-socket.ts";
import { bearerProtocol, PACED_PROTOCOL } from "../k8s/websocket.ts";

/** What the Worker decided about a socket. */
export interface SocketAdmission {
  /** The subprotocol to echo (beside the token): `batch.watch.kube-watch-relay.dev` asks for batches. */
  protocol?: string | undefined;
  /** jwt: when the socket's token expires (epoch ms), which ends the socket. */
  expiresAt?: number | undefined;
  /** Who, for the logs (absent without auth). */
  subject?: string | undefined;
}

/** The socket's request forwarded to its mux object, with what the Worker decided. */
export const socketRequests = carrier<SocketAdmission>("x-relay-socket");

/**
 * What each of a socket's watches is asked with: its token (already checked by the Worker),
 * origin, and the client's address as Cloudflare's edge gave it, so the watches count against
 * that client's limits (`kube` mode's token reviews) as its own requests would.
 */
export interface Credentials {
  base: string;
  token: string | undefined;
  origin: string | null;
  client: string | null;
}

export function credentialsOf(socket: Request): Credentials {
  const credential = bearerToken(socket);
  return {
    base: new URL(socket.url).origin,
    token: credential.ok ? credential.token : undefined,
    origin: socket.headers.get("origin"),
    client: socket.headers.get("cf-connecting-ip"),
  };
}

/**
 * The standalone WebSocket watch (or live view) an op stands for. It offers the paced batch
 * subprotocol, so its hub sends what is ready together in one message, at most once per its
 * pace, which the mux object retags and forwards whole.
 */
export function watchRequest(op: WatchOp | ViewOp, credentials: Credentials): Request {
  const query = op.op === "view" ? viewQuery(op) : watchQuery(op);
  const protocols = credentials.token === undefined ? [PACED_PROTOCOL] : [PACED_PROTOCOL, bearerProtocol(credentials.token)];
  return socketRequest(`${op.path}?${query}`, protocols, credentials);
}

/** The standalone WebSocket log request a logs op stands for, reading the log as binary messages. */
export function logsRequest(op: Extract<StreamOp, { op: "logs" }>, credentials: Credentials): Request {
  const query = logsQuery(op).toString();
  return socketRequest(`${op.path}${query ? `?${query}` : ""}`, logProtocols(credentials.token), credentials);
}

/** The request an op stands for. */
export const opRequest = (op: StreamOp, credentials: Credentials): Request => (op.op === "logs" ? logsRequest(op, credentials) : watchRequest(op, credentials));

function socketRequest(pathAndQuery: string, protocols: string[], credentials: Credentials): Request {
  const headers: Record<string, string> = { upgrade: "websocket", "sec-websocket-protocol": protocols.join(", ") };
  if (credentials.origin !== null) headers.origin = credentials.origin;
  if (credentials.client !== null) headers["cf-connecting-ip"] = credentials.client;
  return new Request(`${credentials.base}${pathAndQuery}`, { headers });
}
