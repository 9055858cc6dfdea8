/**
 * Headless Chromium for the browser tests (through playwright-core, with the machine's own
 * Chromium; whether it is there is `have("chromium", …)` of test/kit/tools.ts).
 */
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM } from "../kit/tools.ts";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
