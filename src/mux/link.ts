/**
 * @module
 * One watch (or followed log) of a relay socket: the standalone WebSocket it opened to its hub,
 * and where it is. Each hub message (its events, newline-separated, as the batch subprotocol sends
 * them) is retagged with the watch's id as pieces sliced from it, without parsing the events or
 * copying them; only the message's last event is read, for its resourceVersion, the point this
 * watch would resume from.
 */
import { lastResourceVersion, logLine, taggedPieces, type StreamOp } from "../k8s/mux.ts";

const decoder = new TextDecoder();

export class Link {
  readonly id: string;
  readonly op: StreamOp;
  /** The hub's socket, once it is open. */
  socket: WebSocket | undefined;
  /** The last resourceVersion delivered (or the one the watch started from). */
  resourceVersion: string | undefined;
  /** What the hub has sent so far (UTF-16 units, as the hub counts acknowledgements). */
  received = 0;
  /** Ended: unwatched, closed by its hub, failed, or its socket gone. Nothing more is sent for it. */
  ended = false;

  constructor(op: StreamOp) {
    this.id = op.id;
    this.op = op;
    // "0" and unset start from the current state: nothing to resume from yet. A log has none, nor a view.
    this.resourceVersion = op.op === "watch" && op.resourceVersion && op.resourceVersion !== "0" ? op.resourceVersion : undefined;
  }

  /**
   * A hub message as this watch's lines (each ending in `\n`), in pieces to join; a log hub's
   * (its bytes, a binary message) as one LOG line, or nothing for an empty one.
   */
  retag(message: string | ArrayBuffer): string[] {
    if (typeof message !== "string") {
      this.received += message.byteLength;
      return message.byteLength === 0 ? [] : [logLine(this.id, decoder.decode(message))];
    }
    this.received += message.length;
    const rv = lastResourceVersion(message);
    if (rv) this.resourceVersion = rv;
    return taggedPieces(this.id, message);
  }

  /** Close the hub's socket (unwatched, or the client gone). */
  end(code: number, reason: string): void {
    this.ended = true;
    try {
      this.socket?.close(code, reason.slice(0, 120));
    } catch {
      // already closed
    }
  }
}
