/**
 * @module
 * The page's watches, all on one relay socket: a row for each (what it watches, how many objects,
 * its state — live, resumed, relisted, reconnecting or failed, with why).
 */
import { ConnectionIndicator } from "./connection.ts";
import { plural } from "./format.ts";

/** One watch's row: its state, and its object count to refresh. */
export interface WatchRow {
  indicator: ConnectionIndicator;
  count(objects: number): void;
  remove(): void;
}

export class WatchList {
  readonly #list: HTMLUListElement;

  constructor(list: HTMLUListElement) {
    this.#list = list;
  }

  /** A row for a watch; `first` puts it at the top (the picked collection's). */
  add(name: string, label: string, first = false): WatchRow {
    const row = document.createElement("li");
    row.dataset.watch = name;
    const title = document.createElement("span");
    title.className = "what";
    title.textContent = label;
    const count = document.createElement("span");
    count.className = "count";
    const state = document.createElement("output");
    state.className = "state";
    row.append(title, count, state);
    if (first) this.#list.prepend(row);
    else this.#list.append(row);
    const indicator = new ConnectionIndicator(state);
    indicator.set("connecting", "connecting…");
    return {
      indicator,
      count: (objects) => (count.textContent = plural(objects, "object")),
      remove: () => row.remove(),
    };
  }
}
