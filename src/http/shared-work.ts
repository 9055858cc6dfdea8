/**
 * @module
 * One request's upstream work (a discovery document, a token review) shared with the isolate's
 * other requests that need it meanwhile. In the Workers runtime a promise belongs to the request
 * that made it: if that request ends first (its client went away, it was cancelled), the promise
 * is not settled for the others, and a request that awaits nothing else hangs until the runtime
 * gives up on it and answers 500 ("the Worker's code had hung"). So a request joins another's
 * work for a bounded time, and past it does the work anew.
 */

/** How long a request waits on work another request started before doing it again. */
export const JOIN_WAIT_MS = 5000;

const LATE = Symbol("late");

/** `work`'s result, or, if it has not settled within `waitMs`, what `again` gives. */
export async function join<T>(work: Promise<T>, again: () => Promise<T>, waitMs = JOIN_WAIT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), waitMs);
  });
  try {
    const first = await Promise.race([work, late]);
    return first === LATE ? again() : first;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
