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
