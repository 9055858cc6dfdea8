/**
 * The live cluster page in headless Chromium, against `npm start`: it opens on pods in all
 * namespaces with no setup, follows the simulated cluster as the test changes it through the
 * simulator's API, switches resource and namespace in place, and reopens its table's view
 * without a reload when the relay ends it (`timeoutSeconds`). Screenshots are kept in test-results/ (the
 * README's, docs/screenshot.png, is page.test.ts's). Without Chromium this file says so loudly and
 * skips itself (on CI it fails).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../scripts/build-client.ts";
import { have } from "../kit/tools.ts";
import { launchChromium } from "./chromium.ts";
import { startRelay, type RunningRelay } from "./harness.ts";

const chromiumHere = have("chromium", "the browser test");

const ARTIFACTS = new URL("../../test-results/browser/", import.meta.url);
/** The namespace this test owns: churn only touches the seeded ones. */
const NS = "e2e-browser";

describe.skipIf(!chromiumHere)("the live cluster page", () => {
  let relay: RunningRelay;
  let browser: Browser;
  let simUrl: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await buildClient();
    relay = await startRelay({ SIM_CHURN: "5" });
    simUrl = /simulated cluster at (http:\/\/\S+)/.exec(relay.output())![1]!;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: "dark" });
    page.on("pageerror", (error) => pageErrors.push(`${path}: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(`${path}: ${message.text()}`);
    });
    await page.goto(relay.url + path);
    await page.waitForSelector('#connection[data-state="live"]');
    // Set once; still there later means the page was never reloaded.
    await page.evaluate(() => ((window as { loadedOnce?: boolean }).loadedOnce = true));
    return page;
  }

  const loadedOnce = (page: Page) => page.evaluate(() => (window as { loadedOnce?: boolean }).loadedOnce === true);

  /** A write to the simulated cluster, through its Kubernetes API. */
  async function kube<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(simUrl + path, {
      method,
      headers: { "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
  type Obj = { metadata: { resourceVersion: string } };
  // Scheduled by nobody (a scheduler the simulated cluster does not run), so the test alone moves them.
  const createPod = (name: string) =>
    kube<Obj>("POST", `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { schedulerName: "by-hand", containers: [{ name: "app", image: "nginx:1.27" }] },
    });
  const podPath = (name: string) => `/api/v1/namespaces/${NS}/pods/${name}`;
  const row = (name: string) => `#objects tr[data-key="${NS}/${name}"]`;
  const cellText = (page: Page, name: string, cell: string) => page.textContent(`${row(name)} td.${cell}`);

  it("opens on pods in all namespaces with no setup, live, with the relay's numbers for the key", async () => {
    const page = await open("/");
    expect(await page.inputValue("#resource")).toBe("pods");
    expect(await page.inputValue("#namespace")).toBe("");
    await page.waitForFunction(() => document.querySelectorAll("#objects tbody tr[data-key]").length >= 16);
    const namespaces = await page.$$eval("#objects tbody td.namespace", (cells) => [...new Set(cells.map((c) => c.textContent))]);
    expect(namespaces).toEqual(expect.arrayContaining(["default", "team-a", "team-b"]));
    await page.waitForFunction(() => /^relay: 1 subscriber · 1 upstream watch \(watching\)/.test(document.getElementById("relay-stats")?.textContent ?? ""));
    await page.close();
  });

  it("follows the cluster: a new pod appears, a changed row shows its new state, a deleted row fades out", async () => {
    const page = await open("/");
    await createPod("web-1");
    const web2 = await createPod("web-2");
    await page.waitForSelector(row("web-2"));
    expect(await cellText(page, "web-2", "rv")).toBe(web2.metadata.resourceVersion);
    expect(await cellText(page, "web-1", "status")).toBe("Pending");
    expect(await cellText(page, "web-1", "ready")).toBe("0/1");

    const running = await kube<Obj>("PATCH", podPath("web-1"), {
      status: { phase: "Running", containerStatuses: [{ name: "app", image: "nginx:1.27", imageID: "", ready: true, restartCount: 0, state: { running: {} } }] },
    });
    await page.waitForFunction(([selector, rv]) => document.querySelector(`${selector} td.rv`)?.textContent === rv, [row("web-1"), running.metadata.resourceVersion] as const);
    expect(await cellText(page, "web-1", "status")).toBe("Running");
    expect(await cellText(page, "web-1", "ready")).toBe("1/1");
    expect(await page.getAttribute(row("web-1"), "data-change")).toBe("modified");
    expect(await page.getAttribute(row("web-1"), "data-flash")).not.toBeNull();

    await kube("DELETE", podPath("web-2"));
    await page.waitForSelector(`${row("web-2")}[data-deleted]`);
    await page.waitForSelector(row("web-2"), { state: "detached" });
    const log = await page.$$eval("#log li", (items) => items.map((li) => `${li.dataset.kind} ${li.querySelector(".text")?.textContent}`));
    expect(log).toContainEqual(expect.stringMatching(new RegExp(`^DELETED pod ${NS}/web-2 `)));
    expect(await loadedOnce(page)).toBe(true);
    await page.close();
  });

  it("switches resource and namespace in place", async () => {
    const page = await open("/");
    await page.selectOption("#resource", "deployments");
    // A Deployment's columns: Ready as desired/ready, Up-to-date, Available.
    await page.waitForFunction(() => /^\d+\/\d+$/.test(document.querySelector("#objects tbody tr[data-key] td.ready")?.textContent ?? "") && document.querySelector("#objects thead th.up-to-date"));
    expect(page.url()).toContain("resource=deployments");
    await page.waitForSelector('#namespace option[value="team-a"]', { state: "attached" });
    await page.selectOption("#namespace", "team-a");
    await page.waitForFunction(() => {
      const namespaces = [...document.querySelectorAll("#objects tbody tr:not([data-deleted]) td.namespace")].map((c) => c.textContent);
      return namespaces.length > 0 && namespaces.every((n) => n === "team-a");
    });
    expect(page.url()).toContain("namespace=team-a");
    await page.selectOption("#resource", "nodes");
    await page.waitForFunction(() => document.querySelector("#objects tbody td.status")?.textContent === "Ready");
    expect(await page.isDisabled("#namespace")).toBe(true);
    expect(await loadedOnce(page)).toBe(true);
    await page.close();
  });

  it("has an operator panel listing the relay's live hubs, polled while it is open", async () => {
    const page = await open("/");
    await page.click("#operator summary");
    // The page's own watches: pods in all namespaces, and the namespaces for the picker.
    const pods = '#hubs tbody tr[data-key="default:/api/v1/pods"]';
    await page.waitForSelector(pods);
    await page.waitForSelector('#hubs tbody tr[data-key="default:/api/v1/namespaces"]');
    expect(Number(await page.textContent(`${pods} td.subscribers`))).toBeGreaterThanOrEqual(1);
    expect(await page.textContent("#hubs-note")).toMatch(/^\d+ live hubs?, as of their last heartbeat$/);
    await page.waitForFunction((selector) => document.querySelector(`${selector} td.upstream`)?.textContent === "watching", pods);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(new URL("operator-panel.png", ARTIFACTS), await page.screenshot());
    await page.close();
  });

  it("survives the relay ending its view: it reopens it where it was, without a reload, and catches up", async () => {
    // timeoutSeconds=2: the relay ends the table's view after 2 s, as a hub does when it stops.
    const page = await open("/?timeoutSeconds=2");
    await page.waitForSelector('#connection[data-state="resumed"]', { timeout: 20_000 }).catch((e: Error) => {
      throw new Error(`the indicator never said "resumed" (the client reports it once the reopened view's window has come): ${e.message}`);
    });
    const log = await page.$$eval("#log li", (items) => items.map((li) => `${li.dataset.kind} ${li.querySelector(".text")?.textContent}`));
    expect(log).toContainEqual(expect.stringMatching(/^closed socket closed \(1000: timeoutSeconds reached\); reopening now$/));
    expect(log).toContainEqual(expect.stringMatching(/^connected reconnected, reopening the view \(last at resourceVersion \d+\)$/));
    expect(log).toContainEqual(expect.stringMatching(/^resumed caught up: \d+ changes?, [\d.]+ K?B, \d+ ms \(\d+ → \d+\)$/));
    expect(log.filter((entry) => entry.startsWith("relisted"))).toEqual([]);
    expect(await page.textContent("#connection")).toMatch(/^live · resumed: \d+ changes?, [\d.]+ K?B, \d+ ms$/);

    // Still following the cluster after the resume.
    const touched = await kube<Obj>("PATCH", podPath("web-1"), { metadata: { labels: { resumed: "yes" } } });
    await page.waitForFunction(([selector, rv]) => document.querySelector(`${selector} td.rv`)?.textContent === rv, [row("web-1"), touched.metadata.resourceVersion] as const);
    expect(await loadedOnce(page)).toBe(true);

    await page.waitForSelector('#connection[data-state="resumed"]');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(new URL("page-dark.png", ARTIFACTS), await page.screenshot());
    await page.emulateMedia({ colorScheme: "light" });
    writeFileSync(new URL("page-light.png", ARTIFACTS), await page.screenshot());
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
