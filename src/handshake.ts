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

/** What a close frame without a status code is reported as (RFC 6455 §7.1.5); no endpoint sends it. */
const NO_STATUS = 1005;
/** The answer to a close frame whose code no endpoint may send (RFC 6455 §7.4). */
const PROTOCOL_ERROR = 1002;

/**
 * Codes an endpoint may send in a close frame: RFC 6455 §7.4.1's (1000-1003, 1007-1011), the
 * IANA registry's later ones (1012-1014), and the ranges for libraries and applications
 * (3000-4999). Anything else (999, 1004, the reported-only 1005, 1006 and 1015, the unassigned
 * 1016-2999, 5000 and up) is a protocol error.
 */
const isSendableCloseCode = (code: number): boolean => (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);

/** The 101 that hands `client` to the peer: `protocol` echoed, no extension agreed. */
export function upgradeResponse(client: WebSocket, protocol: string | undefined): Response {
  const headers: Record<string, string> = { "sec-websocket-extensions": NO_EXTENSIONS };
  if (protocol) headers["sec-websocket-protocol"] = protocol;
  return new Response(null, { status: 101, webSocket: client, headers });
}

/**
 * Answer a peer's close frame with ours, as RFC 6455 asks: its code echoed; `1000` for a close
 * that carried none; `1002` (protocol error) for a code no endpoint may send. Sockets the runtime
 * does not answer for leave the peer waiting, then reporting 1006; and the runtime's own answer
 * echoes any code, invalid ones included.
 */
export function answerClose(ws: WebSocket, code: number, reason: string): void {
  try {
    if (code === NO_STATUS) ws.close(CLOSE.normal);
    else if (isSendableCloseCode(code)) ws.close(code, reason);
    else ws.close(PROTOCOL_ERROR, `close code ${code} is not one an endpoint may send (RFC 6455 section 7.4)`);
  } catch {
    // already closed
  }
}
