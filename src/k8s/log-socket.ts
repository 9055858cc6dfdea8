/**
 * @module
 * A pod's log over a WebSocket, as the API server streams it (apiserver `StreamObject` with
 * `wsstream.NewReader(…, NewDefaultReaderProtocols())`): the subprotocol chooses the framing —
 * `binary.k8s.io` (or none) for binary messages of the log's bytes as they are,
 * `base64.binary.k8s.io` for text messages of their base64 (what browsers that cannot read
 * binary frames' bytes as text, and the API server's token subprotocol beside it, use) — the first
 * message is empty (the API server's "ping"), and the socket closes when the log ends. Messages
 * a client sends are ignored (the relay reads its acknowledgements, as on a watch).
 */
import { BINARY_PROTOCOL, bearerProtocol } from "./websocket.ts";

/** The log's bytes as binary messages (also what no subprotocol means). */
export const LOG_BINARY_PROTOCOL = "binary.k8s.io";
/** The log's bytes as base64 in text messages. */
export const LOG_BASE64_PROTOCOL = BINARY_PROTOCOL;

/** Whether `protocol` (the one besides the token, if any) is one a log socket speaks. */
export const isLogProtocol = (protocol: string | undefined): boolean => protocol === undefined || protocol === LOG_BINARY_PROTOCOL || protocol === LOG_BASE64_PROTOCOL;

/** The message that carries `bytes` on a socket of `protocol`. */
export function logMessage(bytes: Uint8Array, protocol: string | undefined): string | Uint8Array {
  if (protocol !== LOG_BASE64_PROTOCOL) return bytes;
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes a message of a log socket carries (a binary message's, or a base64 text message's). */
export function logBytes(data: string | ArrayBuffer | Uint8Array): Uint8Array {
  if (typeof data !== "string") return data instanceof Uint8Array ? data : new Uint8Array(data);
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** What a client offers to read a log as binary messages, with its token beside it (the API server requires one other protocol). */
export const logProtocols = (token: string | undefined): string[] => (token === undefined ? [LOG_BINARY_PROTOCOL] : [LOG_BINARY_PROTOCOL, bearerProtocol(token)]);
