import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { once } from "node:events";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { have } from "../kit/tools.ts";
import { eventually, within } from "../kit/wait.ts";
import { simulatorUrl } from "./kube.ts";
import { lines, portClosed, running, startRelay, waitForOutput, type RunningRelay } from "./harness.ts";
import { firstCloseFrame } from "./raw-websocket.ts";

const curlHere = have("curl", "the curl watch test of npm start");
const kubectlHere = have("kubectl", "the write to the simulated cluster that npm start suggests");

/** The processes `pid` started, from every one of its threads. */
function children(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(" ").filter(Boolean).map(Number));
}

/** Whether `pid` holds the socket listening on loopback `port`. */
function listensOn(pid: number, port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === `0100007F:${hex}` && f[3] === "0A")
    .map((f) => `socket:[${f[9]}]`);
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return inodes.includes(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      return false;
    }
  });
}

describe("npm start", () => {
  let relay: RunningRelay;
  beforeAll(async () => {
    relay = await startRelay({ SIM_CHURN: "20" });
  });
  afterAll(async () => relay?.stop());

  it("prints what it started and where", () => {
    expect(relay.output()).toMatch(/simulated cluster at http:\/\/127\.0\.0\.1:\d+/);
    expect(relay.output()).toContain("AUTH_MODE=none");
    expect(relay.output()).toContain(`relay ready at ${relay.url}`);
  });

  it("serves from one workerd, the launcher's child, which holds the port itself: no proxy process", async () => {
    const workerds = children(relay.pids.launcher).filter((pid) => readlinkSync(`/proc/${pid}/exe`).endsWith("/workerd"));
    expect(workerds).toEqual([relay.pids.workerd]);
    expect(listensOn(relay.pids.workerd, relay.port)).toBe(true);
    const response = await fetch(`${relay.url}/healthz`);
    expect([response.status, await response.text()]).toEqual([200, "ok\n"]);
  });

  it.skipIf(!curlHere)("curl -N on a watch URL streams churn events", async () => {
    const curl = lines("curl", ["-sN", `${relay.url}/api/v1/pods?watch=1`]);
    try {
      const initial = JSON.parse(await curl.next(() => true));
      expect(initial).toMatchObject({ type: "ADDED", object: { kind: "Pod", apiVersion: "v1" } });
      // Live churn, not just the initial state.
      const live = JSON.parse(await curl.next((l) => /"type":"(MODIFIED|DELETED)"/.test(l)));
      expect(live.object.metadata.resourceVersion).toMatch(/^\d+$/);
    } finally {
      curl.stop();
    }
  });

  it.skipIf(!kubectlHere)("the write it suggests, made with kubectl on the simulated cluster, comes through the relay to kubectl get -w", async () => {
    await waitForOutput(relay.process, relay.output, "[start] Ctrl-C stops");
    const write = /^\[start\] {5}(kubectl --server http:\/\/127\.0\.0\.1:\d+ scale .*)$/m.exec(relay.output())?.[1];
    expect(write, relay.output()).toBeDefined();
    const home = mkdtempSync(join(tmpdir(), "start-write-"));
    const kubeconfig = join(home, "kubeconfig");
    writeFileSync(kubeconfig, "");
    const watch = lines("kubectl", ["--kubeconfig", kubeconfig, "--cache-dir", join(home, "cache"), "--server", relay.url, "get", "deploy", "web", "-n", "team-a", "-w"]);
    try {
      // Four wanted; how many are ready is the churn's (it flaps pods' readiness now and then).
      const before = await watch.next((l) => /^web\s+\d\/4\s/.test(l));
      expect(before).toBeDefined();
      const readyBefore = Number(/^web\s+(\d)\//.exec(before!)![1]);
      const [command, ...args] = write!.split(" ");
      const { stdout } = await promisify(execFile)(command!, [...args, "--kubeconfig", kubeconfig, "--cache-dir", join(home, "cache")], { timeout: 30_000 });
      expect(stdout.trim()).toBe("deployment.apps/web scaled");
      // The Deployment as the relay passes it on: six wanted, then more ready as its new pods start.
      expect(await watch.next((l) => /^web\s+\d\/6\s/.test(l))).toBeDefined();
      expect(await watch.next((l) => /^web\s+\d\/6\s/.test(l) && Number(/^web\s+(\d)\//.exec(l)![1]) > readyBefore)).toBeDefined();
    } finally {
      watch.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("declines the permessage-deflate a WebSocket client offers: each message goes out once, uncompressed", async () => {
    const socket = new WebSocket(`${relay.url.replace(/^http/, "ws")}/api/v1/pods?watch=1`, { perMessageDeflate: true });
    try {
      const [upgrade] = (await once(socket, "upgrade")) as [{ headers: Record<string, string | undefined> }];
      expect(upgrade.headers["sec-websocket-extensions"]).toBeUndefined();
      const [data] = (await once(socket, "message")) as [Buffer];
      expect(JSON.parse(data.toString())).toMatchObject({ type: "ADDED" });
      expect(socket.extensions).toBe("");
    } finally {
      socket.terminate();
    }
  });

  it("ends a watch WebSocket at its timeoutSeconds with a close frame sent at once", async () => {
    const close = await firstCloseFrame(relay.port, "/api/v1/pods?watch=1&timeoutSeconds=1");
    expect([close.code, close.reason]).toEqual([1000, "timeoutSeconds reached"]);
    // The second it asked for, and then the frame, not a client's closing timeout later.
    expect(close.afterMs).toBeGreaterThanOrEqual(900);
    expect(close.afterMs).toBeLessThan(3000);
  });

  it("notices HTTP watches of a quiet collection whose clients left (Ctrl-C of curl, kubectl), and lets their subscriptions go", async () => {
    const stats = async () => ((await (await fetch(`${relay.url}/_relay/stats/api/v1/nodes`)).json()) as { subscribers: number }).subscribers;
    const table = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json";
    const watches = ["?watch=1", "?watch=1&allowWatchBookmarks=true", "?watch=1"].map((query, i) => {
      const socket = connect(relay.port, "127.0.0.1");
      const accept = i === 2 ? `Accept: ${table}\r\n` : "";
      socket.write(`GET /api/v1/nodes${query} HTTP/1.1\r\nHost: 127.0.0.1:${relay.port}\r\n${accept}\r\n`);
      return { socket, headers: once(socket, "data") };
    });
    try {
      for (const w of watches) expect(String((await w.headers)[0])).toMatch(/^HTTP\/1\.1 200/);
      await eventually(async () => (await stats()) === watches.length, "the watches to be subscribed");
    } finally {
      // The clients go, without a word: nodes do not change, so the hub writes them nothing.
      for (const w of watches) w.socket.destroy();
    }
    await eventually(async () => (await stats()) === 0, "the relay to notice the clients have gone", 30_000);
  });

  it("a close the relay starts reaches Node's WebSocket and ws at once: the connection ends with the closing handshake", async () => {
    const url = `${relay.url.replace(/^http/, "ws")}/api/v1/pods?watch=1&timeoutSeconds=1`;
    const builtin = new globalThis.WebSocket(url);
    const library = new WebSocket(url);
    const opened = performance.now();
    const closed = (what: string, close: Promise<number>) =>
      within(
        close.then((code) => ({ code, afterMs: performance.now() - opened })),
        `${what} to report the close`,
        10_000,
      );
    try {
      const [fromBuiltin, fromLibrary] = await Promise.all([
        closed("Node's WebSocket", new Promise((resolve) => builtin.addEventListener("close", (event) => resolve(event.code)))),
        closed("ws", new Promise((resolve) => library.on("close", resolve))),
      ]);
      // The second the watch asked for, not the client's own closing timeout (ws 30 s, Node's 70 s).
      for (const close of [fromBuiltin, fromLibrary]) {
        expect(close.code).toBe(1000);
        expect(close.afterMs).toBeLessThan(3000);
      }
    } finally {
      builtin.close();
      library.terminate();
    }
  });

  it("Ctrl-C stops everything it started", async () => {
    const simPort = Number(new URL(simulatorUrl(relay)).port);
    await relay.stop();
    expect(running(relay.pids.launcher)).toBe(false);
    expect(running(relay.pids.workerd)).toBe(false);
    expect(await portClosed(relay.port)).toBe(true);
    expect(await portClosed(simPort)).toBe(true);
  });
});
