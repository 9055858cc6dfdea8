/**
 * The relay never outlives its launcher, and one state directory has one relay: `kill -9` of
 * the launcher takes workerd with it (port free, state directory free, no secret left on
 * disk), and so does `kill -9` of `npm start`; a second relay on a directory a live one holds
 * refuses to start, saying so.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parentOf } from "../../scripts/proc.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { freePort, launch, portClosed, processExit, running, startRelay, type RunningRelay } from "./harness.ts";

const TOKEN = "start-state-upstream-token-5e0b";

/** Files under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const path = join(dir, entry);
    try {
      if (statSync(path).isFile() && readFileSync(path).includes(needle)) found.push(path);
    } catch {
      // removed meanwhile
    }
  }
  return found;
}

describe("the relay's processes and its state directory", () => {
  let sim: Simulator;
  let dir: string;
  const relays: RunningRelay[] = [];
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, initial: { namespaces: ["app"], podsPerNamespace: 2, nodes: 1, deployments: 0 } });
    dir = mkdtempSync(join(tmpdir(), "relay-start-state-"));
  });
  afterAll(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("kill -9 of the launcher: workerd exits, nothing secret stays on disk, the next relay takes the state over", async () => {
    const state = join(dir, "state");
    // Everything the launcher, Miniflare and workerd write to a temporary directory lands here.
    const temporary = mkdtempSync(join(dir, "tmp-"));
    const env = { UPSTREAM_URL: sim.url, UPSTREAM_TOKEN: TOKEN, PERSIST_DIR: state, TMPDIR: temporary };
    const first = await startRelay(env);
    relays.push(first);
    expect(await fetch(`${first.url}/api/v1/namespaces/app/pods`).then((r) => r.status)).toBe(200);

    const two = launch({ ...env, PORT: String(await freePort()) });
    try {
      expect(await two.exitCode()).toBe(1);
    } finally {
      await two.interrupt();
    }
    const refusals = two
      .output()
      .split("\n")
      .filter((line) => line.startsWith("[start] the state directory"));
    expect(refusals).toEqual([`[start] the state directory ${state} is in use by another relay (pid ${first.pids.launcher}): stop it, or give this relay another PERSIST_DIR`]);

    process.kill(first.pids.launcher, "SIGKILL");
    await processExit(first.pids.workerd, 10_000);
    expect(await portClosed(first.port)).toBe(true);
    expect(filesContaining(temporary, TOKEN)).toEqual([]);
    expect(filesContaining(state, TOKEN)).toEqual([]);

    const next = await startRelay({ ...env, PORT: String(first.port) });
    relays.push(next);
    const pods = await fetch(`${next.url}/api/v1/namespaces/app/pods`);
    expect(pods.status).toBe(200);
    expect(((await pods.json()) as { items: unknown[] }).items).toHaveLength(2);
  });

  it("kill -9 of npm start itself (the pid a shell's $! or a supervisor holds): the launcher, workerd and the port go too", async () => {
    const started = await startRelay({ UPSTREAM_URL: sim.url, UPSTREAM_TOKEN: TOKEN, PERSIST_DIR: join(dir, "npm-killed") });
    relays.push(started);
    // npm runs the launcher through `sh -c`, which a kill -9 of npm leaves running.
    const shell = parentOf(started.pids.launcher)!;
    process.kill(started.process.pid!, "SIGKILL");
    try {
      await Promise.all([processExit(started.pids.launcher, 10_000), processExit(started.pids.workerd, 10_000), processExit(shell, 10_000)]);
      expect(await portClosed(started.port)).toBe(true);
    } finally {
      // If they outlived npm, Ctrl-C to what is left of its process group.
      if (running(started.pids.launcher)) process.kill(-started.process.pid!, "SIGINT");
    }
  });
});
