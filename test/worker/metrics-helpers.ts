/**
 * Reading `/metrics` as Prometheus would: the text through a Prometheus text-format parser
 * (which throws on any line the format does not allow), then one sample by name and labels.
 */
import parsePrometheusTextFormat, { type MetricFamily, type Sample } from "parse-prometheus-text-format";
import { expect } from "vitest";
import { relay } from "./helpers.ts";

export type Scrape = MetricFamily[];

/** `GET /metrics`: 200 in the exposition format's content type, parsed. */
export async function scrape(headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await relay("/metrics", { headers });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheusTextFormat(text);
}

/** The sample of `name` whose labels include `labels`; `undefined` when there is none. */
export function sampleOf(families: Scrape, name: string, labels: Record<string, string> = {}): Sample | undefined {
  return families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

/**
 * A histogram family's one series, as cumulative buckets by `le` (`+Inf` is the count). The
 * parser keeps only the buckets of a labelled histogram, folding its series into one, so a test
 * reads a histogram only where it has a single series.
 */
export function histogramOf(families: Scrape, name: string): Sample | undefined {
  const metrics = families.find((f) => f.name === name)?.metrics ?? [];
  expect(metrics.length, `${name}: one series`).toBeLessThanOrEqual(1);
  return metrics[0];
}

/** A counter's or gauge's value (0 when the series is not there yet). */
export function metricValue(families: Scrape, name: string, labels: Record<string, string> = {}): number {
  return Number(sampleOf(families, name, labels)?.value ?? 0);
}
