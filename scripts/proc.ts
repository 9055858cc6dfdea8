/**
 * @module
 * What Linux's /proc says about a process, for the launcher and its tests.
 */
import { readFileSync } from "node:fs";

/**
 * The fields of `/proc/<pid>/stat` after the command name: `[0]` state, `[1]` parent pid,
 * `[19]` start time (clock ticks since boot); `undefined` when there is no such process (or no /proc).
 */
export function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** A process's start time (clock ticks since boot), or "" where /proc does not say. */
export const startTime = (pid: number): string => procStat(pid)?.[19] ?? "";

/**
 * Whether the process that had `pid` and started at `started` ("": unknown) still runs: not a
 * zombie, and not another process that got its pid since.
 */
export function alive(pid: number, started: string): boolean {
  const stat = procStat(pid);
  if (stat) return stat[0] !== "Z" && (started === "" || stat[19] === started);
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, as someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The parent of a process; `undefined` when there is no such process (or no /proc). */
export function parentOf(pid: number): number | undefined {
  const ppid = procStat(pid)?.[1];
  return ppid === undefined ? undefined : Number(ppid);
}

/**
 * Call `stop` once whoever started this process is gone: nothing signals a process whose parent
 * died without forwarding a signal (npm does not forward SIGTERM, and nothing is told of a kill
 * -9). Under npm, which runs scripts through `sh -c`, the shell outlives a kill -9 of npm (it is
 * handed to init), so a change of the parent's parent counts too. Looks once a second.
 */
export function onOrphaned(stop: () => void): void {
  const parent = process.ppid;
  const npm = process.env.npm_lifecycle_event === undefined ? undefined : parentOf(parent);
  const orphaned = () => process.ppid !== parent || (npm !== undefined && parentOf(parent) !== npm);
  setInterval(() => orphaned() && stop(), 1000).unref();
}
