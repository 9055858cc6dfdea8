/**
 * @module
 * Counters, gauges and histograms as plain numbers keyed by series (a family and its label
 * values), so that they travel between Durable Objects as JSON: a hub counts into its own set,
 * hands the counts over as a delta in its report, and the registry merges the deltas into the
 * relay-wide totals.
 */
import { FAMILIES, type FamilyId } from "./catalog.ts";

/** A series: `[family id, ...label values in the family's order]`, as JSON. */
export type SeriesKey = string;

export interface HistogramCounts {
  /** Observations per bucket (not cumulative); the last entry is above the highest bound. */
  buckets: number[];
  sum: number;
  count: number;
}

/** What a set holds, as JSON: counter and gauge values, histogram counts. */
export interface MetricValues {
  values: Record<SeriesKey, number>;
  histograms: Record<SeriesKey, HistogramCounts>;
}

export type Labels = Readonly<Record<string, string>>;

export function seriesKey(id: FamilyId, labels: Labels): SeriesKey {
  const names = FAMILIES[id].labels;
  return JSON.stringify([
    id,
    ...names.map((name) => {
      const value = labels[name];
      if (value === undefined) throw new Error(`metric ${FAMILIES[id].name} needs the label ${name}`);
      return value;
    }),
  ]);
}

/** The family and labels of a series. */
export function parseSeries(key: SeriesKey): { id: FamilyId; labels: Record<string, string> } {
  const [id, ...values] = JSON.parse(key) as [FamilyId, ...string[]];
  const labels: Record<string, string> = {};
  FAMILIES[id].labels.forEach((name, i) => (labels[name] = values[i] ?? ""));
  return { id, labels };
}

/**
 * The series of `values` that the catalog still has, with the labels and buckets it gives them
 * now: what counts saved by an earlier version of the relay may keep.
 */
export function inCatalog(values: MetricValues): MetricValues {
  const known = (key: SeriesKey, buckets?: number): boolean => {
    try {
      const [id, ...labels] = JSON.parse(key) as [string, ...string[]];
      const family = Object.hasOwn(FAMILIES, id) ? FAMILIES[id as FamilyId] : undefined;
      if (family === undefined || labels.length !== family.labels.length) return false;
      return buckets === undefined ? family.type !== "histogram" : family.type === "histogram" && buckets === (family.buckets?.length ?? 0) + 1;
    } catch {
      return false;
    }
  };
  return {
    values: Object.fromEntries(Object.entries(values.values).filter(([key]) => known(key))),
    histograms: Object.fromEntries(Object.entries(values.histograms).filter(([key, counts]) => known(key, counts.buckets.length))),
  };
}

export class MetricSet {
  #values = new Map<SeriesKey, number>();
  #histograms = new Map<SeriesKey, HistogramCounts>();

  get empty(): boolean {
    return this.#values.size === 0 && this.#histograms.size === 0;
  }

  /** Add `n` to a counter (or a gauge being summed). */
  add(id: FamilyId, labels: Labels, n = 1): void {
    const key = seriesKey(id, labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + n);
  }

  /** Keep the largest `value` seen (a gauge of the worst of several). */
  max(id: FamilyId, labels: Labels, value: number): void {
    const key = seriesKey(id, labels);
    this.#values.set(key, Math.max(this.#values.get(key) ?? value, value));
  }

  observe(id: FamilyId, labels: Labels, value: number): void {
    const bounds = FAMILIES[id].buckets ?? [];
    const key = seriesKey(id, labels);
    let counts = this.#histograms.get(key);
    if (!counts) this.#histograms.set(key, (counts = { buckets: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 }));
    const i = bounds.findIndex((bound) => value <= bound);
    counts.buckets[i === -1 ? bounds.length : i]!++;
    counts.sum += value;
    counts.count++;
  }

  /** Everything held, and start again from nothing: what a hub hands over in a report. */
  take(): MetricValues {
    const taken = this.toJSON();
    this.#values = new Map();
    this.#histograms = new Map();
    return taken;
  }

  /** Add another set's values (a report that could not be delivered, or a hub's delta). */
  merge(other: MetricValues): void {
    for (const [key, n] of Object.entries(other.values)) this.#values.set(key, (this.#values.get(key) ?? 0) + n);
    for (const [key, counts] of Object.entries(other.histograms)) {
      const mine = this.#histograms.get(key);
      if (!mine) {
        this.#histograms.set(key, { buckets: [...counts.buckets], sum: counts.sum, count: counts.count });
        continue;
      }
      counts.buckets.forEach((n, i) => (mine.buckets[i] = (mine.buckets[i] ?? 0) + n));
      mine.sum += counts.sum;
      mine.count += counts.count;
    }
  }

  toJSON(): MetricValues {
    return { values: Object.fromEntries(this.#values), histograms: Object.fromEntries(this.#histograms) };
  }
}
