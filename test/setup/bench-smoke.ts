/**
 * Global setup of the bench's smoke test: the benchmark at its smallest starts as the test run
 * does, beside the Workers projects' files (which run one at a time, leaving a core), rather
 * than alone at the end, where its few minutes were the run's last. It writes where the test
 * reads: its output (`log`) and, once it has exited, its exit code (`exit.json`). vitest runs a
 * project's global setup only when the run has files of that project, so only runs of the smoke
 * test start it.
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The results a run that is not told `--out` writes, which the smoke run must leave alone. */
export const LATEST = join(ROOT, "bench", "results", "latest.json");
export const EXIT_FILE = "exit.json";
export const LOG_FILE = "log";

export interface BenchSmokeRun {
  /** Where the run writes its results, report and charts, and `log` and `exit.json`. */
  out: string;
  /** `LATEST`'s modification time before the run began. */
  latestBefore: number | undefined;
}

declare module "vitest" {
  interface ProvidedContext {
    benchSmoke: BenchSmokeRun;
  }
}

export default function setup({ provide }: TestProject): () => Promise<void> {
  const out = mkdtempSync(join(tmpdir(), "kwr-bench-smoke-"));
  const latestBefore = existsSync(LATEST) ? statSync(LATEST).mtimeMs : undefined;
  const log = createWriteStream(join(out, LOG_FILE));
  // A process group of its own, so what it started goes with it if the test run ends first.
  const bench = spawn(process.execPath, ["bench/run.ts", "--smoke", "--rounds", "2", "--out", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], detached: true });
  bench.stdout.pipe(log, { end: false });
  bench.stderr.pipe(log, { end: false });
  const exited = once(bench, "exit").then(([code, signal]) => {
    // Written whole, then named: the test, watching the directory, never reads half of it.
    log.end(() => {
      writeFileSync(join(out, `${EXIT_FILE}.part`), JSON.stringify({ code, signal }));
      renameSync(join(out, `${EXIT_FILE}.part`), join(out, EXIT_FILE));
    });
  });
  provide("benchSmoke", { out, latestBefore });
  return async () => {
    if (bench.exitCode === null && bench.signalCode === null) {
      try {
        process.kill(-bench.pid!, "SIGTERM");
      } catch {
        // gone already
      }
    }
    await exited;
    rmSync(out, { recursive: true, force: true });
  };
}
