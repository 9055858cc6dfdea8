/**
 * Headless Chromium for the browser tests (through playwright-core, with the machine's own
 * Chromium). Without one, `haveChromium` is false and a test file says so loudly and skips.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Whether Chromium is there; when not, `what` is announced as skipped. */
export function haveChromium(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  const bar = "!".repeat(88);
  process.stderr.write(`\n${bar}\n!! SKIPPING ${what}: no Chromium at ${CHROMIUM}.\n!! Install it (apt-get install -y chromium) or point CHROMIUM_PATH at one.\n${bar}\n\n`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
