/**
 * Waiting in tests, always with a deadline that fails with what was awaited: for conditions no
 * event announces (a counter moving, a process listening), and for promises that might never
 * settle. Works in Node and in workerd.
 */

export const SAFETY_TIMEOUT_MS = 15_000;

/** Check `check` often until it returns a value; fails with `what` after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, ms = SAFETY_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `promise`, or a failure naming `what` after `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = SAFETY_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * Conditions on a test double's state, awaited: the double calls `changed()` whenever its state
 * changes, and `until` looks again then, never on a timer.
 */
export class Changes {
  readonly #ms: number;
  #waiters: Array<() => void> = [];

  /** `ms`: how long `until` waits before it fails (under a unit test's own timeout, for its message). */
  constructor(ms = SAFETY_TIMEOUT_MS) {
    this.#ms = ms;
  }

  changed(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once `done()` holds, checked now and at each change; fails naming `what` after the deadline. */
  until(what: string, done: () => boolean): Promise<void> {
    const held = async () => {
      while (!done()) await new Promise<void>((wake) => this.#waiters.push(wake));
    };
    return within(held(), what, this.#ms);
  }
}
