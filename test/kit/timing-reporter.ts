/**
 * @module
 * Where the suite's time goes: after a run, each project's wall time (from its first file's start
 * to its last file's end) and the files that took longest, so a slow CI run says what to look at.
 * With TEST_TIMINGS=<file>, every file's time and when it started as JSON, for comparing two runs
 * and seeing which files ran side by side.
 */
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

interface Timing {
  project: string;
  file: string;
  start: number;
  end: number;
}

/** How many of the slowest files the summary lists. */
const SLOWEST = 12;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export default class TimingReporter implements Reporter {
  readonly #started = new Map<string, number>();
  readonly #timings: Timing[] = [];

  onTestModuleStart(module: TestModule): void {
    this.#started.set(module.moduleId, performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const end = performance.now();
    const start = this.#started.get(module.moduleId) ?? end;
    this.#timings.push({ project: module.project.name, file: relative(process.cwd(), module.moduleId), start, end });
  }

  onTestRunEnd(): void {
    if (this.#timings.length === 0) return;
    const projects = new Map<string, { start: number; end: number; files: number }>();
    for (const t of this.#timings) {
      const p = projects.get(t.project) ?? { start: t.start, end: t.end, files: 0 };
      projects.set(t.project, { start: Math.min(p.start, t.start), end: Math.max(p.end, t.end), files: p.files + 1 });
    }
    const lines = ["", "Time by project (wall, first file's start to last file's end):"];
    for (const [name, p] of [...projects].sort((a, b) => a[1].start - b[1].start)) lines.push(`  ${name.padEnd(17)} ${seconds(p.end - p.start).padStart(8)}  ${p.files} files`);
    lines.push(`Slowest ${SLOWEST} files:`);
    const slowest = [...this.#timings].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, SLOWEST);
    for (const t of slowest) lines.push(`  ${seconds(t.end - t.start).padStart(8)}  ${t.project.padEnd(17)} ${t.file}`);
    console.log(lines.join("\n"));
    const file = process.env.TEST_TIMINGS;
    if (file) {
      const first = Math.min(...this.#timings.map((t) => t.start));
      const rows = this.#timings.map((t) => ({ project: t.project, file: t.file, startedAt: Math.round(t.start - first) / 1000, seconds: Math.round(t.end - t.start) / 1000 }));
      writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
    }
  }
}
