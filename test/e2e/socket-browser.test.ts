/**
 * The live page over one relay socket, in headless Chromium, against `npm start` relaying two
 * simulated clusters in AUTH_MODE=jwt: six watches on one WebSocket (the picked pods, the
 * namespace sidebar, the Events panel, and three `?watch=` collections, two of them on the
 * second cluster), one forbidden by the token (its 403 shown, the others live); the relay killed
 * and started again (every watch resumes, what it missed counted in the resume and shown once,
 * nothing relisted, the relay's numbers shown again); and the
 * token's expiry (every watch fails with its 401, the socket closes). Without Chromium this file
 * says so loudly and skips itself (on CI it fails).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "hono/jwt";
import type { Browser, Page, WebSocket as PageSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../scripts/build-client.ts";
import { have } from "../kit/tools.ts";
import { launchChromium, recordSocketProtocols } from "./chromium.ts";
import type { Rule } from "../../src/auth/rules.ts";
import { GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { freePort, startRelay, type RunningRelay } from "./harness.ts";

const chromiumHere = have("chromium", "the relay-socket browser test");

const ARTIFACTS = new URL("../../test-results/browser/", import.meta.url);
const SECRET = "a-test-secret-that-is-long-enough-for-hs256";
const NS = "e2e-socket";
/** What the page's token grants: pods, namespaces and events here, pods and nodes on east; not nodes here. */
const RULES: Rule[] = [
  { clusters: ["default"], apiGroups: [""], resources: ["pods", "namespaces", "events"], namespaces: ["*"] },
  { clusters: ["east"], apiGroups: [""], resources: ["pods", "nodes"], namespaces: ["*"] },
];
const EXTRA = ["/clusters/east/api/v1/pods", "/clusters/east/api/v1/nodes", "/api/v1/nodes"];
const WATCHES = ["selection", "namespaces", "events", "watch-1", "watch-2", "watch-3"];

const token = (ttlSeconds: number) => sign({ sub: "viewer", exp: Math.floor(Date.now() / 1000) + ttlSeconds, rules: RULES }, SECRET, "HS256");

describe.skipIf(!chromiumHere)("the live page over one relay socket", () => {
  let home: Simulator;
  let east: Simulator;
  let state: string;
  let env: Record<string, string>;
  let relay: RunningRelay | undefined;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await buildClient();
    home = await startSimulator({ seed: 3, initial: { namespaces: [NS, "team-a"], podsPerNamespace: 3, nodes: 2, deployments: 0 } });
    east = await startSimulator({ seed: 4, initial: { namespaces: ["east-a"], podsPerNamespace: 4, nodes: 3, deployments: 0 } });
    state = mkdtempSync(join(tmpdir(), "relay-socket-state-"));
    env = {
      UPSTREAM_URL: home.url,
      CLUSTERS: JSON.stringify({ east: { url: east.url } }),
      AUTH_MODE: "jwt",
      AUTH_JWT_SECRET: SECRET,
      PERSIST_DIR: state,
      PORT: String(await freePort()),
    };
    relay = await startRelay(env);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await home?.close();
    await east?.close();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  /** The page with a token, every WebSocket it opens, and how many binary messages they received (the gzip framing's). */
  async function open(ttlSeconds: number): Promise<{ page: Page; sockets: PageSocket[]; binary: () => number; protocols: () => Promise<string[]> }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, colorScheme: "dark" });
    const sockets: PageSocket[] = [];
    // The subprotocol each of its sockets agreed to.
    const protocols = await recordSocketProtocols(page);
    let binary = 0;
    page.on("websocket", (socket) => {
      sockets.push(socket);
      socket.on("framereceived", (frame) => void (typeof frame.payload === "string" || binary++));
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const query = new URLSearchParams({ namespace: NS });
    for (const path of EXTRA) query.append("watch", path);
    await page.goto(`${relay!.url}/?${query}#token=${await token(ttlSeconds)}`);
    return { page, sockets, binary: () => binary, protocols: protocols.agreed };
  }

  const state_ = (page: Page, watch: string) => page.getAttribute(`#watches li[data-watch="${watch}"] .state`, "data-state");
  const stateText = (page: Page, watch: string) => page.textContent(`#watches li[data-watch="${watch}"] .state`);
  async function until(page: Page, watch: string, states: string[], ms = 30_000): Promise<void> {
    await page
      .waitForFunction(([w, s]) => (s as string[]).includes(document.querySelector(`#watches li[data-watch="${w as string}"] .state`)?.getAttribute("data-state") ?? ""), [watch, states] as const, {
        timeout: ms,
      })
      .catch(async (e: Error) => {
        throw new Error(`watch ${watch} never reached ${states.join("/")}: it says ${await state_(page, watch)} "${await stateText(page, watch)}" (${e.message})`);
      });
  }
  const podRow = (name: string) => `#objects tr[data-key="${NS}/${name}"]`;
  const touch = (name: string, step: string) => home.patch("pods", NS, name, { metadata: { labels: { step } } }).metadata!.resourceVersion!;
  /** Log entries about pod `name` of the picked collection. */
  const podLog = (page: Page, name: string) =>
    page.$$eval("#log li", (items, key) => items.map((li) => `${li.dataset.kind} ${li.querySelector(".text")?.textContent}`).filter((t) => t.includes(` pod ${key} `)), `${NS}/${name}`);

  it("shows six watches across two clusters on one socket; the forbidden one fails alone with its 403", async () => {
    const { page, sockets, binary, protocols } = await open(3600);
    for (const watch of WATCHES.filter((w) => w !== "watch-3")) await until(page, watch, ["live"]);
    await until(page, "watch-3", ["failed"]);
    expect(await stateText(page, "watch-3")).toMatch(/403 Forbidden: nodes is forbidden: User "viewer" cannot (list|watch) resource "nodes"/);
    expect(sockets.map((s) => new URL(s.url()).pathname)).toEqual(["/_relay/socket"]);
    // The socket took the gzip framing: the initial states came compressed, in binary messages.
    expect(await protocols()).toEqual([GZIP_BATCH_PROTOCOL]);
    expect(binary()).toBeGreaterThan(0);

    // Both clusters live, over that one socket.
    const pod = home.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: NS }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
    await page.waitForSelector(podRow("web-1"));
    expect(await page.textContent(`${podRow("web-1")} td.rv`)).toBe(pod.metadata!.resourceVersion);
    const eastPods = () => page.textContent('#watches li[data-watch="watch-1"] .count');
    expect(await eastPods()).toBe("4 objects");
    east.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "far", namespace: "east-a" }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
    await page.waitForFunction(() => document.querySelector('#watches li[data-watch="watch-1"] .count')?.textContent === "5 objects");
    expect(await page.$$eval("#namespaces li", (items) => items.map((li) => li.textContent))).toEqual(expect.arrayContaining(["All namespaces", NS, "team-a"]));
    expect(sockets).toHaveLength(1);
    await page.close();
  });

  it("resumes every watch after the relay is killed and started again, each change shown once, nothing relisted", async () => {
    const { page, sockets } = await open(3600);
    for (const watch of WATCHES.filter((w) => w !== "watch-3")) await until(page, watch, ["live"]);
    const name = home.list("pods", NS)[0]!.metadata!.name!;
    const before = touch(name, "before");
    await page.waitForFunction(([row, rv]) => document.querySelector(`${row} td.rv`)?.textContent === rv, [podRow(name), before] as const);

    process.kill(relay!.pids.workerd, "SIGKILL");
    await relay!.stop();
    for (const watch of ["selection", "watch-1"]) await until(page, watch, ["reconnecting"]);
    const missed = [touch(name, "m1"), touch(name, "m2"), touch(name, "m3")];
    east.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "while-away", namespace: "east-a" }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
    relay = await startRelay(env);

    for (const watch of WATCHES.filter((w) => w !== "watch-3")) await until(page, watch, ["resumed"], 60_000);
    // A restored hub catches up with its upstream before it answers a resume, so what was missed
    // is counted in the resume: the pod's three changes as one net change (the client resumes
    // with compact=true), the pod created on east while the relay was down.
    expect(await stateText(page, "selection")).toMatch(/^live · resumed: 1 change, [\d.]+ K?B, \d+ ms$/);
    expect(await stateText(page, "watch-1")).toMatch(/^live · resumed: 1 change, /);
    expect(await page.textContent('#watches li[data-watch="watch-1"] .count')).toBe(`${east.list("pods").length} objects`);
    await page.waitForFunction(([row, rv]) => document.querySelector(`${row} td.rv`)?.textContent === rv, [podRow(name), missed.at(-1)!] as const);
    const log = await page.$$eval("#log li", (items) => items.map((li) => `${li.dataset.kind} ${li.querySelector(".text")?.textContent}`));
    expect(log.filter((entry) => entry.startsWith("relisted") || entry.includes("relisted"))).toEqual([]);
    // The pod's state before and its state now, each once, in resourceVersion order (the log is newest first).
    const changes = (await podLog(page, name)).reverse().map((entry) => /· rv (\d+)$/.exec(entry)![1]);
    expect(changes).toEqual([before, missed.at(-1)]);
    // The relay's numbers for the key, from the new relay (its hub may be new): no error.
    await page.waitForFunction(() => /^relay: \d+ subscribers? · /.test(document.getElementById("relay-stats")?.textContent ?? ""));
    // Still one socket at a time: the first one, closed by the kill, and its successor.
    expect(sockets.map((s) => new URL(s.url()).pathname).every((p) => p === "/_relay/socket")).toBe(true);
    expect(sockets.filter((s) => !s.isClosed())).toHaveLength(1);

    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(new URL("socket-page.png", ARTIFACTS), await page.screenshot());
    await page.close();
  });

  it("fails every watch with its 401 and closes the socket when the token expires", async () => {
    const { page, sockets } = await open(8);
    for (const watch of WATCHES.filter((w) => w !== "watch-3")) await until(page, watch, ["live", "resumed"]);
    const closed = new Promise<void>((resolve) => sockets[0]!.on("close", () => resolve()));
    for (const watch of WATCHES) await until(page, watch, ["failed"], 20_000);
    expect(await stateText(page, "selection")).toMatch(/401 Unauthorized: .*expired/);
    expect(await page.getAttribute("#connection", "data-state")).toBe("failed");
    await closed;
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
