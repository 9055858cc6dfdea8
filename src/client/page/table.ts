/**
 * @module
 * The live table: a window of a live view (the relay's rows, in its order, under its filter),
 * scrolled as if every row were there. Rows above and below the window are empty space of
 * their height, so the scrollbar reads the whole collection while the page holds only the
 * window; scrolling asks for the window there (at most one request per `SCROLL_MS` while the
 * scroll goes on, and one when it stops). Its columns are the resource's Table's, as `kubectl
 * get` prints them, and the namespace; a column's header sorts by it, again for descending, a
 * third time not at all. A changed row flashes; a deleted row fades out before it goes; ages
 * tick on from each row's creation time. A row is one line (the stylesheet's): each column as
 * wide as its widest cell so far in the collection, so rows that change or scroll in do not move
 * the columns under the reader.
 */
import { VIEW_LIMIT_MAX } from "../../k8s/view.ts";
import type { ViewColumn, ViewRow, ViewWindow } from "../index.ts";
import { age } from "./format.ts";
import { toneOf, type Resource } from "./resources.ts";

/** How long a deleted row stays, fading (matches the CSS animation). */
const FADE_MS = 1200;
/** Windows start at multiples of this many rows, and reach this far beyond what is visible on both sides. */
const STEP = 50;
/** While scrolling, the window follows at most this often; and once more when the scrolling stops. */
const SCROLL_MS = 150;
/** A row's height until one is measured (the stylesheet's). */
const ROW_PX = 32;

/** A column as shown: its header, the view's sort key for it (none: not sortable), its cell. */
interface Shown {
  label: string;
  className: string;
  sort: string | undefined;
  cell(row: ViewRow): string;
}

export interface TableEvents {
  /** The header of a column was clicked: sort by `sort` (`""` for the view's default order). */
  sort(sort: string): void;
  /** The order asked for last, which a header's click goes on from: the rows shown may still be of an earlier one. */
  asked(): string;
  /** The rows on screen need this window. */
  window(offset: number, limit: number): void;
}

export class ViewTable {
  readonly #scroll: HTMLElement;
  readonly #table: HTMLTableElement;
  readonly #body: HTMLTableSectionElement;
  readonly #events: TableEvents;
  readonly #above: HTMLTableRowElement;
  readonly #below: HTMLTableRowElement;
  /** The window's rows, in order (a deleted row fading out is no longer among them). */
  #rows: HTMLTableRowElement[] = [];
  #columns: Shown[] = [];
  /** The column that takes the room the others leave. */
  #filling: Shown | undefined;
  #columnsOf = "";
  #resource: Resource | undefined;
  /** The window held: its first row's position, how many rows it asked for, its order and filter. */
  #window: Required<Omit<ViewWindow, "anchor">> = { offset: 0, limit: 0, sort: "", filter: "" };
  #count = 0;
  #rowPx = ROW_PX;
  /** The row height was measured for this collection: it stays, so the space above a window does not shift under the reader. */
  #measured = false;
  #scrollTimer: ReturnType<typeof setTimeout> | undefined;
  #lastScroll = 0;
  /**
   * A header's width as its column grows (observed once laid out, so no layout is forced) becomes
   * its least, until another collection. Not the fill's, which gives its room back when the panel
   * narrows.
   */
  readonly #widest = new ResizeObserver((entries) => {
    for (const { target, borderBoxSize } of entries) {
      const th = target as HTMLElement;
      const width = borderBoxSize[0]?.inlineSize ?? 0;
      if (width > (Number.parseFloat(th.style.minWidth) || 0)) th.style.minWidth = `${width}px`;
    }
  });

  constructor(scroll: HTMLElement, table: HTMLTableElement, events: TableEvents) {
    this.#scroll = scroll;
    this.#table = table;
    this.#body = table.tBodies[0] as HTMLTableSectionElement;
    this.#events = events;
    this.#above = spacer();
    this.#below = spacer();
    scroll.addEventListener("scroll", () => this.#followSoon(), { passive: true });
    // A taller screen needs a longer window.
    new ResizeObserver(() => this.#followSoon()).observe(scroll);
  }

  /** The rows a window needs for the screen as it is: what is visible, and `STEP` rows beyond on each side. */
  get limit(): number {
    const visible = Math.ceil(this.#scroll.clientHeight / this.#rowPx) || 1;
    return Math.min(VIEW_LIMIT_MAX, Math.ceil(visible / STEP) * STEP + 2 * STEP);
  }

  /** Empty, for another collection, scrolled to the top. */
  clear(resource: Resource): void {
    this.#resource = resource;
    this.#window = { offset: 0, limit: 0, sort: "", filter: "" };
    this.#count = 0;
    this.#measured = false;
    this.#rows = [];
    this.#body.replaceChildren();
    for (const th of this.#table.tHead?.rows[0]?.cells ?? []) th.style.minWidth = "";
    this.#scroll.scrollTop = 0;
  }

  /** A new window: its columns, its rows, of `count`; another order or filter starts at the top. */
  reset(columns: readonly ViewColumn[], rows: readonly ViewRow[], window: Required<Omit<ViewWindow, "anchor">>, count: number): void {
    const reordered = window.sort !== this.#window.sort || window.filter !== this.#window.filter;
    this.#window = window;
    // What the rows are, for the stylesheet and for anyone reading the page.
    Object.assign(this.#table.dataset, { sort: window.sort, filter: window.filter, offset: String(window.offset) });
    this.#showColumns(columns);
    this.#count = count;
    this.#rows = rows.map((row) => this.#fill(this.#newRow(), row));
    this.#body.replaceChildren(this.#above, ...this.#rows, this.#below);
    this.#measure();
    this.#place();
    if (reordered) this.#scroll.scrollTop = 0;
    // Scrolled on while it came: the window there, in turn.
    this.#followSoon();
  }

  insert(row: ViewRow, at: number): void {
    const tr = this.#fill(this.#newRow(), row);
    this.#body.insertBefore(tr, this.#rows[at] ?? this.#below);
    this.#rows.splice(at, 0, tr);
    flash(tr, "added");
  }

  /** The row at `at` left the window: `gone`, it fades out (it was deleted), else it goes at once. */
  remove(at: number, gone: boolean): void {
    const [tr] = this.#rows.splice(at, 1);
    if (!tr) return;
    if (!gone) {
      tr.remove();
      return;
    }
    tr.dataset.deleted = "";
    delete tr.dataset.flash;
    // A timer, not animationend: background tabs pause animations, and the row must still go.
    setTimeout(() => tr.remove(), matchMedia("(prefers-reduced-motion: reduce)").matches ? 0 : FADE_MS);
  }

  update(row: ViewRow, at: number): void {
    const tr = this.#rows[at];
    if (!tr) return;
    this.#fill(tr, row);
    flash(tr, "modified");
  }

  move(from: number, to: number): void {
    const [tr] = this.#rows.splice(from, 1);
    if (!tr) return;
    this.#rows.splice(to, 0, tr);
    this.#body.insertBefore(tr, this.#rows[to + 1] ?? this.#below);
  }

  /** The rows that pass the filter: the space below the window follows it. */
  setCount(count: number): void {
    this.#count = count;
    this.#place();
    this.#followSoon();
  }

  /** Ages move on without changes. */
  refreshAges(now = Date.now()): void {
    for (const tr of this.#rows) {
      const cell = tr.querySelector<HTMLTableCellElement>("td[data-created]");
      if (!cell) continue;
      const text = age(cell.dataset.created, now);
      if (cell.textContent !== text) cell.textContent = text;
    }
  }

  /** The columns `kubectl get` prints (with the namespace, and each row's resourceVersion last). */
  #showColumns(columns: readonly ViewColumn[]): void {
    const resource = this.#resource;
    const id = JSON.stringify([resource?.id, columns.map((c) => c.name)]);
    if (id !== this.#columnsOf) {
      this.#columnsOf = id;
      const shown: Shown[] = [];
      columns.forEach((column, index) => {
        if (column.priority > 0) return;
        const className = column.format === "name" ? "name" : column.name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
        const text = (row: ViewRow) => String(row.cells?.[index] ?? "");
        // The Age column ticks on from the row's creation time.
        const cell = column.name === "Age" ? (row: ViewRow) => (row.creationTimestamp ? age(row.creationTimestamp) : text(row)) : text;
        shown.push({ label: column.name, className, sort: column.name, cell });
        if (column.format === "name" && resource?.namespaced) shown.push(NAMESPACE);
      });
      if (resource?.namespaced && !shown.includes(NAMESPACE)) shown.unshift(NAMESPACE);
      shown.push({ label: "Resource version", className: "rv", sort: undefined, cell: (row) => row.resourceVersion });
      this.#columns = shown;
      // The name takes the room the other columns leave; an event, which has none, gives it to its message.
      const fill = shown.find((c) => c.className === "name") ?? shown.find((c) => c.label === "Message");
      this.#filling = fill;
      this.#widest.disconnect();
      const head = document.createElement("tr");
      for (const column of shown) {
        const th = document.createElement("th");
        th.className = column.className;
        if (column.sort === undefined) th.textContent = column.label;
        else {
          const button = document.createElement("button");
          button.type = "button";
          button.textContent = column.label;
          const sort = column.sort;
          button.addEventListener("click", () => this.#events.sort(nextSort(this.#events.asked(), sort)));
          th.append(button);
        }
        if (column === fill) th.classList.add("fill");
        else this.#widest.observe(th);
        head.append(th);
      }
      (this.#table.tHead ?? this.#table.createTHead()).replaceChildren(head);
    }
    const [first = ""] = this.#window.sort.split(",");
    this.#columns.forEach((column, i) => {
      const th = this.#table.tHead?.rows[0]?.cells[i];
      if (!th) return;
      if (column.sort !== undefined && first.replace(/^-/, "") === column.sort) th.setAttribute("aria-sort", first.startsWith("-") ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }

  #newRow(): HTMLTableRowElement {
    const tr = document.createElement("tr");
    for (const column of this.#columns) {
      const td = tr.insertCell();
      td.className = column.className;
      if (column === this.#filling) td.classList.add("fill");
    }
    return tr;
  }

  #fill(tr: HTMLTableRowElement, row: ViewRow): HTMLTableRowElement {
    tr.dataset.key = row.key;
    this.#columns.forEach((column, i) => {
      const td = tr.cells[i] as HTMLTableCellElement;
      const text = column.cell(row);
      td.textContent = text;
      td.title = text;
      if (column.label === "Age" && row.creationTimestamp) td.dataset.created = row.creationTimestamp;
      const tone = toneOf(column.label, text);
      if (tone) td.dataset.tone = tone;
      else delete td.dataset.tone;
    });
    return tr;
  }

  /** A row's height, as the collection's first window draws it (one line, of the stylesheet's height, unless the reader's font is larger). */
  #measure(): void {
    const first = this.#rows[0];
    const last = this.#rows.at(-1);
    if (this.#measured || !first || !last) return;
    const height = (last.offsetTop + last.offsetHeight - first.offsetTop) / this.#rows.length;
    if (height > 0) this.#rowPx = height;
    this.#measured = true;
  }

  /** The space of the rows above and below the window. */
  #place(): void {
    const below = Math.max(0, this.#count - this.#window.offset - this.#rows.length);
    setHeight(this.#above, this.#window.offset * this.#rowPx, this.#columns.length);
    setHeight(this.#below, below * this.#rowPx, this.#columns.length);
  }

  /** Follow the screen: at most one window per SCROLL_MS while it scrolls (or windows arrive), and once when it stops. */
  #followSoon(): void {
    if (this.#scrollTimer !== undefined) clearTimeout(this.#scrollTimer);
    const wait = Math.max(0, this.#lastScroll + SCROLL_MS - performance.now());
    this.#scrollTimer = setTimeout(() => {
      this.#scrollTimer = undefined;
      this.#lastScroll = performance.now();
      this.#follow();
    }, wait);
  }

  /** Ask for the window the screen shows, if it is not the one held. */
  #follow(): void {
    if (this.#columns.length === 0) return;
    const head = this.#table.tHead?.offsetHeight ?? 0;
    const first = Math.max(0, Math.floor((this.#scroll.scrollTop - head) / this.#rowPx));
    const last = Math.floor(Math.max(0, this.#count - 1) / STEP) * STEP;
    const offset = Math.max(0, Math.min(Math.floor(first / STEP) * STEP - STEP, last));
    const limit = this.limit;
    if (offset !== this.#window.offset || limit !== this.#window.limit) this.#events.window(offset, limit);
  }
}

/** The namespace column: from the row's key (the relay's Table has none). */
const NAMESPACE: Shown = { label: "Namespace", className: "namespace", sort: "namespace", cell: (row) => (row.key.includes("/") ? (row.key.split("/")[0] ?? "") : "") };

/** Sort by `column`; by it descending if it was ascending; by nothing if it was descending. */
function nextSort(current: string, column: string): string {
  const [first = ""] = current.split(",");
  if (first === column) return `-${column}`;
  if (first === `-${column}`) return "";
  return column;
}

function spacer(): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.className = "spacer";
  tr.setAttribute("aria-hidden", "true");
  tr.insertCell();
  return tr;
}

function setHeight(tr: HTMLTableRowElement, px: number, columns: number): void {
  const cell = tr.cells[0] as HTMLTableCellElement;
  cell.colSpan = columns;
  tr.hidden = px === 0;
  cell.style.height = `${px}px`;
}

function flash(tr: HTMLTableRowElement, change: "added" | "modified"): void {
  tr.dataset.change = change;
  // Alternating between two identical animations restarts it without a forced layout.
  tr.dataset.flash = tr.dataset.flash === "a" ? "b" : "a";
}
