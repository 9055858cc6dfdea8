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

/** The parent of a process; `undefined` when there is no such process (or no /proc). */
export function parentOf(pid: number): number | undefined {
  const ppid = procStat(pid)?.[1];
  return ppid === undefined ? undefined : Number(ppid);
}
