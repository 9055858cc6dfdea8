/**
 * @module
 * What travels on a watch WebSocket besides the events, shared by the relay and its client:
 * - the API server's bearer-token subprotocol, `base64url.bearer.authorization.k8s.io.<token>`
 *   (apiserver `pkg/authentication/request/websocket/protocol.go`), since browsers cannot set
 *   headers on a WebSocket, offered together with one other subprotocol, the one echoed back;
 * - the relay's acknowledgement, `{"type":"ACK","received":n}` (n: the summed length of the text
 *   messages taken so far on the socket, a compressed message counting as the text it holds). Workers cannot see a socket's send buffer, so this is
 *   how a hub knows how far behind a subscriber is. The API server ignores what clients send,
 *   so the message is harmless there;
 * - the relay's batch subprotocol: a client that offers it gets several events per message,
 *   newline-separated (each still ends with `\n`), as many as were ready together. Under load
 *   that is far fewer messages, which is what a WebSocket costs. Without it, one event per
 *   message, as from the API server;
 * - the compressed framings: the batch (or delta) subprotocol's messages, each as a binary
 *   message holding one whole gzip member of the same text, which a browser's or Node's
 *   `DecompressionStream("gzip")` reads on its own. A hub compresses a message once for every
 *   subscriber it sends it to; short messages, and what a hub sends besides events, may stay text.
 */
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";

export const BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io.";

export const bearerProtocol = (token: string): string => BEARER_PROTOCOL_PREFIX + encodeBase64Url(token);

/** What browser clients of the API server (Headlamp, for one) offer beside the token; the watch handler ignores its name. */
export const BINARY_PROTOCOL = "base64.binary.k8s.io";

/** A WebSocket handshake (`Upgrade: websocket`, any case), the only request a token subprotocol counts on. */
export const isWebSocketUpgrade = (request: Request): boolean => request.headers.get("upgrade")?.toLowerCase() === "websocket";

/** What a WebSocket handshake offers: the bearer token it carries, if any, and the other subprotocols in order. */
export interface Offer {
  token: string | undefined;
  others: string[];
}

/**
 * `Sec-WebSocket-Protocol` read as the API server's protocol authenticator reads it: at most one
 * bearer-token protocol, whose value must be base64url of UTF-8, and — since the token must
 * never be echoed and a client that offered protocols needs one back — at least one other
 * protocol beside it ("missing additional subprotocol"). A refusal is the API server's 401.
 */
export function parseOffer(header: string | null): Offer | { refused: string } {
  const offered = (header ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const bearer = offered.filter((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  const others = offered.filter((p) => !p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (bearer.length === 0) return { token: undefined, others };
  if (bearer.length > 1) return { refused: "more than one bearer-token WebSocket subprotocol was offered" };
  const token = decodeBase64Url((bearer[0] ?? "").slice(BEARER_PROTOCOL_PREFIX.length));
  if (!token) return { refused: "the bearer-token WebSocket subprotocol does not hold base64url of UTF-8" };
  if (others.length === 0) {
    return { refused: `the bearer-token WebSocket subprotocol needs one other subprotocol beside it to be echoed back (for example ${BINARY_PROTOCOL}), as the API server requires` };
  }
  return { token, others };
}

export const BATCH_PROTOCOL = "batch.watch.kube-watch-relay.dev";

/**
 * The batch subprotocol plus deltas: a MODIFIED of an object the subscriber already has may come
 * as a merge patch against the version it has (see `delta.ts`).
 */
export const DELTA_PROTOCOL = "delta.watch.kube-watch-relay.dev";

/**
 * The batch subprotocol, paced: what is ready goes out at most once per the hub's pace, together
 * (`PACE_MS`). A relay socket's mux object asks its hubs for it: it forwards each message, so
 * fewer, fuller ones cost it and the hub less per event.
 */
export const PACED_PROTOCOL = "paced.watch.kube-watch-relay.dev";

/** Compressed framings: the protocol's name with this in front (`gzip.batch…`, `gzip.delta…`). */
export const GZIP_PREFIX = "gzip.";
export const GZIP_BATCH_PROTOCOL = GZIP_PREFIX + BATCH_PROTOCOL;
export const GZIP_DELTA_PROTOCOL = GZIP_PREFIX + DELTA_PROTOCOL;

/** How a watch socket's events are framed, by the subprotocol echoed. */
export interface Framing {
  /** Several events per message (the batch, paced and delta protocols); otherwise one, as the API server sends. */
  batched: boolean;
  /** MODIFIED events as merge patches where shorter (the delta protocol). */
  deltas: boolean;
  /** Messages as gzip, in binary messages (the `gzip.` protocols). */
  compressed: boolean;
}

/** The framing a subprotocol asks for; any other (none, `base64.binary.k8s.io`, …) is one event per text message. */
export function framingOf(protocol: string | undefined): Framing {
  const compressed = protocol?.startsWith(GZIP_PREFIX) === true;
  const base = compressed ? protocol?.slice(GZIP_PREFIX.length) : protocol;
  const deltas = base === DELTA_PROTOCOL;
  const batched = deltas || base === BATCH_PROTOCOL || (!compressed && base === PACED_PROTOCOL);
  return { batched, deltas, compressed: compressed && batched };
}

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

/**
 * Close codes a watch WebSocket can end with, each with what the client should do. Every one but
 * the credential and access codes means "resume from your last resourceVersion".
 */
export const CLOSE = {
  /** `timeoutSeconds` reached, or the stream ended after an ERROR event. */
  normal: 1000,
  /** Reported by a client whose connection failed without a close frame; never sent (RFC 6455 §7.1.5). */
  abnormal: 1006,
  /** The client sent a message larger than a watch client needs to. */
  tooBig: 1009,
  /** Fell behind its send budget or out of the window. */
  slow: 4008,
  /** The credentials expired or stopped being accepted: reconnect with fresh ones. */
  unauthorized: 4401,
  /** Access to this collection was revoked during the watch. */
  forbidden: 4403,
  /** The relay could not re-verify access, so it stopped the watch (fail closed). */
  unverified: 4503,
} as const;

/**
 * `[delta or batch, bearer token?]`: one of the relay's own protocols (delta is batch plus
 * merge patches; `compressed`, their gzip framings), which is also the one the API server
 * requires beside a token protocol ("missing additional subprotocol"): it echoes any single
 * one, and then sends one whole event per text message, which a batch reader reads as batches
 * of one — as does a relay from before the compressed framings.
 */
export function watchProtocols(token: string | undefined, deltas: boolean, compressed = false): string[] {
  const framing = (compressed ? GZIP_PREFIX : "") + (deltas ? DELTA_PROTOCOL : BATCH_PROTOCOL);
  return token === undefined ? [framing] : [framing, bearerProtocol(token)];
}
