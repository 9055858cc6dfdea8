/**
 * The live page's cluster picker, in headless Chromium, against `SIM_CLUSTERS=east,west npm
 * start` (three simulated clusters, no churn, so each one's pods are what its simulator lists):
 * it offers each cluster by name and "All clusters" (the merged key `/clusters/*`), whose table
 * has rows of every cluster and a Cluster column that sorts like any other; a picked cluster
 * shows only its own objects, keeping the namespace; a pod's log is its own cluster's; the URL
 * keeps the pick across a reload.
 * (With one cluster there is no picker: page.test.ts.)
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../scripts/build-client.ts";
import { have } from "../kit/tools.ts";
import { launchChromium } from "./chromium.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { simGet } from "./kube.ts";

const chromiumHere = have("chromium", "the page's cluster picker");
const NS = "team-a";

/** A simulated cluster's URL, as `npm start` printed it. */
function simOf(relay: RunningRelay, cluster: string): string {
  const url = new RegExp(`${cluster} at (http://127\\.0\\.0\\.1:\\d+)`).exec(relay.output())?.[1];
  if (!url) throw new Error(`npm start did not print ${cluster}'s URL:\n${relay.output()}`);
  return url;
}

async function createPod(sim: string, name: string): Promise<void> {
  const response = await fetch(`${sim}/api/v1/namespaces/${NS}/pods`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } }),
  });
  expect(response.status, await response.text()).toBe(201);
}

/** The rows on screen: each one's key and, in every cluster's view, its Cluster cell. */
function rows(page: Page): Promise<Array<{ key: string; cluster: string | undefined }>> {
  return page.$$eval("#objects tbody tr[data-key]:not([data-deleted])", (trs) =>
    trs.map((tr) => ({ key: (tr as HTMLElement).dataset.key ?? "", cluster: tr.querySelector("td.cluster")?.textContent ?? undefined })),
  );
}

describe.skipIf(!chromiumHere)("the live page's cluster picker", () => {
  let relay: RunningRelay;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await buildClient();
    relay = await startRelay({ SIM_CLUSTERS: "east,west", SIM_CHURN: "0" });
    await createPod(simOf(relay, "east"), "only-in-east");
    await createPod(simOf(relay, "west"), "only-in-west");
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
  });

  it("offers every cluster and All clusters; one cluster shows only its objects, all of them show each one's with a Cluster column to sort by; the URL keeps the pick", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${relay.url}/?namespace=${NS}`);
    const picker = page.getByRole("combobox", { name: "Cluster", exact: true });
    await picker.waitFor();
    expect(await page.$$eval("#cluster option", (options) => (options as HTMLOptionElement[]).map((o) => [o.value, o.text]))).toEqual([
      ["default", "default"],
      ["east", "east"],
      ["west", "west"],
      ["*", "All clusters"],
    ]);
    expect(await picker.inputValue()).toBe("default");
    await page.waitForSelector('#connection[data-state="live"]');
    expect(await page.$$("#objects th.cluster")).toHaveLength(0);

    // The keyboard picks the next cluster, east: its pods alone, in the namespace shown before.
    await picker.focus();
    await page.keyboard.press("ArrowDown");
    await page.waitForSelector(`#objects tbody tr[data-key="${NS}/only-in-east"]`);
    await page.waitForSelector('#connection[data-state="live"]');
    const east = (await simGet(simOf(relay, "east"), `/api/v1/namespaces/${NS}/pods`)).items.map((pod) => `${NS}/${pod.metadata?.name}`).sort();
    await page.waitForFunction((n) => document.querySelectorAll("#objects tbody tr[data-key]:not([data-deleted])").length === n, east.length);
    expect((await rows(page)).map((row) => row.key).sort()).toEqual(east);
    expect(await page.$$("#objects th.cluster")).toHaveLength(0);
    expect(new URL(page.url()).searchParams.get("cluster")).toBe("east");
    expect(await page.inputValue("#namespace")).toBe(NS);
    expect(await page.textContent('#watches li[data-watch="selection"] .what')).toBe(`pods in ${NS} of east`);
    expect(await page.textContent('#watches li[data-watch="events"] .what')).toBe("/clusters/east/api/v1/events");

    // All clusters: each one's pods, named <cluster>:<name>, with the Cluster column.
    await picker.selectOption("*");
    await page.waitForSelector(`#objects tbody tr[data-key="${NS}/west:only-in-west"]`);
    await page.waitForSelector(`#objects tbody tr[data-key="${NS}/east:only-in-east"]`);
    const all = await rows(page);
    expect(new Set(all.map((row) => row.cluster))).toEqual(new Set(["default", "east", "west"]));
    for (const row of all) expect(row.key).toContain(`/${row.cluster}:`);
    expect(new URL(page.url()).searchParams.get("cluster")).toBe("*");

    // Its header sorts by it, on the relay, descending the second time.
    await page.click("#objects th.cluster button");
    await page.waitForSelector('#objects[data-sort="Cluster"]');
    await page.click("#objects th.cluster button");
    await page.waitForSelector('#objects[data-sort="-Cluster"]');
    const sorted = (await rows(page)).map((row) => row.cluster ?? "");
    expect(sorted).toEqual([...sorted].sort().reverse());
    expect(sorted[0]).toBe("west");
    expect(await page.getAttribute("#objects th.cluster", "aria-sort")).toBe("descending");

    // A reload (or the link shared) keeps all of it.
    await page.reload();
    await page.waitForSelector(`#objects tbody tr[data-key="${NS}/west:only-in-west"]`);
    expect(await page.inputValue("#cluster")).toBe("*");
    expect(await page.getAttribute("#objects", "data-sort")).toBe("-Cluster");
    expect(await page.inputValue("#namespace")).toBe(NS);

    // A pod's row: its log, from its own cluster.
    await page.click(`#objects tbody tr[data-key="${NS}/east:only-in-east"]`);
    await page.waitForFunction(() => (document.querySelector("#pod-log pre")?.textContent ?? "").length > 0);
    expect(await page.textContent("#pod-log .pod")).toBe(`east · ${NS}/only-in-east · app`);
    expect(await page.getAttribute("#pod-log .state", "data-state")).toBe("live");

    // One cluster again: the order by a column it has not is dropped, the rest kept.
    await page.getByRole("combobox", { name: "Cluster", exact: true }).selectOption("west");
    await page.waitForSelector(`#objects tbody tr[data-key="${NS}/only-in-west"]`);
    expect((await rows(page)).some((row) => row.key.endsWith("/only-in-east"))).toBe(false);
    expect(new URL(page.url()).searchParams.get("sort")).toBeNull();
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
