/**
 * @module
 * Two revisions measured in alternating pairs (`compare.ts`), as ratios: on a noisy machine only
 * figures taken back to back say whether a change helped.
 */
import { DIMENSIONS, headline, headlineName, middle } from "./rounds.ts";
import type { Row } from "./rows.ts";

interface Figure {
  name: (row: Row) => string;
  of: (row: Row) => number | null | undefined;
}

const FIGURES: readonly Figure[] = [
  { name: headlineName, of: headline },
  { name: () => "CPU µs/event", of: (row) => ("cpuUsPerEvent" in row ? row.cpuUsPerEvent : undefined) },
  { name: () => "p99 ms", of: (row) => ("p99Ms" in row ? row.p99Ms : undefined) },
  { name: () => "JS heap max MB", of: (row) => ("heapMaxMB" in row ? row.heapMaxMB : undefined) },
];

/** One measurement's figures in every pair: the base's, the current tree's, and current ÷ base. */
export interface Compared {
  measurement: string;
  figure: string;
  pairs: { base: number; current: number; ratio: number }[];
  /** The median pair's ratio (the lower middle of an even count). */
  median: number;
}

function describe(row: Row): string {
  const fields = row as unknown as Record<string, unknown>;
  return DIMENSIONS.filter((name) => fields[name] !== undefined)
    .map((name) => (name === "scenario" || name === "system" || name === "transport" ? String(fields[name]) : `${name} ${String(fields[name])}`))
    .join(", ");
}

/** Dimensions a row carries only when true: absent is false, not unknown (a relay on one thread). */
const FLAGS = ["replicaWorkerd", "muxWorkerd"] as const;

/** A row's dimensions; a snapshot from before paged lists were measured was a whole list. */
function dimensionsOf(row: Row): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...(row as unknown as Record<string, unknown>) };
  for (const flag of FLAGS) fields[flag] ??= false;
  if (row.scenario === "snapshot") fields.list ??= "full";
  return fields;
}

/** Every dimension both rows have is equal (an older revision's may lack one added since). */
export function sameMeasurement(a: Row, b: Row): boolean {
  const x = dimensionsOf(a);
  const y = dimensionsOf(b);
  return DIMENSIONS.every((name) => x[name] === undefined || y[name] === undefined || x[name] === y[name]);
}

/** Every measurement of the current tree that the base made too, pair by pair. */
export function compareRuns(base: ReadonlyArray<readonly Row[]>, current: ReadonlyArray<readonly Row[]>): Compared[] {
  const pairs = Math.min(base.length, current.length);
  const result: Compared[] = [];
  for (const row of current[0] ?? []) {
    for (const figure of FIGURES) {
      const found: Compared["pairs"] = [];
      for (let i = 0; i < pairs; i++) {
        const now = current[i]?.find((r) => sameMeasurement(r, row));
        const then = now && base[i]?.find((r) => sameMeasurement(r, now));
        const a = then && figure.of(then);
        const b = now && figure.of(now);
        if (typeof a === "number" && typeof b === "number" && Number.isFinite(a) && Number.isFinite(b) && a > 0) found.push({ base: a, current: b, ratio: b / a });
      }
      if (found.length === 0) continue;
      result.push({ measurement: describe(row), figure: figure.name(row), pairs: found, median: middle(found, (p) => p.ratio)?.ratio ?? Number.NaN });
    }
  }
  return result;
}

const num = (n: number): string => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : String(Number(n.toPrecision(3))));

export function comparisonTable(compared: readonly Compared[], baseName: string): string {
  const lines = [`| measurement | figure | pairs (${baseName} → current) | current ÷ ${baseName}, median |`, "|---|---|---|---:|"];
  for (const c of compared) {
    const pairs = c.pairs.map((p) => `${num(p.base)} → ${num(p.current)} (${p.ratio.toFixed(2)}×)`).join("; ");
    lines.push(`| ${c.measurement} | ${c.figure} | ${pairs} | ${c.median.toFixed(2)}× |`);
  }
  return `${lines.join("\n")}\n`;
}
