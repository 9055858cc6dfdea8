/**
 * @module
 * What `/proc` says about a process; every system is measured the same way, so figures compare.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parentOf, procStat } from "../scripts/proc.ts";

/** What `read` gives, or `otherwise` where it throws (a process gone). */
export function orElse<T>(read: () => T, otherwise: T): T {
  try {
    return read();
  } catch {
    return otherwise;
  }
}

/** Clock ticks per second for `/proc/<pid>/stat` times. */
const TICKS_PER_SECOND = orElse(() => Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100, 100);

const rssBytes = (pid: number): number => orElse(() => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024, 0);

/** User + system CPU of all the process's threads, in ms: utime and stime, fields 14 and 15. */
const cpuMs = (pid: number): number => {
  const [utime = 0, stime = 0] = (procStat(pid) ?? []).slice(11, 13).map(Number);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
};

export const sumRss = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + rssBytes(pid), 0);
const sumCpu = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);

/** CPU used by a set of processes since `cpuMeter` was called, as % of one core. */
export function cpuMeter(pids: readonly number[]): () => number {
  const start = sumCpu(pids);
  const started = performance.now();
  return () => (100 * (sumCpu(pids) - start)) / Math.max(1, performance.now() - started);
}

function machineBusyMs(): number {
  const [user, nice, system, , , irq, softirq, steal] = orElse(() => (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number), []);
  return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / TICKS_PER_SECOND;
}

/** fsync and fdatasync, by the numbers `/proc/<pid>/syscall` gives them on this architecture. */
const SYNC_SYSCALLS: ReadonlySet<number> = new Set(process.arch === "arm64" ? [82, 83] : [74, 75]);

/** % of wall time the main thread waits in fsync: nobody's CPU, yet a one-thread runtime serves nothing. */
export function syncWaitMeter(pid: number, everyMs = 2): () => number | undefined {
  let samples = 0;
  let syncing = 0;
  const timer = setInterval(() => {
    try {
      const syscall = Number(readFileSync(`/proc/${pid}/task/${pid}/syscall`, "utf8").split(" ", 1)[0]);
      samples++;
      if (SYNC_SYSCALLS.has(syscall)) syncing++;
    } catch {
      // not permitted, or the process is gone: no sample
    }
  }, everyMs);
  return () => {
    clearInterval(timer);
    return samples > 0 ? (100 * syncing) / samples : undefined;
  };
}

/** CPU used by everything on the (shared) machine except `ours`, as % of one core, since it was called. */
export function othersMeter(ours: readonly number[]): () => number {
  const machine = machineBusyMs();
  const mine = sumCpu(ours);
  const started = performance.now();
  return () => Math.max(0, (100 * (machineBusyMs() - machine - (sumCpu(ours) - mine))) / Math.max(1, performance.now() - started));
}

/** How long until the processes used less than `belowPct` of a core over `sliceMs` (undefined: not by `maxMs`). */
export async function waitIdle(pids: readonly number[], { belowPct = 10, sliceMs = 200, maxMs = 10_000 } = {}): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < maxMs) {
    const meter = cpuMeter(pids);
    await sleep(sliceMs);
    if (meter() < belowPct) return performance.now() - started;
  }
  return undefined;
}

/** Every process whose ancestry leads to `root` (not `root` itself). */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const ppid = /^\d+$/.test(entry) ? parentOf(Number(entry)) : undefined;
    if (ppid !== undefined) parent.set(Number(entry), ppid);
  }
  const found: number[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

export function listeningPid(port: number, candidates: readonly number[]): number | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of orElse(() => readFileSync(table, "utf8"), "").split("\n")) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN (never the header's); column 10 is the inode.
      if (cols[3] === "0A" && Number.parseInt(cols[1]?.split(":")[1] ?? "", 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  for (const pid of candidates) {
    for (const fd of orElse(() => readdirSync(`/proc/${pid}/fd`), [])) {
      const inode = /^socket:\[(\d+)\]$/.exec(orElse(() => readlinkSync(`/proc/${pid}/fd/${fd}`), ""))?.[1];
      if (inode && inodes.has(inode)) return pid;
    }
  }
  return undefined;
}

export const executable = (pid: number): string | undefined => orElse(() => readlinkSync(`/proc/${pid}/exe`), undefined);
