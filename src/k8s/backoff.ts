/**
 * @module
 * Exponential backoff with full jitter, as client-go's reflector uses for its list/watch loop
 * (start 0.8 s, double, cap 30 s, reset after a healthy period). A server's `Retry-After` is a
 * floor, never shortened by jitter.
 */

/** client-go's reflector: start at 0.8 s, double, cap at 30 s. The relay's upstream loop and its client both use it. */
export const REFLECTOR_BACKOFF = { initialMs: 800, maxMs: 30_000 } as const;

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** `[0, 1)`; injectable so tests are deterministic. */
  random: () => number;
}

export class Backoff {
  readonly #options: BackoffOptions;
  #attempt = 0;

  constructor(options: BackoffOptions) {
    this.#options = options;
  }

  /** Delay before the next attempt; `retryAfterMs` (from the server) is honoured as a minimum. */
  next(retryAfterMs = 0): number {
    const ceiling = Math.min(this.#options.maxMs, this.#options.initialMs * 2 ** this.#attempt);
    this.#attempt++;
    const jittered = ceiling / 2 + (this.#options.random() * ceiling) / 2;
    return Math.max(retryAfterMs, Math.round(jittered));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** `Retry-After` in milliseconds, from seconds or an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (!header) return 0;
  if (/^[0-9]+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? 0 : Math.max(0, date - now);
}
