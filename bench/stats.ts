/**
 * @module
 * Latency distributions: `written-at` has millisecond resolution, so a histogram of whole
 * milliseconds loses nothing and merges across load generators by adding counts.
 */

/** `[milliseconds, count]` pairs, as a histogram crosses the IPC channel. */
export type HistogramEntries = Array<[number, number]>;

export class Histogram {
  readonly #counts = new Map<number, number>();
  #total = 0;

  get count(): number {
    return this.#total;
  }

  add(ms: number): void {
    const bucket = ms < 0 ? 0 : Math.round(ms);
    this.#counts.set(bucket, (this.#counts.get(bucket) ?? 0) + 1);
    this.#total++;
  }

  merge(entries: HistogramEntries): void {
    for (const [ms, n] of entries) {
      this.#counts.set(ms, (this.#counts.get(ms) ?? 0) + n);
      this.#total += n;
    }
  }

  entries(): HistogramEntries {
    return [...this.#counts];
  }

  /** The smallest value with at least `p`% of the samples at or below it; `undefined` when empty. */
  percentile(p: number): number | undefined {
    if (this.#total === 0) return undefined;
    const rank = Math.max(1, Math.ceil((p / 100) * this.#total));
    let seen = 0;
    for (const ms of [...this.#counts.keys()].sort((a, b) => a - b)) {
      seen += this.#counts.get(ms) ?? 0;
      if (seen >= rank) return ms;
    }
    return this.max;
  }

  get max(): number | undefined {
    return this.#total === 0 ? undefined : Math.max(...this.#counts.keys());
  }
}

/** Nearest-rank percentile of plain samples. */
export function percentileOf(samples: readonly number[], p: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
