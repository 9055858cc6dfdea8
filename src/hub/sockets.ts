/**
 * @module
 * The hub's WebSocket subscribers as the runtime hands them back: hibernatable sockets, whose
 * messages and closes arrive at the Durable Object's handlers rather than on the socket. This
 * keeps which socket is which subscriber, turns messages into acknowledgements, answers closes,
 * and closes sockets an earlier instance of the hub left behind.
 */
import { answerClose, upgradeResponse } from "../handshake.ts";
import { CLOSE, parseAck } from "../k8s/websocket.ts";
import type { Fanout } from "./fanout.ts";
import { type Subscriber, WebSocketSink } from "./subscriber.ts";

/** The largest message a subscriber may send (characters): ACKs are a few dozen. */
const MAX_CLIENT_MESSAGE = 4096;

export class HubSockets {
  readonly #state: DurableObjectState;
  readonly #fanout: Fanout;
  readonly #subscribers = new Map<WebSocket, Subscriber>();

  constructor(state: DurableObjectState, fanout: Fanout) {
    this.#state = state;
    this.#fanout = fanout;
  }

  /** A new watch socket: its sink (batched if the client asked), and the 101 that hands the other end to the client. */
  open(batched: boolean, protocol: string | undefined): { sink: WebSocketSink; response: Response } {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.#state.acceptWebSocket(server);
    return { sink: new WebSocketSink(server, batched), response: upgradeResponse(client, protocol) };
  }

  /** The socket's subscriber is attached: its messages and close are now its own. */
  register(sink: WebSocketSink, subscriber: Subscriber): void {
    this.#subscribers.set(sink.socket, subscriber);
  }

  message(ws: WebSocket, message: string | ArrayBuffer): void {
    const subscriber = this.#subscribers.get(ws);
    if (!subscriber) return closeOrphan(ws);
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
    (subscriber.sink as WebSocketSink).acknowledge(received);
    this.#fanout.wake();
  }

  /** The peer closed: the subscriber leaves, and the close is answered. */
  closed(ws: WebSocket, code: number, reason: string): void {
    this.gone(ws);
    answerClose(ws, code, reason);
  }

  gone(ws: WebSocket): void {
    const subscriber = this.#subscribers.get(ws);
    this.#subscribers.delete(ws);
    if (!subscriber) return;
    (subscriber.sink as WebSocketSink).markClosed();
    this.#fanout.detach(subscriber);
  }

  /** Sockets that outlived an earlier instance (eviction): their positions are unknown, so they must resume. */
  closeOrphans(): void {
    for (const ws of this.#state.getWebSockets()) if (!this.#subscribers.has(ws)) closeOrphan(ws);
  }
}

function closeOrphan(ws: WebSocket): void {
  try {
    ws.close(CLOSE.restarted, "the hub restarted; resume from your last resourceVersion");
  } catch {
    // already closing
  }
}
