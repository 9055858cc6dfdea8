import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { syncWaitMeter } from "../../bench/proc.ts";

/** A process that writes and fsyncs a file in a loop, or one that only sleeps, until killed. */
function child(syncing: boolean, dir: string): ChildProcess {
  const script = syncing
    ? `const fs = require("node:fs"); const fd = fs.openSync(${JSON.stringify(join(dir, "f"))}, "w"); for (;;) { fs.writeSync(fd, "x".repeat(4096)); fs.fsyncSync(fd); }`
    : "setInterval(() => {}, 1000);";
  return spawn(process.execPath, ["-e", script], { stdio: "ignore" });
}

describe("the benchmark's fsync wait meter", () => {
  const started: ChildProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const c of started.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill("SIGKILL");
        await once(c, "exit");
      }
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  // The meter samples for a while by design: the wait is the measurement, not synchronisation.
  it("sees a process that keeps fsyncing wait in fsync, and one that sleeps not at all", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kwr-fsync-"));
    dirs.push(dir);
    const [busy, idle] = [child(true, dir), child(false, dir)];
    started.push(busy, idle);
    await Promise.all([once(busy, "spawn"), once(idle, "spawn")]);
    const [busyMeter, idleMeter] = [syncWaitMeter(busy.pid as number), syncWaitMeter(idle.pid as number)];
    await sleep(1000);
    const [busyPct, idlePct] = [busyMeter(), idleMeter()];
    expect(busyPct).toBeGreaterThan(0);
    expect(idlePct).toBe(0);
  });
});
