/**
 * @module
 * One relay per state directory: two workerd processes on the same Durable Object SQLite files
 * make the second fail later with SQLITE_BUSY. A lock file in the directory holds the holder's
 * pid (and, where /proc tells it, the process's start time, so a reused pid is not mistaken for
 * the holder); a lock whose holder is gone is stale and taken over.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { procStat } from "./proc.ts";

const LOCK_FILE = "relay.lock";

export class StateDirectoryInUse extends Error {
  readonly directory: string;
  readonly pid: number;
  constructor(directory: string, pid: number) {
    super(`the state directory ${directory} is in use by another relay (pid ${pid})`);
    this.directory = directory;
    this.pid = pid;
  }
}

/** The process's start time, or "" where /proc does not say. */
const startTime = (pid: number): string => procStat(pid)?.[19] ?? "";

/** Whether the holder still runs: not a zombie, and not another process that got its pid since. */
function alive(pid: number, started: string): boolean {
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

function holder(lock: string): { pid: number; started: string } | undefined {
  try {
    const [pid, started = ""] = readFileSync(lock, "utf8").trim().split(" ");
    return Number.isInteger(Number(pid)) && Number(pid) > 0 ? { pid: Number(pid), started } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Take `directory` (created if missing) for this process; throws `StateDirectoryInUse` when a
 * live process holds it. Returns the release.
 */
export function lockStateDirectory(directory: string): () => void {
  mkdirSync(directory, { recursive: true });
  const lock = join(directory, LOCK_FILE);
  // Written whole under a private name, then linked into place: link fails if the lock exists,
  // and a reader never sees half a lock.
  const mine = `${lock}.${process.pid}`;
  writeFileSync(mine, `${process.pid} ${startTime(process.pid)}\n`);
  try {
    for (;;) {
      try {
        linkSync(mine, lock);
        return () => rmSync(lock, { force: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const current = holder(lock);
      if (current && alive(current.pid, current.started)) throw new StateDirectoryInUse(directory, current.pid);
      // Stale (or unreadable): its holder is gone.
      rmSync(lock, { force: true });
    }
  } finally {
    unlinkSync(mine);
  }
}
