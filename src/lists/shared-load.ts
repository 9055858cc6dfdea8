/**
 * @module
 * One answer shared for a while: the first request in an interval loads it, the requests that
 * arrive while it loads wait for that load, and every request until the interval is over gets
 * the same answer. How the list cache makes one upstream list per key per interval, however
 * many clients ask. Pure: the clock and the load are given.
 */

export interface Shared<T> {
  value: T;
  /** When the load that made it began (ms): its age is measured from there. */
  at: number;
  /** How this request got it: it loaded it, it waited for another's load, or it was held already. */
  outcome: "loaded" | "collapsed" | "hit";
}

export class SharedLoad<T> {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #keep: (value: T) => boolean;
  #held: { value: T; at: number } | undefined;
  #loading: Promise<{ value: T; at: number }> | undefined;

  /** `keep`: whether a value may be shared (one that cannot, another request loads for itself). */
  constructor(ttlMs: number, now: () => number, keep: (value: T) => boolean) {
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.#keep = keep;
  }

  /** The shared answer, `load`ing it if there is none for this interval; `undefined` when the one being loaded cannot be shared. */
  async get(load: () => Promise<T>): Promise<Shared<T> | undefined> {
    const held = this.#held;
    if (held && this.#now() - held.at < this.#ttlMs) return { ...held, outcome: "hit" };
    if (this.#loading) {
      const loaded = await this.#loading;
      return this.#keep(loaded.value) ? { ...loaded, outcome: "collapsed" } : undefined;
    }
    const at = this.#now();
    const loading = load().then((value) => ({ value, at }));
    this.#loading = loading;
    try {
      const loaded = await loading;
      this.#held = this.#keep(loaded.value) ? loaded : undefined;
      return { ...loaded, outcome: "loaded" };
    } finally {
      this.#loading = undefined;
    }
  }

  /** Seconds the answer `shared` is still shared for. */
  remainingSeconds(shared: Pick<Shared<T>, "at">): number {
    return Math.max(0, Math.ceil((shared.at + this.#ttlMs - this.#now()) / 1000));
  }
}
