/**
 * `npm run dev` works as `npm start` does, under wrangler dev: with no setup it relays a
 * simulated cluster in AUTH_MODE=none (it served nothing but 503s, AUTH_MODE unset and no
 * cluster behind it), and takes the relay's variables from the environment (AUTH_MODE=jwt and
 * its secret here). Twice at the same moment, on two ports: both serve. wrangler picks the
 * DevTools inspector's port by probing from 9229, so two started together both took 9229 and
 * the second failed with "Address already in use"; `npm run dev` asks for a free one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "hono/jwt";
import { afterAll, describe, expect, it } from "vitest";
import { freePorts, portClosed, waitForOutput } from "./harness.ts";

interface Dev {
  child: ChildProcess;
  port: number;
  output(): string;
}

const devs: Dev[] = [];
const stateDirs: string[] = [];

function dev(port: number, env: Record<string, string> = {}): Dev {
  const state = mkdtempSync(join(tmpdir(), "relay-dev-state-"));
  stateDirs.push(state);
  const child = spawn("npm", ["run", "dev", "--", "--port", String(port), "--persist-to", state], { detached: true, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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

const SECRET = "dev-test-secret-long-enough-for-hs256";

describe("npm run dev", () => {
  it("two started at the same moment on different ports both serve a simulated cluster, as npm start does", async () => {
    const ports = await freePorts(2);
    const started = [dev(ports[0]!), dev(ports[1]!, { AUTH_MODE: "jwt", AUTH_JWT_SECRET: SECRET })];
    devs.push(...started);
    await Promise.all(devs.map((d) => waitForOutput(d.child, d.output, "[dev] relay ready at", 90_000)));
    const [open, jwt] = started as [Dev, Dev];
    for (const { port, output } of devs) {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(response.status, output()).toBe(200);
      await response.body?.cancel();
    }
    // AUTH_MODE=none, the simulated cluster behind it.
    const pods = (await (await fetch(`http://127.0.0.1:${open.port}/api/v1/namespaces/team-a/pods`)).json()) as { kind: string; items: unknown[] };
    expect(pods.kind).toBe("PodList");
    expect(pods.items.length).toBeGreaterThan(0);
    expect(open.output()).toContain(`curl -N 'http://127.0.0.1:${open.port}/api/v1/pods?watch=1'`);
    // The environment's AUTH_MODE and secret reach the Worker, and never the output.
    expect((await fetch(`http://127.0.0.1:${jwt.port}/api/v1/namespaces/team-a/pods`)).status).toBe(401);
    const token = await sign({ sub: "dev", exp: Math.floor(Date.now() / 1000) + 600, rules: [{ apiGroups: [""], resources: ["pods"], namespaces: ["team-a"] }] }, SECRET, "HS256");
    const allowed = await fetch(`http://127.0.0.1:${jwt.port}/api/v1/namespaces/team-a/pods`, { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    await allowed.body?.cancel();
    expect(jwt.output()).not.toContain(SECRET);
  }, 120_000);
});
