/**
 * `npm run dev` (wrangler dev) twice at the same moment, on two ports: both serve. wrangler
 * picks the DevTools inspector's port by probing from 9229, so two started together both took
 * 9229 and the second failed with "Address already in use"; `npm run dev` asks for a free one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePorts, portClosed, waitForOutput } from "./harness.ts";

interface Dev {
  child: ChildProcess;
  port: number;
  output(): string;
}

const devs: Dev[] = [];
const stateDirs: string[] = [];

function dev(port: number): Dev {
  const state = mkdtempSync(join(tmpdir(), "relay-dev-state-"));
  stateDirs.push(state);
  const child = spawn("npm", ["run", "dev", "--", "--port", String(port), "--persist-to", state], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  return { child, port, output: () => log };
}

afterAll(async () => {
  await Promise.all(
    devs.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      process.kill(-child.pid!, "SIGINT");
      await exited;
    }),
  );
  for (const { port } of devs) expect(await portClosed(port)).toBe(true);
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("npm run dev", () => {
  it("two started at the same moment on different ports both serve", async () => {
    const ports = await freePorts(2);
    devs.push(...ports.map(dev));
    await Promise.all(devs.map((d) => waitForOutput(d.child, d.output, /Ready on http:\/\/\S+/, 90_000)));
    for (const { port, output } of devs) {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(response.status, output()).toBe(200);
      await response.body?.cancel();
    }
  }, 120_000);
});
