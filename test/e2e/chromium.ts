/**
 * Headless Chromium for the browser tests (through playwright-core, with the machine's own
 * Chromium; whether it is there is `have("chromium", …)` of test/kit/tools.ts).
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM } from "../kit/tools.ts";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/**
 * Has `page` keep the subprotocol each WebSocket it opens agreed to, in order; `agreed()` reads
 * them. A script run before the page's own, so every socket the page opens is seen.
 */
export async function recordSocketProtocols(page: Page): Promise<{ agreed: () => Promise<string[]> }> {
  await page.addInitScript(() => {
    const protocols: string[] = [];
    Object.assign(window, { protocols });
    window.WebSocket = class extends WebSocket {
      constructor(url: string | URL, offered?: string | string[]) {
        super(url, offered);
        this.addEventListener("open", () => protocols.push(this.protocol));
      }
    };
  });
  return { agreed: () => page.evaluate(() => (window as unknown as { protocols: string[] }).protocols) };
}
