/**
 * @module
 * One watch of a shared relay socket, as the `WatchSocket` a `watch()` reads: the relay's lines
 * for its id arrive as its messages, its CLOSED as its close, and its acknowledgements go into
 * the socket's one count. Closing it unwatches.
 */
import { parseAck } from "../k8s/websocket.ts";
import type { WatchSocket } from "./types.ts";

type Listeners = { message: Array<(event: { data: unknown }) => void>; close: Array<(event: { code: number; reason: string }) => void>; error: Array<() => void> };

export interface ChannelHost {
  /** The watch was closed from this side: unwatch it. */
  unwatch(id: string): void;
  /** Units of the socket's messages this watch has taken since it last said. */
  taken(units: number): void;
}

export class Channel implements WatchSocket {
  readonly id: string;
  readonly #host: ChannelHost;
  readonly #listeners: Listeners = { message: [], close: [], error: [] };
  /** Units delivered, and of those, acknowledged by the watch as taken. */
  #delivered = 0;
  #acked = 0;
  #ended = false;

  constructor(id: string, host: ChannelHost) {
    this.id = id;
    this.#host = host;
  }

  /** A message of the relay socket holding this watch's lines. */
  deliver(text: string): void {
    if (this.#ended) return this.#host.taken(text.length);
    this.#delivered += text.length;
    for (const listener of this.#listeners.message) listener({ data: text });
  }

  /** The watch ended (its CLOSED, or the socket's close); what was delivered counts as taken. */
  end(code: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#host.taken(this.#delivered - this.#acked);
    this.#acked = this.#delivered;
    for (const listener of this.#listeners.close) listener({ code, reason });
  }

  /** The watch's acknowledgement (`{"type":"ACK","received":n}`, n counted over this watch's messages). */
  send(message: string): void {
    const received = parseAck(message);
    if (received === undefined || this.#ended || received <= this.#acked) return;
    const taken = Math.min(received, this.#delivered);
    this.#host.taken(taken - this.#acked);
    this.#acked = taken;
  }

  close(code = 1000, reason = ""): void {
    if (this.#ended) return;
    this.#host.unwatch(this.id);
    this.end(code, reason);
  }

  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
  addEventListener(type: keyof Listeners, listener: never): void {
    (this.#listeners[type] as unknown[]).push(listener);
  }
}
