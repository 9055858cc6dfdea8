/**
 * @module
 * When to acknowledge (`src/k8s/websocket.ts`): often enough that the hub sees how far behind
 * this subscriber is — it cuts one that falls too far behind (close 4008) rather than buffer
 * without bound, and the watch resumes — and no more often than that costs.
 */
import { ackMessage } from "../k8s/websocket.ts";

/** Acknowledge at least this often while messages arrive... */
const ACK_INTERVAL_MS = 250;
/** ...and at once after this many unacknowledged UTF-16 units (the relay counts string length). */
const ACK_BYTES = 64 * 1024;

export class Acknowledger {
  readonly #send: (text: string) => void;
  #taken = 0;
  #acked = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(send: (text: string) => void) {
    this.#send = send;
  }

  /** A message of `length` was processed. */
  taken(length: number): void {
    this.#taken += length;
    if (this.#taken - this.#acked >= ACK_BYTES) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), ACK_INTERVAL_MS);
  }

  flush(): void {
    this.stop();
    if (this.#taken === this.#acked) return;
    this.#acked = this.#taken;
    try {
      this.#send(ackMessage(this.#taken));
    } catch {
      // the socket is closing; its close ends the session
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
