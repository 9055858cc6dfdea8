/**
 * @module
 * The default transport: the runtime's global `fetch` and `WebSocket`, which browsers and
 * Node 22 both have (what a watch socket offers is the wire contract's `watchProtocols`).
 */
import type { Transport, WatchSocket } from "./types.ts";

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
  const transport: Transport = {
    fetch: (url, init) => (custom?.fetch ? custom.fetch(url, init) : fetch(url, init)),
    connect: (url, protocols) => (custom?.connect ? custom.connect(url, protocols) : openWebSocket(url, protocols)),
  };
  if (custom?.list) transport.list = (url, token, signal) => custom.list!(url, token, signal);
  return transport;
}
