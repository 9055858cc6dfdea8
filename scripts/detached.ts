/**
 * @module
 * `npm start -- --detach` and `npm stop`: the launcher run in the background, so a shell
 * script (or a reader pasting a README block) can start the relay and go on once it is ready.
 * The launcher itself runs on, in a session of its own, with its output in a log file; the
 * relay's runtime stays tethered to it, as in the foreground. What waits for it prints the
 * launcher's lines until the relay is ready (or the launcher fails), then returns. A pid file
 * per port says which launcher `npm stop` stops.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { procStat } from "./proc.ts";

/** Set in the environment of the launcher a `--detach` started. */
export const DETACHED_ENV = "KUBE_WATCH_RELAY_DETACHED";

/** The pid file and log of the detached launcher on `port`, in the state directory (`PERSIST_DIR`). */
export function detachedFiles(port: number | string, stateDir = process.env.PERSIST_DIR ?? ".wrangler/state"): { pid: string; log: string } {
  const dir = resolve(stateDir);
  return { pid: join(dir, `start-${port}.pid`), log: join(dir, `start-${port}.log`) };
}

/** How a reader stops the detached relay on `port`. */
export const stopCommand = (port: number): string => (port === 8787 ? "npm stop" : `PORT=${port} npm stop`);

/** Where the launcher says the relay serves. */
const READY = /^\[start\] relay ready at https?:\/\/[^:]+:(\d+)/m;

/** The launcher's line once the relay is ready and everything is printed (start.ts's last). */
const LAST_LINE = /^\[start\] (npm stop|PORT=\d+ npm stop) stops/m;

/**
 * Start `script` (the launcher) detached on `port` (`0`: one the kernel picks as the relay binds,
 * which the launcher prints), print what it prints until the relay is ready, and resolve with 0;
 * or, when it fails first, with its exit code.
 */
export async function detach(script: string, port: number): Promise<number> {
  const running = port === 0 ? undefined : launcherOn(port);
  if (running !== undefined) {
    console.error(`[start] a relay started with --detach already runs on port ${port} (launcher pid ${running}): ${stopCommand(port)} stops it`);
    return 1;
  }
  // A port the kernel picks is known once the relay is ready: its files are named for it then.
  let files = detachedFiles(port === 0 ? `0-${process.pid}` : port);
  mkdirSync(resolve(files.log, ".."), { recursive: true });
  const log = openSync(files.log, "w");
  const child = spawn(process.execPath, [script], { detached: true, stdio: ["ignore", log, log], env: { ...process.env, [DETACHED_ENV]: "1" } });
  closeSync(log);
  if (port !== 0) writeFileSync(files.pid, `${child.pid}\n`);
  const exited = new Promise<number>((done) => child.once("exit", (code, signal) => done(code ?? (signal ? 128 : 1))));
  // Interrupted while it waits: the launcher it started goes too.
  const interrupt = () => {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // gone already
    }
  };
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  const follow = new LogFollower(files.log);
  let code: number | undefined;
  void exited.then((c) => (code = c));
  for (;;) {
    const text = follow.read();
    if (text) process.stdout.write(text);
    if (LAST_LINE.test(follow.all)) break;
    if (code !== undefined) {
      process.stdout.write(follow.read());
      rmSync(files.pid, { force: true });
      return code === 0 ? 1 : code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.off("SIGINT", interrupt);
  process.off("SIGTERM", interrupt);
  child.unref();
  if (port === 0) {
    const bound = detachedFiles(Number(READY.exec(follow.all)?.[1]));
    renameSync(files.log, bound.log);
    writeFileSync(bound.pid, `${child.pid}\n`);
    files = bound;
  }
  console.log(`[start] the relay runs in the background (its log: ${files.log})`);
  return 0;
}

/** The detached launcher on `port`, if one runs (a stale pid file, or a pid now someone else's, is not one). */
export function launcherOn(port: number): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(detachedFiles(port).pid, "utf8").trim());
  } catch {
    return undefined;
  }
  return isLauncher(pid) ? pid : undefined;
}

/** Whether `pid` is a detached launcher that has not exited (where there is no /proc: whether it exists). */
export function isLauncher(pid: number): boolean {
  if (!existsSync("/proc/self")) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  const state = procStat(pid)?.[0];
  if (state === undefined || state === "Z") return false;
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").includes(`${DETACHED_ENV}=1`);
  } catch {
    return false;
  }
}

/** What a log file has gained since the last read. */
class LogFollower {
  readonly #path: string;
  readonly #decoder = new StringDecoder("utf8");
  #offset = 0;
  all = "";

  constructor(path: string) {
    this.#path = path;
  }

  read(): string {
    const fd = openSync(this.#path, "r");
    try {
      const chunks: Buffer[] = [];
      for (;;) {
        const buffer = Buffer.alloc(64 * 1024);
        const n = readSync(fd, buffer, 0, buffer.length, this.#offset);
        if (n === 0) break;
        this.#offset += n;
        chunks.push(buffer.subarray(0, n));
      }
      const text = this.#decoder.write(Buffer.concat(chunks));
      this.all += text;
      return text;
    } finally {
      closeSync(fd);
    }
  }
}
