/**
 * @module
 * The run's charts: for each upstream rate of the `fanout` scenario, delivered events/s and
 * p99 latency against the number of subscribers, one line per system.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FanoutRow, Results } from "./rows.ts";
import { lineChart } from "./svg.ts";
import type { SystemName } from "./systems/system.ts";

const COLORS: Record<SystemName, string> = {
  relay: "#f38020",
  "relay-batched": "#dc2626",
  "relay-proxied": "#b45309",
  "workerd-floor": "#9333ea",
  direct: "#6b7280",
  "node-relay": "#2563eb",
  "raw-ws": "#16a34a",
};

export interface ChartFile {
  title: string;
  file: string;
}

export function writeCharts(results: Results, outDir: string): ChartFile[] {
  const rows = results.rows.filter((r): r is FanoutRow => r.scenario === "fanout");
  const systems = [...new Set(rows.map((r) => r.system))];
  const files: ChartFile[] = [];
  for (const rate of [...new Set(rows.map((r) => r.eventsPerSec))]) {
    const at = rows.filter((r) => r.eventsPerSec === rate);
    const series = (value: (r: FanoutRow) => number | null) =>
      systems
        .map((system) => ({
          name: system,
          color: COLORS[system],
          points: at.filter((r) => r.system === system && value(r) !== null).map((r): [number, number] => [r.subscribers, value(r) as number]),
        }))
        // A system not measured at this rate has no place in its legend.
        .filter((s) => s.points.length > 0);
    const charts = [
      {
        name: `fanout-throughput-${rate}.svg`,
        title: `Delivered events/s, ${rate} upstream events/s`,
        svg: lineChart({ title: `fanout: delivered events/s at ${rate} upstream events/s`, xLabel: "subscribers", yLabel: "events/s delivered (all subscribers)", logX: true, series: series((r) => r.deliveredPerSec) }),
      },
      {
        name: `fanout-p99-${rate}.svg`,
        title: `p99 latency, ${rate} upstream events/s`,
        svg: lineChart({ title: `fanout: p99 write-to-receipt latency at ${rate} upstream events/s`, xLabel: "subscribers", yLabel: "p99 latency (ms, log)", logX: true, logY: true, series: series((r) => r.p99Ms) }),
      },
    ];
    for (const chart of charts) {
      const file = join(outDir, chart.name);
      writeFileSync(file, `${chart.svg}\n`);
      files.push({ title: chart.title, file });
    }
  }
  return files;
}
