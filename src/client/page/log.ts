/**
 * @module
 * The event log pane: the watch's lifecycle and every change, newest first, bounded.
 */
import { clock } from "./format.ts";

const MAX_ENTRIES = 300;

/** What an entry is about; styles its badge. */
export type EntryKind = "ADDED" | "MODIFIED" | "DELETED" | "listed" | "relisted" | "connected" | "resumed" | "closed" | "error" | "note";

export class EventLog {
  readonly #list: HTMLOListElement;

  constructor(list: HTMLOListElement) {
    this.#list = list;
  }

  add(kind: EntryKind, text: string): void {
    const entry = document.createElement("li");
    entry.dataset.kind = kind;
    const time = document.createElement("time");
    time.textContent = clock();
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = kind;
    const body = document.createElement("span");
    body.className = "text";
    body.textContent = text;
    entry.append(time, badge, body);
    this.#list.prepend(entry);
    while (this.#list.childElementCount > MAX_ENTRIES) this.#list.lastElementChild?.remove();
  }
}
