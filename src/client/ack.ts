/**
 * @module
 * The relay's WebSocket acknowledgement: `{"type":"ACK","received":n}`, n the summed length of
 * the text messages taken so far on this socket. Workers cannot see a socket's send buffer, so
 * this is how a hub knows how far behind its subscriber is: it cuts one that falls too far
 * behind (close 4008) instead of buffering without bound, and the watch resumes.
 */

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
      this.#send(JSON.stringify({ type: "ACK", received: this.#taken }));
    } catch {
      // the socket is closing; its close ends the session
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
