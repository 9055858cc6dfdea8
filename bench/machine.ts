/**
 * @module
 * The machine a run was measured on: figures from different machines do not compare.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, cpus, loadavg, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { executable, orElse } from "./proc.ts";

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  /** When the run started: how busy the box already was. */
  loadAverage: number;
  /**
   * µs to take a 4 KiB page of memory fresh from the kernel (its fault and zeroing): what a
   * runtime pays for memory its allocator gave back. Under some virtual machines it is several
   * times a bare machine's, and workloads that churn large buffers slow down with it. Absent from runs
   * before it was measured.
   */
  freshPageUs?: number;
  node: string;
  workerd: string;
  wrangler: string;
  ws: string;
  clientNode: string;
}

const require = createRequire(import.meta.url);

/** From its entry point (not every package exports its package.json). */
function packageVersion(name: string): string {
  const dirs = orElse(() => [dirname(require.resolve(name))], []);
  for (let dir = dirs[0]; dir !== undefined && dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    const pkg = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { name?: string; version: string }) : undefined;
    if (pkg?.name === name) return pkg.version;
  }
  return "unknown";
}

const PAGE = 4096;
/** Enough pages to average over, few enough to take a fraction of a second on a bare machine. */
const PROBE_BYTES = 64 * 2 ** 20;
/** The cost moves from one mapping to the next (fivefold, seen under one hypervisor): the median of a few. */
const PROBES = 3;

/**
 * The first write to fresh memory against a second write to the same memory: the difference is
 * the page faults (a buffer this large is mapped on its own, and unmapped once collected).
 */
export function freshPageMicros(bytes = PROBE_BYTES): number {
  const probe = () => {
    const buffer = Buffer.allocUnsafeSlow(bytes);
    const timed = (value: number) => {
      const start = process.hrtime.bigint();
      buffer.fill(value);
      return Number(process.hrtime.bigint() - start) / 1000;
    };
    const first = timed(1);
    return Math.max(0, first - timed(2)) / (bytes / PAGE);
  };
  const probes = Array.from({ length: PROBES }, probe).sort((a, b) => a - b);
  return Math.round((probes[PROBES >> 1] ?? 0) * 100) / 100;
}

/** `workerdPid` is the relay's runtime, asked for its own version (wrangler ships its own workerd). */
export function describeMachine(workerdPid: number | undefined): Machine {
  const exe = workerdPid === undefined ? undefined : executable(workerdPid);
  const workerd = exe ? orElse(() => execFileSync(exe, ["--version"], { encoding: "utf8" }).trim(), "unknown") : "not started";
  return {
    cpuModel: cpus()[0]?.model ?? "unknown",
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    freshPageUs: freshPageMicros(),
    node: process.version,
    workerd,
    wrangler: packageVersion("wrangler"),
    ws: packageVersion("ws"),
    clientNode: packageVersion("@kubernetes/client-node"),
  };
}
