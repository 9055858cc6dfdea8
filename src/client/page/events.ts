/**
 * @module
 * The cluster's Events, newest first, as they happen: a repeated event moves to the top with
 * its new count.
 */
import type { Event } from "kubernetes-types/core/v1.js";
import type { KubeResource } from "../index.ts";
import { objectKey } from "../index.ts";

const MAX_EVENTS = 50;

export class EventsPanel {
  readonly #list: HTMLOListElement;

  constructor(list: HTMLOListElement) {
    this.#list = list;
  }

  show(object: KubeResource): void {
    const event = object as Event;
    const key = objectKey(object);
    [...this.#list.children].find((li) => (li as HTMLElement).dataset.key === key)?.remove();
    const item = document.createElement("li");
    item.dataset.key = key;
    item.dataset.type = event.type ?? "Normal";
    const about = event.involvedObject ? `${event.involvedObject.kind}/${event.involvedObject.name}` : "";
    item.textContent = `${event.reason ?? ""} ${about}${event.count && event.count > 1 ? ` ×${event.count}` : ""}: ${event.message ?? ""}`;
    this.#list.prepend(item);
    while (this.#list.childElementCount > MAX_EVENTS) this.#list.lastElementChild?.remove();
  }

  /** Empty, for another cluster's. */
  clear(): void {
    this.#list.replaceChildren();
  }

  /** Why the panel stays empty. */
  note(text: string): void {
    const item = document.createElement("li");
    item.className = "note";
    item.textContent = text;
    this.#list.replaceChildren(item);
  }

  remove(object: KubeResource): void {
    const key = objectKey(object);
    [...this.#list.children].find((li) => (li as HTMLElement).dataset.key === key)?.remove();
  }
}
