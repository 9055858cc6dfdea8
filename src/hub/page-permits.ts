/**
 * @module
 * How many upstream list pages the hubs of an isolate hold at once. A page being read (a batch
 * of its objects, up to `BATCH_CHARS` and one object, megabytes once parsed) is in memory from
 * its request until its hub has staged its last batch in storage, and hubs share an isolate and
 * its 128 MB: a thousand hubs that list together (a relay's start
 * with a thousand keys watched, a burst of new selectors) would hold a thousand pages. So a page
 * takes a permit first (`LIST_PAGES_AT_ONCE`). A hub waits for one on its own clock, polling,
 * not on a promise another hub settles: each Durable Object runs in a context of its own, and
 * the runtime does not resume one reliably from another's (`http/shared-work.ts`).
 */
import type { Clock } from "./clock.ts";

/** The first and the longest wait between looks for a free permit. */
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 100;

export class PagePermits {
  readonly #limit: number;
  #held = 0;

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /** Permits held now. */
  get held(): number {
    return this.#held;
  }

  /**
   * A permit, once one is free: the function that gives it back (once; calling it again does
   * nothing). `undefined`, taking none, if `cancelled` says so first (a hub stopped meanwhile).
   */
  async take(clock: Clock, cancelled: () => boolean = () => false): Promise<(() => void) | undefined> {
    for (let wait = POLL_FIRST_MS; this.#held >= this.#limit; wait = Math.min(POLL_MAX_MS, wait * 2)) {
      await new Promise<void>((resolve) => clock.after(wait, resolve));
      if (cancelled()) return undefined;
    }
    if (cancelled()) return undefined;
    this.#held++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#held--;
    };
  }
}
