/**
 * @module
 * For each fan-out rate, delivered events/s and p99 against subscribers, a line per system and
 * transport (dashed for HTTP watches where it also serves WebSockets).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FanoutRow, Results } from "./rows.ts";
import { lineChart } from "./svg.ts";
import { factsOf, labelOf } from "./systems/catalog.ts";

export interface ChartFile {
  title: string;
  file: string;
}

export function writeCharts(results: Results, outDir: string): ChartFile[] {
  const rows = results.rows.filter((r): r is FanoutRow => r.scenario === "fanout");
  const lines = [...new Map(rows.map((r) => [labelOf(r.system, r.transport), { system: r.system, transport: r.transport }])).entries()];
  const files: ChartFile[] = [];
  for (const rate of [...new Set(rows.map((r) => r.eventsPerSec))]) {
    const at = rows.filter((r) => r.eventsPerSec === rate);
    const series = (value: (r: FanoutRow) => number | null) =>
      lines
        .map(([name, { system, transport }]) => ({
          name,
          color: factsOf(system).color,
          dashed: transport === "http" && factsOf(system).transports.length > 1,
          points: at.filter((r) => r.system === system && r.transport === transport && value(r) !== null).map((r): [number, number] => [r.subscribers, value(r) as number]),
        }))
        .filter((s) => s.points.length > 0);
    const chart = (name: string, title: string, heading: string, yLabel: string, logY: boolean, value: (r: FanoutRow) => number | null) => {
      const file = join(outDir, `fanout-${name}-${rate}.svg`);
      const svg = lineChart({ title: `fanout: ${heading} at ${rate} upstream events/s`, xLabel: "subscribers", yLabel, logX: true, logY, series: series(value) });
      writeFileSync(file, `${svg}\n`);
      files.push({ title: `${title}, ${rate} upstream events/s`, file });
    };
    chart("throughput", "Delivered events/s", "delivered events/s", "events/s delivered (all subscribers)", false, (r) => r.deliveredPerSec);
    chart("p99", "p99 latency", "p99 write-to-receipt latency", "p99 latency (ms, log)", true, (r) => r.p99Ms);
  }
  return files;
}
