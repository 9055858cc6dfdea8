/**
 * @module
 * Pod logs through `npm start`'s relay with the real clients: `kubectl logs` (plain, `-c`,
 * `--tail`, `--since`, `--timestamps`, `--previous`, `-f`) prints what the simulated API server
 * itself answers, several `kubectl logs -f` of one container are one follow upstream and all exit
 * when the container stops, and the live page follows a pod's log when its row is clicked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../scripts/build-client.ts";
import { have } from "../kit/tools.ts";
import { eventually } from "../kit/wait.ts";
import { launchChromium } from "./chromium.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { Kubectl, simulatorUrl } from "./kube.ts";

const hasKubectl = have("kubectl", "the end-to-end pod log tests");
const chromiumHere = have("chromium", "the live page's pod log test");
/** The namespace this file owns: churn only touches the seeded ones. */
const NS = "e2e-logs";

let relay: RunningRelay;
let sim: string;
let kubectl: Kubectl;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!hasKubectl && !chromiumHere) return;
  await buildClient();
  relay = await startRelay({ SIM_CHURN: "0" });
  sim = simulatorUrl(relay);
  kubectl = new Kubectl(relay.url);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await relay?.stop();
  kubectl?.cleanup();
});

async function simCall(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(sim + path, {
    method,
    headers: { "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return response.headers.get("content-type") === "text/plain" ? text : JSON.parse(text);
}

const seconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A pod whose containers run since `startedAgoMs`, writing a line every `intervalMs`. */
function runningPod(name: string, containers: string[], startedAgoMs: number, intervalMs: number): Promise<unknown> {
  const startedAt = seconds(Date.now() - startedAgoMs);
  return simCall("POST", `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, annotations: { "sim.kube-watch-relay.dev/log-interval-ms": String(intervalMs) } },
    spec: { nodeName: "node-1", containers: containers.map((c) => ({ name: c, image: "busybox:1.36" })) },
    status: {
      phase: "Running",
      containerStatuses: containers.map((c) => ({
        name: c,
        state: { running: { startedAt } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: "busybox:1.36",
        imageID: "",
        containerID: `containerd://${name}-${c}`,
        started: true,
      })),
    },
  });
}

async function restart(name: string, container: string): Promise<void> {
  const pod = await simCall("GET", `/api/v1/namespaces/${NS}/pods/${name}`);
  const at = seconds(Date.now());
  const statuses = pod.status.containerStatuses.map((s: any) =>
    s.name !== container
      ? s
      : {
          ...s,
          lastState: { terminated: { exitCode: 2, reason: "Error", startedAt: s.state.running.startedAt, finishedAt: at, containerID: s.containerID } },
          state: { running: { startedAt: at } },
          restartCount: 1,
          containerID: `${s.containerID}-1`,
        },
  );
  await simCall("PATCH", `/api/v1/namespaces/${NS}/pods/${name}`, { status: { containerStatuses: statuses } });
}

const simLog = (name: string, query: string) => simCall("GET", `/api/v1/namespaces/${NS}/pods/${name}/log?${query}`) as Promise<string>;

/** `kubectl logs -f …`, running: its output so far and its exit. */
function follow(...args: string[]): { stdout: () => string; exited: Promise<number | null> } {
  const child = spawn("kubectl", ["--server", relay.url, ...args], {
    env: { PATH: process.env.PATH, HOME: kubectl.home, KUBECONFIG: `${kubectl.home}/kubeconfig` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  return { stdout: () => out, exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))) };
}

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl.run(...args);
  expect(result.stderr, `kubectl ${args.join(" ")}`).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

describe.skipIf(!hasKubectl)("kubectl logs through the relay", () => {
  beforeAll(async () => {
    await runningPod("web", ["main"], 4000, 50);
    await runningPod("two", ["app", "sidecar"], 3000, 100);
    await restart("web", "main");
  });

  it("prints what the API server answers: -p, -c, --tail, --timestamps, --since", async () => {
    expect(await ok("logs", "-n", NS, "web", "-p")).toBe(await simLog("web", "previous=true"));
    expect(await ok("logs", "-n", NS, "web", "--previous", "--tail=5", "--timestamps")).toBe(await simLog("web", "previous=true&tailLines=5&timestamps=true"));
    expect(await ok("logs", "-n", NS, "web", "-p", "--limit-bytes=100")).toBe(await simLog("web", "previous=true&limitBytes=100"));
    expect(await ok("logs", "-n", NS, "two", "-c", "sidecar", "-p=false", "--tail=3")).toMatch(/^(level=\w+ [^\n]*\n){3}$/);
    const recent = await ok("logs", "-n", NS, "two", "-c", "app", "--since=2s", "--timestamps");
    const all = await simLog("two", "container=app&timestamps=true");
    const lines = recent.trim().split("\n");
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(all).toContain(line);
    expect(all.split("\n").length).toBeGreaterThan(lines.length);
    // kubectl picks the first container itself, and says so.
    const defaulted = await kubectl.run("logs", "-n", NS, "two", "--tail=1");
    expect([defaulted.code, defaulted.stderr.trim()]).toEqual([0, 'Defaulted container "app" out of: app, sidecar']);
    const missing = await kubectl.run("logs", "-n", NS, "nope");
    expect([missing.code, missing.stderr.trim()]).toEqual([1, `error: error from server (NotFound): pods "nope" not found in namespace "${NS}"`]);
  });

  it("kubectl logs -f, three times over: one follow upstream; each prints the log, and exits when the container stops", async () => {
    await runningPod("tail", ["main"], 2000, 40);
    const since = (await simCall("GET", "/_sim/requests?path=/nothing")).next;
    const followers = [follow("logs", "-f", "-n", NS, "tail"), follow("logs", "-f", "-n", NS, "tail", "-c", "main", "--timestamps"), follow("logs", "-f", "-n", NS, "tail", "--tail=2")];
    await eventually(() => followers.every((f) => f.stdout().split("\n").length > 10), "every kubectl logs -f to print lines");
    await restart("tail", "main");
    expect(await Promise.all(followers.map((f) => f.exited))).toEqual([0, 0, 0]);
    expect(followers[0]!.stdout()).toBe(await simLog("tail", "previous=true"));
    expect(followers[1]!.stdout()).toBe(await simLog("tail", "previous=true&timestamps=true"));
    expect((await simLog("tail", "previous=true")).endsWith(followers[2]!.stdout())).toBe(true);
    const requests: Array<{ path: string; query: string }> = (await simCall("GET", `/_sim/requests?since=${since}&path=/api/v1/namespaces/${NS}/pods/tail/log`)).requests;
    expect(requests.filter((r) => new URLSearchParams(r.query).get("follow") === "true")).toHaveLength(1);
  });
});

describe.skipIf(!chromiumHere)("the live page", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("a row clicked in every namespace's table: the pod comes from that table's hub, and the API server is asked for its log only", async () => {
    await runningPod("everywhere", ["main"], 1000, 100);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${relay.url}/?filter=everywhere`);
    const row = `#objects tr[data-key="${NS}/everywhere"]`;
    await page.waitForSelector(row);
    const since = (await simCall("GET", "/_sim/requests?path=/nothing")).next;
    await page.click(row);
    await page.waitForSelector("#pod-log:not([hidden])");
    expect(await page.textContent("#pod-log .pod")).toBe(`${NS}/everywhere · main`);
    await page.waitForFunction(() => (document.querySelector("#pod-log pre")?.textContent ?? "").length > 0);
    const requests: Array<{ verb: string; path: string }> = (await simCall("GET", `/_sim/requests?since=${since}&path=/api/v1/namespaces/${NS}/pods`)).requests;
    expect(requests.filter((r) => !r.path.endsWith("/log")).map((r) => `${r.verb} ${r.path}`)).toEqual([]);
    expect(requests.length).toBeGreaterThan(0);
    await page.close();
  });

  it("follows a pod's log over its relay socket when the pod's row is clicked", async () => {
    await runningPod("clicked", ["main"], 1000, 100);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${relay.url}/?namespace=${NS}`);
    await page.click(`#objects tr[data-key="${NS}/clicked"]`);
    await page.waitForSelector("#pod-log:not([hidden])");
    expect(await page.textContent("#pod-log .pod")).toBe(`${NS}/clicked · main`);
    await page.waitForFunction(() => (document.querySelector("#pod-log pre")?.textContent ?? "").split("\n").length > 5);
    const shown = ((await page.textContent("#pod-log pre")) ?? "").trim().split("\n");
    const log = await simLog("clicked", "");
    for (const line of shown) expect(log).toContain(line);
    await restart("clicked", "main");
    await page.waitForFunction(() => document.querySelector("#pod-log .state")?.getAttribute("data-state") === "ended");
    expect(await page.textContent("#pod-log .state")).toBe("ended: the container's log ended");
    expect(errors).toEqual([]);
    await page.close();
  });
});
