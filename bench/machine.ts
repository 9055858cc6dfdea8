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
    node: process.version,
    workerd,
    wrangler: packageVersion("wrangler"),
    ws: packageVersion("ws"),
    clientNode: packageVersion("@kubernetes/client-node"),
  };
}
