/**
 * @module
 * Requests waiting for a resourceVersion to be reached, as the watch cache makes a request for a
 * version ahead of it wait (`waitUntilFreshAndBlock`, up to its `blockTimeout`): whoever advances
 * the version calls `reached`, and every waiter at or below it is released.
 */

/** Runs `run` after `ms`; returns what cancels it (the hub passes its clock's, tests their own). */
export type After = (ms: number, run: () => void) => () => void;

const runtimeAfter: After = (ms, run) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

export class VersionWaiters {
  #waiters: Array<{ rv: number; resolve: (reached: boolean) => void }> = [];
  readonly #after: After;

  constructor(after: After = runtimeAfter) {
    this.#after = after;
  }

  /** Resolves `true` once `reached(n)` is called with `n >= rv` (at once if `current` already is), `false` after `ms`. */
  wait(current: number, rv: number, ms: number): Promise<boolean> {
    if (current >= rv) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: (reached: boolean) => {
          cancel();
          resolve(reached);
        },
      };
      const cancel = this.#after(ms, () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(false);
      });
      this.#waiters.push(waiter);
    });
  }

  /** The version is now `rv`: release everyone waiting for it or less. */
  reached(rv: number): void {
    if (this.#waiters.length === 0) return;
    const due = this.#waiters.filter((w) => w.rv <= rv);
    this.#waiters = this.#waiters.filter((w) => w.rv > rv);
    for (const w of due) w.resolve(true);
  }

  /** Release every waiter unfulfilled (shutdown). */
  cancel(): void {
    for (const w of this.#waiters.splice(0)) w.resolve(false);
  }
}
