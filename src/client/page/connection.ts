/**
 * @module
 * A watch's indicator: what it is doing, in a word and a sentence, from the client's lifecycle
 * updates. A failure's whole text (the relay's Status) is said in one place, its watch's row;
 * the header's indicator, `brief`, names only its code and points there.
 */
import type { WatchError, WatchStatus } from "../index.ts";
import { after, failure, failureCode, resumeCost } from "./format.ts";

/** `data-state` of the indicator; the CSS colours it. */
export type ConnectionState = "connecting" | "live" | "resumed" | "relisted" | "reconnecting" | "failed";

export class ConnectionIndicator {
  readonly #element: HTMLElement;
  readonly #brief: boolean;
  /** The last list was a relist: the next connection is "relisted", not just "live". */
  #relisted = false;

  constructor(element: HTMLElement, { brief = false } = {}) {
    this.#element = element;
    this.#brief = brief;
  }

  set(state: ConnectionState, text: string): void {
    this.#element.dataset.state = state;
    this.#element.textContent = text;
  }

  /** The watch ended on a failure retrying cannot mend. */
  failed(error: WatchError): void {
    this.set("failed", this.#brief ? `failed (${failureCode(error)}; see Watches)` : `failed: ${failure(error)}`);
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
        return this.set(
          "reconnecting",
          this.#brief ? `retrying ${after(status.retryInMs)} (${failureCode(status.error)}; see Watches)` : `retrying ${after(status.retryInMs)}: ${failure(status.error)}`,
        );
    }
  }
}
