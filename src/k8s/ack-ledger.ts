/**
 * @module
 * Acknowledgements through a multiplexing hop. The client acknowledges the socket's messages
 * as one count (`{"type":"ACK","received":n}`, as on a single watch); each watch's hub wants
 * its own count, of the messages it sent. The ledger remembers, for each message sent to the
 * client, where that left the client's count and the hub's, and turns the client's
 * acknowledgement into each hub's (a watch that has ended is the caller's to skip): so a hub
 * sees how far behind the client is, not the hop, and holds or cuts off a watch whose reader
 * falls behind, as it would a socket of its own.
 *
 * It also counts what the client has not acknowledged (everything, for a client that never
 * does), which the session bounds. The messages it remembers are bounded apart from that: past
 * a bound the oldest are forgotten, and each hub learns of them from a later message's count.
 */

interface Entry<W> {
  /** The client's count once this message is taken. */
  at: number;
  watch: W;
  /** The watch's hub count once this message is taken. */
  received: number;
}

/** Messages remembered unacknowledged: far more than a client that acknowledges leaves (it does every 64-256 KiB). */
const MAX_UNACKNOWLEDGED = 16_384;

export class AckLedger<W> {
  #sent = 0;
  #acknowledged = 0;
  #entries: Entry<W>[] = [];
  #head = 0;

  /** A message of `length` went to the client for `watch`, which has now received `received` from its hub. */
  sent(length: number, watch: W, received: number): void {
    this.#sent += length;
    if (this.#entries.length - this.#head >= MAX_UNACKNOWLEDGED) {
      this.#entries = [];
      this.#head = 0;
    }
    this.#entries.push({ at: this.#sent, watch, received });
  }

  /** A message that no hub sent (a CLOSED, an error). */
  sentOwn(length: number): void {
    this.#sent += length;
  }

  /** The client took `received`: each watch's hub count now taken, for the watches that moved. */
  acknowledge(received: number): Map<W, number> {
    const taken = new Map<W, number>();
    // More than was sent is no reader's count: ignored, as a hub ignores one.
    if (received > this.#sent) return taken;
    this.#acknowledged = Math.max(this.#acknowledged, received);
    while (this.#head < this.#entries.length) {
      const entry = this.#entries[this.#head] as Entry<W>;
      if (entry.at > received) break;
      taken.set(entry.watch, entry.received);
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    return taken;
  }

  /** Units sent to the client so far. */
  get total(): number {
    return this.#sent;
  }

  /** Units sent to the client and not yet acknowledged (all of them, for a client that never acknowledges). */
  get unacknowledged(): number {
    return this.#sent - this.#acknowledged;
  }
}
