/**
 * @module
 * The Workers side of a WebSocket's opening and closing handshakes, the same for every socket the
 * relay accepts (a hub's subscribers, a relay socket's client): the 101 that hands the socket
 * over, agreeing to no extension, and the answer to a peer's close frame.
 */
import { CLOSE } from "./k8s/websocket.ts";

/**
 * The extensions the relay agrees to on a watch WebSocket: none. Left unset, workerd accepts the
 * permessage-deflate every browser (and Node's `ws`) offers, and then deflates every message for
 * every subscriber separately, which costs more than the send itself and undoes serialising
 * once; the API server does not compress watch WebSockets either. workerd takes an agreement
 * that names no extension it knows as "no compression" and sends no header.
 */
const NO_EXTENSIONS = "identity";

/** Close codes a peer may report but no endpoint may send (RFC 6455 §7.4.1). */
const RESERVED_CLOSE_CODES = new Set([1005, 1006, 1015]);

/** The 101 that hands `client` to the peer: `protocol` echoed, no extension agreed. */
export function upgradeResponse(client: WebSocket, protocol: string | undefined): Response {
  const headers: Record<string, string> = { "sec-websocket-extensions": NO_EXTENSIONS };
  if (protocol) headers["sec-websocket-protocol"] = protocol;
  return new Response(null, { status: 101, webSocket: client, headers });
}

/**
 * Answer a peer's close frame with ours (echoing its code, or `1000` for one no endpoint may
 * send): sockets the runtime does not answer for leave the peer waiting, then reporting 1006.
 */
export function answerClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(RESERVED_CLOSE_CODES.has(code) ? CLOSE.normal : code, reason);
  } catch {
    // already closed
  }
}
