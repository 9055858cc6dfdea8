/**
 * @module
 * One relay per state directory: two workerd processes on the same Durable Object SQLite files
 * make the second fail later with SQLITE_BUSY. The lock is the highest-numbered
 * `relay.lock.<n>` in the directory, holding its holder's pid (and, where /proc tells it, the
 * process's start time, so a reused pid is not mistaken for the holder); a lock whose holder is
 * gone, or that its holder released, is taken over.
 *
 * Taking the lock is creating the next number, linked into place from a file written whole
 * under a private name: a link is atomic and fails if the name exists, so of several relays
 * that find the same stale lock at once exactly one takes it, and a reader never sees half a
 * lock. (Removing the stale lock and then creating it again would let two relays each remove
 * and create, both believing they hold it.) Releasing is creating the next number free, so the
 * number never goes back to one a slow taker could still create.
 */
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { alive, startTime } from "./proc.ts";

const LOCK_FILE = /^relay\.lock\.(\d+)$/;
const lockFile = (directory: string, n: number): string => join(directory, `relay.lock.${n}`);

export class StateDirectoryInUse extends Error {
  readonly directory: string;
  readonly pid: number;
  constructor(directory: string, pid: number) {
    super(`the state directory ${directory} is in use by another relay (pid ${pid})`);
    this.directory = directory;
    this.pid = pid;
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

/** The number of the directory's lock: its highest `relay.lock.<n>` (0 for none). */
function current(directory: string): number {
  let highest = 0;
  for (const name of readdirSync(directory)) highest = Math.max(highest, Number(LOCK_FILE.exec(name)?.[1] ?? 0));
  return highest;
}

/** Link `contents`, written whole under a private name, to `path`; false if `path` exists. */
function create(directory: string, path: string, contents: string): boolean {
  const mine = join(directory, `relay.lock-${process.pid}-${randomBytes(4).toString("hex")}`);
  writeFileSync(mine, contents);
  try {
    linkSync(mine, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    unlinkSync(mine);
  }
}

/**
 * Take `directory` (created if missing) for this process; throws `StateDirectoryInUse` when a
 * live process holds it. Returns the release.
 */
export function lockStateDirectory(directory: string): () => void {
  mkdirSync(directory, { recursive: true });
  const me = `${process.pid} ${startTime(process.pid)}\n`;
  for (;;) {
    const n = current(directory);
    const held = n > 0 ? holder(lockFile(directory, n)) : undefined;
    if (held && alive(held.pid, held.started)) throw new StateDirectoryInUse(directory, held.pid);
    // None, stale, released (or unreadable): the next number is the lock; losing the race to
    // create it, look again at who won.
    if (!create(directory, lockFile(directory, n + 1), me)) continue;
    for (let older = n; older > 0; older--) rmSync(lockFile(directory, older), { force: true });
    return () => {
      create(directory, lockFile(directory, n + 2), "released\n");
      rmSync(lockFile(directory, n + 1), { force: true });
    };
  }
}
