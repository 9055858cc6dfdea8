/**
 * @module
 * A real kubectl against the simulator (skipped, loudly, when kubectl is not on PATH; on CI, a
 * failure).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { have } from "../kit/tools.ts";
import { eventually, within } from "../kit/wait.ts";

const hasKubectl = have("kubectl", "the simulator's kubectl tests");

let sim: Simulator;
let home: string;
let env: NodeJS.ProcessEnv;
const run = promisify(execFile);

beforeAll(async () => {
  sim = await startSimulator({ seed: 21 });
  // An empty kubeconfig and a private HOME, so nothing from this machine leaks in or out.
  home = mkdtempSync(join(tmpdir(), "sim-kubectl-"));
  writeFileSync(join(home, "kubeconfig"), "");
  env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: join(home, "kubeconfig") };
});
afterAll(async () => {
  await sim.close();
  rmSync(home, { recursive: true, force: true });
});

const args = (...rest: string[]) => ["--server", sim.url, "--cache-dir", join(home, "cache"), "--request-timeout", "20s", ...rest];

async function kubectl(...rest: string[]): Promise<string> {
  const { stdout } = await run("kubectl", args(...rest), { env, timeout: 30_000 });
  return stdout;
}

const rows = (table: string) =>
  table
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.split(/\s+/));

describe.skipIf(!hasKubectl)("kubectl against the simulator", { timeout: 30_000 }, () => {
  it("get pods -A prints every pod with the server-side columns", async () => {
    const out = await kubectl("get", "pods", "-A");
    expect(out.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    const names = rows(out).map((r) => `${r[0]}/${r[1]}`);
    expect(names.sort()).toEqual(
      sim
        .list("pods")
        .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)
        .sort(),
    );
    expect(rows(out).every((r) => r[2] === "1/1" && r[3] === "Running")).toBe(true);
  });

  it("get pods -n <ns> -o json returns the objects", async () => {
    const list = JSON.parse(await kubectl("get", "pods", "-n", "team-a", "-o", "json"));
    expect(list.kind).toBe("List");
    expect(list.items.map((p: any) => p.metadata.name)).toEqual(sim.list("pods", "team-a").map((p) => p.metadata?.name));
    expect(list.items[0].kind).toBe("Pod");
  });

  it("get deployments.apps -A, nodes, one pod and widgets -A", async () => {
    expect(rows(await kubectl("get", "deployments.apps", "-A")).map((r) => [r[0], r[1], r[2]])).toEqual(sim.list("deployments").map((d) => [d.metadata?.namespace, d.metadata?.name, "4/4"]));
    expect(rows(await kubectl("get", "nodes")).map((r) => [r[0], r[1]])).toEqual([
      ["sim-node-1", "Ready"],
      ["sim-node-2", "Ready"],
      ["sim-node-3", "Ready"],
    ]);
    const pod = sim.list("pods", "team-b")[0]!.metadata!.name!;
    expect(rows(await kubectl("get", "pod", pod, "-n", "team-b"))[0]![0]).toBe(pod);
    expect(rows(await kubectl("get", "widgets", "-A")).map((r) => r[1])).toEqual(sim.list("widgets").map((w) => w.metadata?.name));
  });

  it("get pods -w --output-watch-events prints churn events as they happen", async () => {
    const child = spawn("kubectl", args("get", "pods", "-n", "team-c", "-w", "--output-watch-events"), { env });
    let out = "";
    const sawLive = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        // The initial list prints as ADDED rows; a MODIFIED or DELETED row can only come from the watch.
        if (/^(MODIFIED|DELETED)\s/m.test(out)) resolve();
      });
      child.on("exit", (code) => reject(new Error(`kubectl exited early (${code}): ${out}`)));
    });
    // Churn starts once kubectl's watch is open, so the events reach it through the stream.
    await eventually(() => sim.stats().activeWatches.some((w) => w.path === "/api/v1/namespaces/team-c/pods"), "kubectl's watch to open");
    sim.churn({ ratePerSec: 40, namespaces: ["team-c"] });
    try {
      await within(sawLive, "a MODIFIED or DELETED row from kubectl");
    } finally {
      sim.churn({ ratePerSec: 0 });
      child.kill();
    }
    expect(out.split("\n")[0]).toMatch(/^EVENT\s+NAME\s+READY\s+STATUS/);
    expect(out).toMatch(/^ADDED\s/m);
  });
});
