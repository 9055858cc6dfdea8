/**
 * @module
 * What a relay socket sends its client. On a batch socket, what its watches have ready within
 * `LINGER_MS` of the first of it goes out as one message (up to `MAX_MESSAGE`), since messages,
 * not bytes, are what a WebSocket costs, here and in the browser: hubs that take the same
 * upstream change commit it within a few ms of each other, but each sends in its own turn, so a
 * socket whose watches see one change would otherwise send it once per watch. A watch's pages
 * (its `limit`) go alone. On any other socket, each line is its own message.
 */

/** Most one coalesced message holds: a hub's own slice. */
export const MAX_MESSAGE = 256 * 1024;
/**
 * How long the first of what is ready waits for the rest (ms): the spread of the hubs' turns that
 * send one change (each hub's gather is at least 1 ms, its turn's sends some 30 µs each), and
 * little beside a hub's own gather in what an event's latency is.
 */
export const LINGER_MS = 10;

export class Outbox {
  readonly #write: (text: string) => void;
  readonly #batched: boolean;
  #pending: string[] = [];
  #size = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `write` sends one message (and deals with a client that is gone). */
  constructor(write: (text: string) => void, batched: boolean) {
    this.#write = write;
    this.#batched = batched;
  }

  /**
   * Lines to send, in pieces to join (`size` their summed length): with what else is ready, or
   * `alone` (a page of a watch's `limit`), after what is pending. Joined once, into the message.
   */
  push(pieces: readonly string[], size: number, alone = false): void {
    if (!this.#batched || alone) {
      this.flush();
      this.#write(pieces.length === 1 ? (pieces[0] as string) : pieces.join(""));
      return;
    }
    if (this.#size + size > MAX_MESSAGE) this.flush();
    for (const piece of pieces) this.#pending.push(piece);
    this.#size += size;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush();
    }, LINGER_MS);
  }

  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join("");
    this.#pending = [];
    this.#size = 0;
    this.#write(text);
  }
}
