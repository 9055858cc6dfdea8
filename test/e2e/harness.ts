/**
 * End-to-end harness: `npm start` as a user runs it (its own process group, stopped with the
 * signal a terminal's Ctrl-C sends), on free ports, with its output kept for failures.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

export interface RunningRelay {
  url: string;
  /** Everything the processes printed so far. */
  output(): string;
  /** Ctrl-C, then wait until every process of the group has exited. */
  stop(): Promise<void>;
  process: ChildProcess;
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
      child.off("exit", onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
}

export async function startRelay(env: Record<string, string> = {}): Promise<RunningRelay> {
  const port = env.PORT ?? String(await freePort());
  const child = spawn("npm", ["start"], {
    env: { ...process.env, ...env, PORT: port },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const output = () => log;
  await waitForOutput(child, output, "[start] relay ready at");
  return {
    url: `http://127.0.0.1:${port}`,
    output,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      process.kill(-child.pid!, "SIGINT");
      await exited;
    },
  };
}

/** Lines a command prints, as they come; `stop()` kills it. */
export function lines(command: string, args: string[]): { next(match: (line: string) => boolean, ms?: number): Promise<string>; stop(): void } {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const queue: string[] = [];
  let partial = "";
  let wake: (() => void) | undefined;
  child.stdout!.on("data", (d: Buffer) => {
    const parts = (partial + d.toString()).split("\n");
    partial = parts.pop() ?? "";
    queue.push(...parts.filter((l) => l.length > 0));
    wake?.();
  });
  return {
    async next(match, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const index = queue.findIndex(match);
        if (index >= 0) return queue.splice(0, index + 1).at(-1)!;
        queue.length = 0;
        if (Date.now() > deadline) throw new Error(`${command}: no matching line within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
    stop: () => child.kill("SIGTERM"),
  };
}

/** Whether any process of a group is still alive. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}
