/**
 * @module
 * The bench's child processes, each in a process group of its own (stopping it stops what the child
 * started), over Node's IPC channel; a child exits when the orchestrator goes, so none outlives a run.
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

type Message = { type: "ready"; info: unknown } | { type: "failed"; error: string } | { id: number; result?: unknown; error?: string };

export interface Child<Ready> {
  readonly name: string;
  readonly pid: number;
  /** What the child announced once it was up. */
  readonly info: Ready;
  readonly running: boolean;
  tail(): string;
  call<T = unknown>(op: string, payload?: unknown): Promise<T>;
  stop(): Promise<void>;
}

const running = new Set<() => Promise<void>>();

/** Fork `entry` with `args`, logging to `<logDir>/<name>.log`, and wait for it to be ready. */
export async function startChild<Ready>(name: string, entry: URL, args: unknown, logDir: string, readyTimeoutMs = 60_000): Promise<Child<Ready>> {
  const logFile = join(logDir, `${name}.log`);
  const log = openSync(logFile, "a");
  const forked = fork(fileURLToPath(entry), [JSON.stringify(args)], {
    detached: true,
    // So that `heap` can measure live memory rather than garbage not yet collected.
    execArgv: ["--expose-gc"],
    stdio: ["ignore", log, log, "ipc"],
    // Keep wrangler and miniflare off the internet, as CI does.
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  });
  closeSync(log);
  const pid = forked.pid;
  if (pid === undefined) throw new Error(`${name}: could not start`);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let exited = false;
  forked.on("exit", (code, signal) => {
    exited = true;
    for (const p of pending.values()) p.reject(new Error(`${name}: exited (${signal ?? code})\n${tail(logFile)}`));
    pending.clear();
  });
  const ready = new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready within ${readyTimeoutMs} ms\n${tail(logFile)}`)), readyTimeoutMs);
    forked.on("exit", (code, signal) => reject(new Error(`${name}: exited (${signal ?? code}) before it was ready\n${tail(logFile)}`)));
    forked.on("message", (raw) => {
      const message = raw as Message;
      if ("type" in message) {
        clearTimeout(timer);
        if (message.type === "ready") resolve(message.info as Ready);
        else reject(new Error(`${name}: ${message.error}\n${tail(logFile)}`));
        return;
      }
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(`${name}: ${message.error}`));
      else waiter?.resolve(message.result);
    });
  });
  const stop = () => stopProcess(forked, pid).finally(() => running.delete(stop));
  running.add(stop);
  const info = await ready.catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  return {
    name,
    pid,
    info,
    get running() {
      return !exited;
    },
    tail: () => tail(logFile),
    call<T>(op: string, payload?: unknown): Promise<T> {
      if (exited) return Promise.reject(new Error(`${name}: not running\n${tail(logFile)}`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        forked.send({ id, op, payload });
      });
    },
    stop,
  };
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** Ask the child to stop what it started, give it a few seconds, then kill what is left of its group. */
async function stopProcess(child: ChildProcess, pid: number): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const force = setTimeout(() => signalGroup(pid, "SIGKILL"), 5000);
    await exited;
    clearTimeout(force);
  }
  // The child may be gone while something it started is not.
  signalGroup(pid, "SIGKILL");
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

function tail(file: string): string {
  try {
    const text = readFileSync(file, "utf8");
    return `--- last lines of ${file} ---\n${text.slice(-3000)}`;
  } catch {
    return "";
  }
}

/** Every child answers `heap`: its JS heap after a full collection. */
function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

export interface Served {
  info: unknown;
  ops: Record<string, (payload: never) => unknown>;
  stop?: () => Promise<void>;
}

/** An object's class's methods, as a child's operations. */
export function methodsOf(target: object): Served["ops"] {
  const names = Object.getOwnPropertyNames(Object.getPrototypeOf(target)).filter((name) => name !== "constructor");
  return Object.fromEntries(names.map((name) => [name, (payload: never) => (target as Record<string, (payload: never) => unknown>)[name]?.(payload)]));
}

/** The child side: start, announce `ready`, answer requests; exit on SIGTERM or when the orchestrator goes. */
export function serveParent<Args>(start: (args: Args) => Promise<Served>): void {
  const args = JSON.parse(process.argv[2] ?? "{}") as Args;
  let served: Served | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await served?.stop?.().catch((e: unknown) => console.error("stop failed:", e));
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("disconnect", () => void stop());
  process.on("message", (raw) => {
    const { id, op, payload } = raw as { id: number; op: string; payload: never };
    const handler = op === "heap" ? heapUsed : served?.ops[op];
    if (!handler) return void process.send?.({ id, error: `unknown operation ${op}` });
    Promise.resolve()
      .then(() => handler(payload))
      .then(
        (result) => process.connected && process.send?.({ id, result }),
        (e: unknown) => process.connected && process.send?.({ id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
      );
  });
  start(args).then(
    (s) => {
      served = s;
      process.send?.({ type: "ready", info: s.info });
    },
    (e: unknown) => {
      process.send?.({ type: "failed", error: e instanceof Error ? (e.stack ?? e.message) : String(e) }, () => process.exit(1));
    },
  );
}
