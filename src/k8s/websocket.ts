/**
 * @module
 * What travels on a watch WebSocket besides the events, shared by the relay and its client:
 * - the API server's bearer-token subprotocol, `base64url.bearer.authorization.k8s.io.<token>`
 *   (apiserver `pkg/authentication/request/websocket/protocol.go`), since browsers cannot set
 *   headers on a WebSocket;
 * - the relay's acknowledgement, `{"type":"ACK","received":n}` (n: the summed length of the text
 *   messages taken so far on the socket). Workers cannot see a socket's send buffer, so this is
 *   how a hub knows how far behind a subscriber is. The API server ignores what clients send,
 *   so the message is harmless there;
 * - the relay's batch subprotocol: a client that offers it gets several events per message,
 *   newline-separated (each still ends with `\n`), as many as were ready together. Under load
 *   that is far fewer messages, which is what a WebSocket costs. Without it, one event per
 *   message, as from the API server.
 */
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";

export const BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io.";

export const bearerProtocol = (token: string): string => BEARER_PROTOCOL_PREFIX + encodeBase64Url(token);

/** The token in a bearer subprotocol, or `undefined` if it carries none that decodes. */
export function tokenOfProtocol(protocol: string): string | undefined {
  if (!protocol.startsWith(BEARER_PROTOCOL_PREFIX)) return undefined;
  const token = decodeBase64Url(protocol.slice(BEARER_PROTOCOL_PREFIX.length));
  return token ? token : undefined;
}

export const BATCH_PROTOCOL = "batch.watch.kube-watch-relay.dev";

export const ackMessage = (received: number): string => JSON.stringify({ type: "ACK", received });

/** `received` of an ACK message, or `undefined` for anything else a client sends. */
export function parseAck(message: string | ArrayBuffer): number | undefined {
  if (typeof message !== "string" || message.length > 200) return undefined;
  try {
    const parsed = JSON.parse(message) as { type?: unknown; received?: unknown };
    return parsed.type === "ACK" && typeof parsed.received === "number" && parsed.received >= 0 ? parsed.received : undefined;
  } catch {
    return undefined;
  }
}
