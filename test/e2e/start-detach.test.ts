/**
 * `npm start -- --detach` and `npm stop`, as a script runs them: the start returns once the
 * relay is ready, having printed what to try; the relay outlives it (its launcher is meant to be
 * orphaned) and keeps serving a watch; a second start on the port is refused; `npm stop` ends the
 * launcher and its workerd. Bad flags fail with one line that says what to do.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openWatch } from "../kit/lines.ts";
import { freePort, portClosed, processExit, running } from "./harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const state = mkdtempSync(join(tmpdir(), "detach-state-"));
let launcher: number | undefined;

/** An npm script as a shell runs it, to its end. */
const npm = (args: string[], env: Record<string, string> = {}) =>
  spawnSync("npm", ["run", "-s", ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, PERSIST_DIR: state, ...env }, timeout: 120_000 });

afterAll(() => {
  if (launcher !== undefined && running(launcher)) process.kill(-launcher, "SIGKILL");
  rmSync(state, { recursive: true, force: true });
});

describe("npm start -- --detach, then npm stop", () => {
  it("refuses flags it does not know, a port it cannot name, and a stop with nothing to stop, each in one line", async () => {
    const bogus = npm(["start", "--", "--bogus"]);
    expect([bogus.status, bogus.stderr.trim()]).toEqual([2, expect.stringMatching(/^\[start\] npm start takes --detach .*, not --bogus; settings are environment variables: PORT, AUTH_MODE/)]);
    const badPort = npm(["start", "--", "--detach"], { PORT: "eighty" });
    expect([badPort.status, badPort.stderr.trim()]).toEqual([2, '[start] PORT must be a port number (0: one the kernel picks), not "eighty"']);
    const port = await freePort();
    const nothing = npm(["stop"], { PORT: String(port) });
    expect([nothing.status, nothing.stderr.trim()]).toEqual([1, `[stop] no relay started with \`npm start -- --detach\` runs on port ${port}`]);
  });

  it("returns once the relay is ready, on a port the kernel picks, which outlives it and serves until npm stop", async () => {
    const started = npm(["start", "--", "--detach"], { PORT: "0" });
    expect(started.status, started.stderr).toBe(0);
    const port = Number(/\[start\] relay ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(started.stdout)?.[1]);
    const env = { PORT: String(port) };
    expect(started.stdout).toContain(`[start] the relay runs in the background (its log: ${join(state, `start-${port}.log`)})`);
    expect(started.stdout).toContain(`[start] PORT=${port} npm stop stops the relay and the simulated cluster`);
    const pids = /relay is workerd pid (\d+) \(launcher pid (\d+)\)/.exec(started.stdout)!;
    const workerd = Number(pids[1]);
    launcher = Number(pids[2]);

    // Orphaned by design: its watch goes on past the launcher's look for a lost parent (every second).
    const watch = await openWatch(`http://127.0.0.1:${port}/api/v1/pods?watch=1`);
    const first = await watch.untilLine(() => true, "a first event", 30_000);
    const since = Date.now();
    await watch.untilLine(() => Date.now() - since > 3_000, "events for 3 s after the start returned", 30_000);
    watch.close();
    expect(first.length).toBeGreaterThan(0);
    expect(running(launcher)).toBe(true);

    const again = npm(["start", "--", "--detach"], env);
    expect([again.status, again.stderr.trim()]).toEqual([1, `[start] a relay started with --detach already runs on port ${port} (launcher pid ${launcher}): PORT=${port} npm stop stops it`]);

    const stopped = npm(["stop"], env);
    expect([stopped.status, stopped.stdout.trim()]).toEqual([0, expect.stringMatching(new RegExp(`^\\[stop\\] stopped the relay on port ${port} \\(launcher pid ${launcher}\\)`))]);
    await processExit(launcher);
    await processExit(workerd);
    expect(await portClosed(port)).toBe(true);
    launcher = undefined;
  }, 180_000);
});
