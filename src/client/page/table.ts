/**
 * @module
 * The live table: one row per object, in namespace/name order, updated in place. A changed row
 * flashes; a deleted row fades out before it is removed, so a change is seen, not just applied.
 */
import { metaNamespaceKey } from "../../k8s/key.ts";
import { objectKey, type KubeResource } from "../index.ts";
import { age } from "./format.ts";
import type { Resource } from "./resources.ts";

/** How long a deleted row stays, fading (matches the CSS animation). */
const FADE_MS = 1200;

/** Sort key: namespace, then name (`\0` sorts before every name character). */
const sortKey = (o: KubeResource): string => `${o.metadata?.namespace ?? ""}\u0000${o.metadata?.name ?? ""}`;

export class ObjectTable {
  readonly #body: HTMLTableSectionElement;
  readonly #rows = new Map<string, HTMLTableRowElement>();
  /** Sort keys of the live rows, ascending. */
  #order: string[] = [];
  #resource: Resource;

  constructor(body: HTMLTableSectionElement, resource: Resource) {
    this.#body = body;
    this.#resource = resource;
  }

  get size(): number {
    return this.#rows.size;
  }

  /** Empty the table for another resource. */
  reset(resource: Resource): void {
    this.#resource = resource;
    this.#rows.clear();
    this.#order = [];
    this.#body.replaceChildren();
  }

  /** Add or update a row; `change` marks it as just added or modified, and it flashes. */
  upsert(object: KubeResource, change?: "added" | "modified"): void {
    const key = objectKey(object);
    let row = this.#rows.get(key);
    if (!row) {
      row = this.#newRow(key);
      this.#rows.set(key, row);
      this.#insert(row, sortKey(object));
    }
    this.#fill(row, object);
    if (change) {
      row.dataset.change = change;
      // Alternating between two identical animations restarts it without a forced layout.
      row.dataset.flash = row.dataset.flash === "a" ? "b" : "a";
    }
  }

  remove(object: KubeResource): void {
    const key = objectKey(object);
    const row = this.#rows.get(key);
    if (!row) return;
    this.#rows.delete(key);
    this.#order.splice(this.#indexOf(sortKey(object)), 1);
    this.#fill(row, object);
    row.dataset.deleted = "";
    delete row.dataset.flash;
    // A timer, not animationend: background tabs pause animations, and the row must still go.
    setTimeout(() => row.remove(), matchMedia("(prefers-reduced-motion: reduce)").matches ? 0 : FADE_MS);
  }

  /** Ages move on without events. */
  refreshAges(now = Date.now()): void {
    for (const row of this.#rows.values()) {
      const cell = row.cells[3] as HTMLTableCellElement;
      const text = age(cell.dataset.created, now);
      if (cell.textContent !== text) cell.textContent = text;
    }
  }

  #newRow(key: string): HTMLTableRowElement {
    const row = document.createElement("tr");
    row.dataset.key = key;
    for (const name of ["name", "namespace", "status", "age", "rv"]) row.insertCell().className = name;
    return row;
  }

  #fill(row: HTMLTableRowElement, object: KubeResource): void {
    const [name, namespace, status, ageCell, rv] = Array.from(row.cells);
    const meta = object.metadata ?? {};
    const cell = this.#resource.status(object);
    name!.textContent = meta.name ?? "";
    name!.title = meta.uid ?? "";
    namespace!.textContent = meta.namespace ?? "";
    status!.textContent = cell.text;
    status!.title = cell.text;
    status!.dataset.tone = cell.tone;
    ageCell!.dataset.created = meta.creationTimestamp ?? "";
    ageCell!.textContent = age(meta.creationTimestamp);
    rv!.textContent = meta.resourceVersion ?? "";
  }

  #insert(row: HTMLTableRowElement, key: string): void {
    const index = this.#indexOf(key);
    const next = this.#order[index];
    this.#order.splice(index, 0, key);
    this.#body.insertBefore(row, next === undefined ? null : (this.#rowBySortKey(next) ?? null));
  }

  /** Where `key` is, or would go, in the order (binary search). */
  #indexOf(key: string): number {
    let lo = 0;
    let hi = this.#order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#order[mid] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #rowBySortKey(key: string): HTMLTableRowElement | undefined {
    const [namespace, name] = key.split("\u0000");
    return this.#rows.get(metaNamespaceKey(namespace, name ?? ""));
  }
}
