/**
 * @module
 * The Prometheus text exposition format (version 0.0.4): for each family, `# HELP` and
 * `# TYPE`, then one line per series; histograms as cumulative `_bucket{le}` lines, `_sum` and
 * `_count`. Families come in catalog order and series in a stable order, so two scrapes of the
 * same numbers are the same text.
 */
import { FAMILIES, KNOWN_VALUES, type Family, type FamilyId } from "./catalog.ts";
import { parseSeries, seriesKey, type HistogramCounts, type MetricValues } from "./metric-set.ts";

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const escapeValue = (text: string): string => text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function number(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

function labelText(labels: Record<string, string>, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  return pairs.length === 0 ? "" : `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(",")}}`;
}

/** Series known in advance (see KNOWN_VALUES) at 0, for every cluster the other series name. */
function withKnownSeries(values: Record<string, number>): Record<string, number> {
  const clusters = new Set<string>();
  for (const key of Object.keys(values)) {
    const cluster = parseSeries(key).labels.cluster;
    if (cluster !== undefined) clusters.add(cluster);
  }
  const out = { ...values };
  for (const [id, known] of Object.entries(KNOWN_VALUES) as Array<[FamilyId, Record<string, readonly string[]>]>) {
    const [name, names] = Object.entries(known)[0]!;
    const others = FAMILIES[id].labels.filter((l) => l !== name);
    const scopes = others.length === 0 ? [{}] : others.length === 1 && others[0] === "cluster" ? [...clusters].map((cluster) => ({ cluster })) : [];
    for (const scope of scopes) for (const value of names) out[seriesKey(id, { ...scope, [name]: value })] ??= 0;
  }
  return out;
}

function histogramLines(family: Family, labels: Record<string, string>, counts: HistogramCounts): string[] {
  const lines: string[] = [];
  let cumulative = 0;
  (family.buckets ?? []).forEach((bound, i) => {
    cumulative += counts.buckets[i] ?? 0;
    lines.push(`${family.name}_bucket${labelText(labels, ["le", number(bound)])} ${cumulative}`);
  });
  lines.push(`${family.name}_bucket${labelText(labels, ["le", "+Inf"])} ${counts.count}`);
  lines.push(`${family.name}_sum${labelText(labels)} ${number(counts.sum)}`);
  lines.push(`${family.name}_count${labelText(labels)} ${counts.count}`);
  return lines;
}

/** The text a scrape gets: every family that has a series. */
export function exposition(metrics: MetricValues): string {
  const byFamily = new Map<FamilyId, string[]>();
  const add = (id: FamilyId, lines: string[]) => {
    const family = byFamily.get(id);
    if (family) family.push(...lines);
    else byFamily.set(id, lines);
  };
  const values = withKnownSeries(metrics.values);
  for (const key of Object.keys(values).sort()) {
    const { id, labels } = parseSeries(key);
    add(id, [`${FAMILIES[id].name}${labelText(labels)} ${number(values[key]!)}`]);
  }
  for (const key of Object.keys(metrics.histograms).sort()) {
    const { id, labels } = parseSeries(key);
    add(id, histogramLines(FAMILIES[id], labels, metrics.histograms[key]!));
  }
  const out: string[] = [];
  for (const id of Object.keys(FAMILIES) as FamilyId[]) {
    const lines = byFamily.get(id);
    if (!lines) continue;
    const family = FAMILIES[id];
    out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`, ...lines);
  }
  return `${out.join("\n")}\n`;
}
