/**
 * @module
 * Time as the hub's parts see it: the current time and timers, in one shape, so that unit tests
 * run the parts on a clock they move by hand (`clock.fake.ts`) and the hub on the runtime's.
 */

/** Stops a timer; a no-op once it has fired (one-shot) or been stopped. */
export type Cancel = () => void;

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Run `run` once, `ms` from now. */
  after(ms: number, run: () => void): Cancel;
  /** Run `tick` every `ms` until cancelled. */
  every(ms: number, tick: () => void): Cancel;
}

export const realClock: Clock = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  },
};
