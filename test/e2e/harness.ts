/**
 * End-to-end harness: `npm start` as a user runs it (its own process group, stopped with the
 * signal a terminal's Ctrl-C sends), on free ports, with its output kept for failures; and
 * what a test needs to know about the processes it started: are they gone, is a port closed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { connect, createServer } from "node:net";
import { procStat } from "../../scripts/proc.ts";
import { LineReader } from "../kit/lines.ts";

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}

/** `n` distinct free ports: each held until all are chosen, so two can never be the same. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer().listen(0, "127.0.0.1"));
  await Promise.all(servers.map((server) => once(server, "listening")));
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))));
  return ports;
}

/** Wait until `output()` contains `text`, failing with the output so far after `ms`. */
export async function waitForOutput(child: ChildProcess, output: () => string, text: string | RegExp, ms = 90_000): Promise<void> {
  const matches = () => (typeof text === "string" ? output().includes(text) : text.test(output()));
  if (matches()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${String(text)}; output:\n${output()}`)), ms);
    const onData = () => matches() && finish();
    const onExit = () => finish(new Error(`process exited before printing ${String(text)}; output:\n${output()}`));
    function finish(error?: Error) {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("close", onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    // "close", not "exit": by then everything it printed (its last words included) has been read.
    child.once("close", onExit);
  });
}

/** `npm start` as launched: its output so far, and its exit. */
export interface Launch {
  process: ChildProcess;
  /** Everything the processes printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal) of `npm start`. */
  exited: Promise<number | NodeJS.Signals>;
  /** The exit code, once it exits on its own; fails with the output after `ms`. */
  exitCode(ms?: number): Promise<number | NodeJS.Signals>;
  /** Ctrl-C, and wait until `npm start` has exited. */
  interrupt(): Promise<void>;
}

/** Start `npm start` with `env` added to this process's environment, in its own process group, as a terminal would. */
export function launch(env: Record<string, string>): Launch {
  const child = spawn("npm", ["start"], { env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal!)));
  return {
    process: child,
    output: () => log,
    exited,
    async exitCode(ms = 60_000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`npm start still runs after ${ms} ms; output:\n${log}`)), ms)));
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    async interrupt() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(-child.pid!, "SIGINT");
      await exited;
    },
  };
}

export interface RunningRelay extends Launch {
  url: string;
  port: number;
  /** The launcher (`node scripts/start.ts`), the relay's workerd and its replica hubs' (`REPLICA_WORKERD=1`), as the launcher printed them. */
  pids: { launcher: number; workerd: number; replicas?: number };
  /** Ctrl-C, then wait until npm, the launcher and workerd have all exited. */
  stop(): Promise<void>;
}

/**
 * `npm start` once it says the relay is ready: on `env.PORT`, or else on a port the kernel picks
 * as it binds (`PORT=0`), so no other process can take it between choosing and binding.
 */
export async function startRelay(env: Record<string, string> = {}): Promise<RunningRelay> {
  return relayReady(launch({ PORT: "0", ...env }));
}

/** The launch, once the relay it started says it is ready (fails with its output if it does not). */
export async function relayReady(started: Launch): Promise<RunningRelay> {
  const { process: child, output } = started;
  let pids: RegExpExecArray | null;
  let ready: RegExpExecArray | null;
  try {
    await waitForOutput(child, output, "[start] relay ready at");
    pids = /relay is workerd pid (\d+) \(launcher pid (\d+)\)/.exec(output());
    ready = /\[start\] relay ready at https?:\/\/127\.0\.0\.1:(\d+)/.exec(output());
    if (!pids || !ready) throw new Error(`npm start did not say which processes it started, or where:\n${output()}`);
  } catch (e) {
    await started.interrupt();
    throw e;
  }
  const port = Number(ready[1]);
  const launcher = Number(pids[2]);
  const workerd = Number(pids[1]);
  const replicasPid = /replica hubs are workerd pid (\d+)/.exec(output());
  const replicas = replicasPid ? Number(replicasPid[1]) : undefined;
  return {
    ...started,
    url: `http://127.0.0.1:${port}`,
    port,
    pids: { launcher, workerd, replicas },
    async stop() {
      await started.interrupt();
      await Promise.all([launcher, workerd, ...(replicas === undefined ? [] : [replicas])].map((pid) => processExit(pid)));
    },
  };
}

/**
 * Whether a process (not necessarily a child of this one) still runs. A zombie has exited once
 * it is its only thread left: before that, its other threads may still hold its files and sockets.
 */
export function running(pid: number): boolean {
  const state = procStat(pid)?.[0];
  if (state === undefined) return false;
  if (state !== "Z") return true;
  try {
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

/**
 * Wait until a process has exited. No event announces the exit of a process that is not this
 * one's child, so this looks often, and fails after `ms` naming the process.
 */
export async function processExit(pid: number, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (running(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether nothing listens on a loopback port (a connection is refused). */
export async function portClosed(port: number): Promise<boolean> {
  const socket = connect(port, "127.0.0.1");
  try {
    await once(socket, "connect");
    return false;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ECONNREFUSED") return true;
    throw e;
  } finally {
    socket.destroy();
  }
}

/** Lines a command prints, as they come; `stop()` kills it. */
export function lines(command: string, args: string[]): { next(match: (line: string) => boolean, ms?: number): Promise<string>; stop(): void } {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const stdout = new LineReader(child.stdout!, () => child.kill("SIGTERM"));
  return {
    next: async (match, ms = 30_000) => (await stdout.untilLine(match, `a matching line from ${command}`, ms)).at(-1)!,
    stop: () => stdout.close(),
  };
}
