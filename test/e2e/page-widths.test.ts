/**
 * The live page at common widths, in headless Chromium, against `npm start`: a phone's (390 px),
 * a small laptop's (1024), a laptop's (1400) and a desktop's (1920). At each, every row of the
 * pods table is one line of one height (the table is scrolled as if every row were there) and
 * every cell shows its text whole: a name in full (names that share a prefix never look alike),
 * `Running` on one line. At 1400 and 1920 px the table fits its panel (the resource version shown
 * where there is room for it); at 390 it scrolls sideways, the names in view. No pod log panel
 * shows until a pod is followed. A row leaving does not move the columns; a long namespace wraps
 * in the sidebar. Screenshots go to the system's temporary directory
 * (`kube-watch-relay-page/width-<px>.png`, `long-namespace.png`); with UPDATE_SCREENSHOT=1 the
 * widths' become the README's docs/page-<px>.png.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../scripts/build-client.ts";
import { have } from "../kit/tools.ts";
import { launchChromium } from "./chromium.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { simulatorUrl } from "./kube.ts";

const chromiumHere = have("chromium", "the page's layout at common widths");

const SHOTS = join(tmpdir(), "kube-watch-relay-page");
const DOCS = new URL("../../docs/", import.meta.url);

/** Common screens, with their heights. */
const SCREENS = [
  { width: 390, height: 844 },
  { width: 1024, height: 768 },
  { width: 1400, height: 900 },
  { width: 1920, height: 1080 },
];

/** What is wrong with the table's rows as drawn: a cell wrapped or cut, a name not itself, rows of different heights. */
function rowFaults(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const rows = [...document.querySelectorAll<HTMLTableRowElement>("#objects tbody tr[data-key]:not([data-deleted])")];
    if (rows.length === 0) found.push("no rows");
    const heights = new Set(rows.map((tr) => tr.offsetHeight));
    if (heights.size > 1) found.push(`rows of ${heights.size} heights: ${[...heights].join(", ")} px`);
    for (const tr of rows) {
      for (const td of tr.cells) {
        if (getComputedStyle(td).display === "none" || !td.textContent) continue;
        const what = `${tr.dataset.key} ${td.className} "${td.textContent}"`;
        // One line box a cell: its text's fragments all on one line.
        const range = document.createRange();
        range.selectNodeContents(td);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) found.push(`${what}: on ${lines.size} lines`);
        if (td.scrollWidth > td.clientWidth) found.push(`${what}: ${td.scrollWidth} px of text in ${td.clientWidth}`);
      }
      const name = tr.querySelector<HTMLElement>("td.name");
      const expected = tr.dataset.key?.split("/").at(-1);
      if (name?.textContent !== expected) found.push(`${tr.dataset.key}: its name reads "${name?.textContent}"`);
    }
    return found;
  });
}

/** The table's panel: how wide its content is, and how wide it shows. */
const panel = (page: Page) =>
  page.$eval(".scroll", (scroll) => ({
    content: scroll.scrollWidth,
    shown: scroll.clientWidth,
    columns: [...scroll.querySelectorAll<HTMLElement>("#objects thead th")].filter((th) => getComputedStyle(th).display !== "none").map((th) => th.className),
    nameEnds: Math.max(...[...scroll.querySelectorAll<HTMLElement>("#objects td.name")].map((td) => td.getBoundingClientRect().right)),
  }));

/** Where each column's header is. */
const headers = (page: Page) =>
  page.$$eval("#objects thead th", (ths) =>
    ths.map((th) => {
      const box = th.getBoundingClientRect();
      return `${th.className} ${box.left}..${box.right}`;
    }),
  );

/** Two frames: what changed is laid out, and the layout's observers have had their turn. */
const laidOut = (page: Page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

describe.skipIf(!chromiumHere)("the live page at common widths", () => {
  let relay: RunningRelay;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await buildClient();
    relay = await startRelay({});
    browser = await launchChromium();
    mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
  });

  async function visit(path: string, screen: { width: number; height: number }): Promise<Page> {
    // Reduced motion: a deleted row goes at once rather than fading out.
    const page = await browser.newPage({ viewport: screen, colorScheme: "dark", reducedMotion: "reduce" });
    page.on("pageerror", (error) => pageErrors.push(`${path}: ${error.message}`));
    await page.goto(`${relay.url}${path}`);
    await page.waitForSelector('#connection[data-state="live"]');
    await page.waitForSelector("#objects tbody tr[data-key]");
    return page;
  }

  for (const screen of SCREENS) {
    it(`at ${screen.width} px: every row one line, every cell whole, the names in full; no panel that is not in use`, async () => {
      const page = await visit("/", screen);
      // As a reader finds it: every watch on the socket live, the relay's numbers in.
      await page.waitForFunction(() => document.querySelectorAll('#watches .state[data-state="live"]').length === 3 && /\(watching\)/.test(document.getElementById("relay-stats")?.textContent ?? ""));
      expect(await rowFaults(page)).toEqual([]);
      // No pod followed, no pod log panel.
      expect(await page.isVisible("#pod-log")).toBe(false);
      const { content, shown, columns, nameEnds } = await panel(page);
      if (screen.width >= 1400) {
        expect(content).toBeLessThanOrEqual(shown);
        expect(columns.includes("rv")).toBe(screen.width >= 1920);
      } else {
        // What does not fit scrolls sideways; the names are in view as the table opens.
        expect(nameEnds).toBeLessThanOrEqual(screen.width);
      }
      const shot = await page.screenshot();
      writeFileSync(join(SHOTS, `width-${screen.width}.png`), shot);
      if (process.env.UPDATE_SCREENSHOT === "1") writeFileSync(new URL(`page-${screen.width}.png`, DOCS), shot);
      await page.close();
    });
  }

  it("a row leaving does not move the columns: each is as wide as its widest cell in the collection so far; a long namespace wraps in the sidebar", async () => {
    const sim = simulatorUrl(relay);
    const wide = "page-widths-a-namespace-of-a-long-name";
    const post = async (path: string, body: object) => {
      const response = await fetch(`${sim}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(response.status).toBe(201);
    };
    await post("/api/v1/namespaces", { metadata: { name: wide } });
    for (const namespace of [wide, "default"]) await post(`/api/v1/namespaces/${namespace}/pods`, { metadata: { name: "widths-probe" }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
    const page = await visit("/?filter=widths-probe", SCREENS[2]!);
    await page.waitForFunction(() => document.querySelectorAll("#objects tbody tr[data-key]").length === 2);
    // The sidebar shows the long namespace whole, wrapped.
    const inSidebar = page.locator(`#namespaces li[data-namespace="${wide}"] button`);
    expect(await inSidebar.evaluate((button) => ({ text: button.textContent, cut: button.scrollWidth > button.clientWidth }))).toEqual({ text: wide, cut: false });
    await laidOut(page);
    const before = await headers(page);
    const response = await fetch(`${sim}/api/v1/namespaces/${wide}/pods/widths-probe`, { method: "DELETE" });
    expect(response.status).toBe(200);
    await page.waitForFunction(() => document.querySelectorAll("#objects tbody tr[data-key]").length === 1);
    await laidOut(page);
    expect(await headers(page)).toEqual(before);
    expect(await rowFaults(page)).toEqual([]);
    writeFileSync(join(SHOTS, "long-namespace.png"), await page.screenshot());
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
