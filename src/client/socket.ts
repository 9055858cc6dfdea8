/**
 * @module
 * A WebSocket as a pull stream: text messages in arrival order, then exactly one close. The
 * watch takes the next item only when its consumer asks for the next update, so what is
 * queued here is what the application has not processed yet, which is what the ACKs report.
 */
import { CLOSE } from "../k8s/websocket.ts";
import type { WatchSocket } from "./types.ts";

export type SocketItem = { kind: "message"; text: string } | { kind: "close"; code: number; reason: string };

export class SocketReader {
  readonly #socket: WatchSocket;
  #queue: SocketItem[] = [];
  #head = 0;
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(socket: WatchSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      // The relay and the API server send JSON watch events as text frames; nothing else is a watch event.
      if (typeof event.data === "string") this.#push({ kind: "message", text: event.data });
    });
    socket.addEventListener("close", (event) => this.#end(event.code, event.reason));
    socket.addEventListener("error", () => this.#end(CLOSE.abnormal, "the connection failed"));
  }

  async next(): Promise<SocketItem> {
    while (this.#head === this.#queue.length) await new Promise<void>((resolve) => (this.#wake = resolve));
    const item = this.#queue[this.#head++] as SocketItem;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
    return item;
  }

  /** Close from this side: the stream ends here, without waiting for the peer's close frame. */
  close(code: number, reason: string): void {
    if (this.#ended) return;
    try {
      this.#socket.close(code, reason);
    } catch {
      // already closing
    }
    this.#end(code, reason);
  }

  #end(code: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#push({ kind: "close", code, reason });
  }

  #push(item: SocketItem): void {
    if (this.#ended && item.kind === "message") return;
    this.#queue.push(item);
    this.#wake?.();
    this.#wake = undefined;
  }
}
