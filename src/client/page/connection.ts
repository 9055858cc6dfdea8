/**
 * @module
 * The connection indicator: what the watch is doing, in a word and a sentence, from the
 * client's lifecycle updates.
 */
import type { WatchStatus } from "../index.ts";
import { after, resumeCost } from "./format.ts";

/** `data-state` of the indicator; the CSS colours it. */
export type ConnectionState = "connecting" | "live" | "resumed" | "relisted" | "reconnecting" | "failed";

export class ConnectionIndicator {
  readonly #element: HTMLElement;
  /** The last list was a relist: the next connection is "relisted", not just "live". */
  #relisted = false;

  constructor(element: HTMLElement) {
    this.#element = element;
  }

  set(state: ConnectionState, text: string): void {
    this.#element.dataset.state = state;
    this.#element.textContent = text;
  }

  show(status: WatchStatus<unknown>): void {
    switch (status.type) {
      case "listed":
        this.#relisted = false;
        return this.set("connecting", "listed; connecting…");
      case "relisted":
        this.#relisted = true;
        return this.set("reconnecting", "relisted after 410; connecting…");
      case "connected":
        if (status.resuming) return this.set("reconnecting", `resuming from resourceVersion ${status.resourceVersion}…`);
        return this.#relisted ? this.set("relisted", "live · relisted after 410") : this.set("live", "live");
      case "resumed":
        return this.set("resumed", `live · resumed: ${resumeCost(status)}`);
      case "closed":
        return this.set("reconnecting", `reconnecting ${after(status.retryInMs)} (closed ${status.code}${status.reason ? `: ${status.reason}` : ""})`);
      case "error":
        return this.set("reconnecting", `retrying ${after(status.retryInMs)}: ${status.error.message}`);
    }
  }
}
