/**
 * @module
 * A clock for unit tests, moved by hand: time stands still until a test moves it, and timers
 * fire only when it does, in the order they are due, as the event loop would fire them.
 */
import type { Cancel, Clock } from "./clock.ts";

interface Timer {
  at: number;
  ms: number;
  repeating: boolean;
  run: () => void;
}

export class FakeClock implements Clock {
  #time: number;
  /** Timers set and neither fired (one-shot) nor cancelled, by when they were set. */
  readonly #timers = new Set<Timer>();

  /** An arbitrary fixed start, not 0, so that code taking 0 for "never" is not fooled. */
  constructor(start = 1_000_000) {
    this.#time = start;
  }

  now(): number {
    return this.#time;
  }

  after(ms: number, run: () => void): Cancel {
    return this.#add(ms, run, false);
  }

  every(ms: number, tick: () => void): Cancel {
    return this.#add(ms, tick, true);
  }

  /** The timers waiting to fire, soonest first: each one's delay and whether it repeats. */
  get pending(): Array<{ ms: number; repeating: boolean }> {
    return this.#dueOrder().map(({ ms, repeating }) => ({ ms, repeating }));
  }

  /**
   * One turn of the event loop: fire the timers due now, as they were at the call. Those they
   * set wait for the next turn, even with no delay. How many fired.
   */
  turn(): number {
    let fired = 0;
    for (const timer of this.#dueOrder().filter((t) => t.at <= this.#time)) if (this.#fire(timer)) fired++;
    return fired;
  }

  /** Move time on by `ms`, firing every timer as it comes due (those set meanwhile too), in order. */
  advance(ms: number): void {
    const end = this.#time + ms;
    for (let next = this.#dueOrder()[0]; next !== undefined && next.at <= end; next = this.#dueOrder()[0]) {
      this.#time = next.at;
      this.#fire(next);
    }
    this.#time = end;
  }

  #add(ms: number, run: () => void, repeating: boolean): Cancel {
    const timer = { at: this.#time + ms, ms, repeating, run };
    this.#timers.add(timer);
    return () => void this.#timers.delete(timer);
  }

  /** Fire a timer if it is still set (one fired before it may have cancelled it), re-arming a repeating one; whether it fired. */
  #fire(timer: Timer): boolean {
    if (!this.#timers.has(timer)) return false;
    if (timer.repeating) timer.at += Math.max(1, timer.ms);
    else this.#timers.delete(timer);
    timer.run();
    return true;
  }

  /** Soonest first; among timers due together, the one set first (a stable sort keeps set order). */
  #dueOrder(): Timer[] {
    return [...this.#timers].sort((a, b) => a.at - b.at);
  }
}

/**
 * Once what a moved clock set going has run as far as it can: the parts' work between timers is
 * promise reactions (no I/O in a unit test), and every one of those runs before the next task.
 */
export function settled(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
