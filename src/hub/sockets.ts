/**
 * @module
 * The hub's WebSocket subscribers: sockets the hub accepts and listens to itself. This keeps
 * which socket is which subscriber, turns messages into acknowledgements and answers closes.
 *
 * `accept()`, not the hibernation API (`acceptWebSocket`): a hub with subscribers holds an
 * upstream watch, so it never hibernates, and workerd keeps a hibernatable socket's connection
 * open after a close the hub starts (timeoutSeconds, an expired token, a cut-off) until the
 * client gives up on it (docs/wire-contract.md, "Closing handshake"; docs/decisions/0003), where an accepted socket's closes at
 * once. An accepted socket lives and dies with the hub's instance: none outlives an eviction
 * or a crash to be found, position unknown, by the next.
 */
import { answerClose, upgradeResponse } from "../handshake.ts";
import { CLOSE, type Framing, parseAck } from "../k8s/websocket.ts";
import type { Log } from "../log.ts";
import { type CloseReason, type Subscriber, WebSocketSink } from "./subscriber.ts";

/** The largest message a subscriber may send (characters): ACKs are a few dozen. */
const MAX_CLIENT_MESSAGE = 4096;

/** What the sockets tell of their subscribers: one left (or must, with a reason), or one acknowledged. */
export interface SocketSubscribers<S> {
  detach(subscriber: S, reason?: CloseReason): void;
  wake(): void;
}

/** A watch hub's subscribers, or a log hub's followers (`src/logs`), which take the same ACKs and closes. */
export class HubSockets<S = Subscriber> {
  readonly #fanout: SocketSubscribers<S>;
  readonly #log: Log;
  readonly #subscribers = new Map<WebSocket, { subscriber: S; sink: WebSocketSink }>();

  constructor(fanout: SocketSubscribers<S>, log: Log) {
    this.#fanout = fanout;
    this.#log = log;
  }

  /** A new watch socket: its sink (batched, or compressed, as the client asked), and the 101 that hands the other end to the client. */
  open(framing: Pick<Framing, "batched" | "compressed">, protocol: string | undefined): { sink: WebSocketSink; response: Response } {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    // Half-open: the client's close is answered by `answerClose`, not by the runtime, which would echo any code.
    server.accept({ allowHalfOpen: true });
    server.addEventListener("message", (event) => this.#handle("message", () => this.#message(server, event.data as string | ArrayBuffer)));
    server.addEventListener("close", (event) => this.#handle("close", () => this.#closed(server, event.code, event.reason)));
    server.addEventListener("error", () => this.#handle("error", () => this.#gone(server)));
    return { sink: new WebSocketSink(server, framing), response: upgradeResponse(client, protocol) };
  }

  /** The socket's subscriber is attached: its messages and close are now its own. */
  register(sink: WebSocketSink, subscriber: S): void {
    this.#subscribers.set(sink.socket, { subscriber, sink });
  }

  #message(ws: WebSocket, message: string | ArrayBuffer): void {
    // None: the watch was refused or has ended, and the socket is closing.
    const registered = this.#subscribers.get(ws);
    if (!registered) return;
    const { subscriber, sink } = registered;
    // The runtime has already taken the message in whole; a peer that sends more than an ACK's
    // worth is not a watch client, and is not given the chance to do it twice.
    const size = typeof message === "string" ? message.length : message.byteLength;
    if (size > MAX_CLIENT_MESSAGE) {
      this.#fanout.detach(subscriber, { code: CLOSE.tooBig, reason: `a watch client sends only acknowledgements (at most ${MAX_CLIENT_MESSAGE} characters a message)` });
      return;
    }
    // Anything else a client sends is ignored, as the API server ignores it.
    const received = parseAck(message);
    if (received === undefined) return;
    sink.acknowledge(received);
    this.#fanout.wake();
  }

  /** The peer closed: the subscriber leaves, and the close is answered. */
  #closed(ws: WebSocket, code: number, reason: string): void {
    this.#gone(ws);
    answerClose(ws, code, reason);
  }

  #gone(ws: WebSocket): void {
    const registered = this.#subscribers.get(ws);
    this.#subscribers.delete(ws);
    if (!registered) return;
    registered.sink.markClosed();
    this.#fanout.detach(registered.subscriber);
  }

  /** A socket event, its failure logged (an event listener's exception would reach no one). */
  #handle(what: string, handle: () => void): void {
    try {
      handle();
    } catch (e) {
      this.#log(`socket ${what} failed`, { error: String(e), stack: (e as Error).stack }, "error");
    }
  }
}
