/**
 * @module
 * The default transport (the runtime's global `fetch` and `WebSocket`, which browsers and
 * Node 22 both have) and how a bearer token rides on each: the API server's WebSocket token
 * subprotocol, since browsers cannot set headers on a WebSocket, and `Authorization` on lists.
 */
import { bearerProtocol } from "../k8s/websocket.ts";
import type { Transport, WatchSocket } from "./types.ts";

/**
 * The subprotocol sent beside the token one: the API server rejects a token protocol alone
 * ("missing additional subprotocol"), and echoes this one. Watch frames stay JSON text.
 */
export const BINARY_PROTOCOL = "base64.binary.k8s.io";
/** `[base64.binary.k8s.io, base64url.bearer.authorization.k8s.io.<base64url-nopad(token)>]`. */
export const bearerProtocols = (token: string): string[] => [BINARY_PROTOCOL, bearerProtocol(token)];

export const authorization = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { authorization: `Bearer ${token}` });

/** Open a standard WebSocket; resolves on `open`, rejects if it closes or fails first. */
export function openWebSocket(url: string, protocols: string[]): Promise<WatchSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
    const settle = (ok: boolean) => () => {
      socket.removeEventListener("open", opened);
      socket.removeEventListener("error", failed);
      socket.removeEventListener("close", failed);
      if (ok) resolve(socket);
      else reject(new Error(`WebSocket closed before it opened (readyState ${socket.readyState})`));
    };
    const opened = settle(true);
    const failed = settle(false);
    socket.addEventListener("open", opened);
    socket.addEventListener("error", failed);
    socket.addEventListener("close", failed);
  });
}

/** The given transport's methods (called on it, so class instances work), the globals for the rest. */
export function transportOf(custom: Partial<Transport> | undefined): Transport {
  return {
    fetch: (url, init) => (custom?.fetch ? custom.fetch(url, init) : fetch(url, init)),
    connect: (url, protocols) => (custom?.connect ? custom.connect(url, protocols) : openWebSocket(url, protocols)),
  };
}
