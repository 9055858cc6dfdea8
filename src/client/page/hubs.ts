/**
 * @module
 * The operator panel: the relay's live hubs from `/_relay/hubs` (key, subscribers, upstream
 * state, window, last event age, last error), a hot key's replicas under its root, polled only
 * while the panel is open. Without the
 * operator's right (`list hubs` in relay.kube-watch-relay.dev) the relay answers 401 or 403,
 * and the panel says so.
 */
import { humanDuration } from "../../k8s/table.ts";
import { authorization } from "../transport.ts";
import { plural } from "./format.ts";

const POLL_MS = 3000;

/**
 * What the page reads of a `/_relay/hubs` entry (the relay's `HubIndexEntry`, of which the page
 * reads only these fields: the client shares only `k8s` with the relay's code).
 */
export interface HubEntry {
  /** The hub's name: its key's canonical string, or a replica's `<root>#<region>-<n>`. */
  hub: string;
  key: string;
  /** A replica's root. */
  root?: string | undefined;
  /** A root's replicas, as they last reported. */
  replicas?: Array<{ hub: string; subscribers: number; lagSeconds: number }> | undefined;
  upstream: string;
  subscribers: { websocket: number; http: number };
  window: { events: number; head: number };
  objects: number;
  lastEventAgeSeconds?: number | undefined;
  lastError?: { status: number; message: string } | undefined;
}

function cell(row: HTMLTableRowElement, className: string, text: string, title?: string): HTMLTableCellElement {
  const td = row.insertCell();
  td.className = className;
  td.textContent = text;
  if (title) td.title = title;
  return td;
}

/**
 * A hub's key as a reader reads it: its query decoded (`app=web`, not `app%3Dweb`), and lines
 * allowed to break after each `/`, `?`, `&`, `,` and `=`, so a long key wraps between its parts
 * rather than in the middle of a word.
 */
function keyText(td: HTMLTableCellElement, key: string): void {
  let decoded = key;
  try {
    decoded = decodeURIComponent(key);
  } catch {
    // not percent-encoded as it should be: shown as it is
  }
  td.replaceChildren();
  for (const part of decoded.split(/(?<=[/?&,=])/)) td.append(part, document.createElement("wbr"));
  td.title = decoded;
}

/** Hubs in the order the panel shows them: each root (or lone hub) by key, its replicas right under it. */
export function treeOrder(hubs: readonly HubEntry[]): HubEntry[] {
  const replicasOf = new Map<string, HubEntry[]>();
  for (const hub of hubs) if (hub.root !== undefined) replicasOf.set(hub.root, [...(replicasOf.get(hub.root) ?? []), hub]);
  const roots = hubs.filter((h) => h.root === undefined || !hubs.some((r) => r.hub === h.root));
  const byName = (a: HubEntry, b: HubEntry) => (a.key === b.key ? a.hub.localeCompare(b.hub) : a.key.localeCompare(b.key));
  return roots.sort(byName).flatMap((root) => [root, ...(root.root === undefined ? (replicasOf.get(root.hub) ?? []).sort(byName) : [])]);
}

export class HubPanel {
  readonly #panel: HTMLDetailsElement;
  readonly #rows: HTMLTableSectionElement;
  readonly #note: HTMLElement;
  readonly #headers: Record<string, string>;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(panel: HTMLDetailsElement, rows: HTMLTableSectionElement, note: HTMLElement, token: string | undefined) {
    this.#panel = panel;
    this.#rows = rows;
    this.#note = note;
    this.#headers = authorization(token);
    panel.addEventListener("toggle", () => this.#toggled());
  }

  #toggled(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#panel.open) return;
    void this.#refresh();
    this.#timer = setInterval(() => void this.#refresh(), POLL_MS);
  }

  async #refresh(): Promise<void> {
    let hubs: HubEntry[];
    try {
      const response = await fetch("/_relay/hubs", { cache: "no-store", headers: this.#headers });
      if (response.status === 401 || response.status === 403) {
        this.#show([], `not allowed (${response.status}): the hub index needs the operator's right, list hubs in relay.kube-watch-relay.dev`);
        return;
      }
      if (!response.ok) throw new Error(String(response.status));
      hubs = ((await response.json()) as { hubs: HubEntry[] }).hubs;
    } catch (e) {
      this.#show([], `hub index unavailable (${(e as Error).message})`);
      return;
    }
    this.#show(hubs, `${plural(hubs.length, "live hub")}, as of their last heartbeat`);
  }

  #show(hubs: HubEntry[], note: string): void {
    this.#note.textContent = note;
    this.#rows.replaceChildren();
    for (const hub of treeOrder(hubs)) {
      const row = this.#rows.insertRow();
      row.dataset.key = hub.key;
      const subscribers = `${hub.subscribers.websocket} WebSocket, ${hub.subscribers.http} HTTP`;
      if (hub.root === undefined) {
        keyText(cell(row, "key", ""), hub.key);
        const replicas = hub.replicas ?? [];
        const onReplicas = replicas.reduce((n, r) => n + r.subscribers, 0);
        cell(
          row,
          "subscribers",
          String(hub.subscribers.websocket + hub.subscribers.http),
          replicas.length > 0 ? `${subscribers}; ${onReplicas} more on ${plural(replicas.length, "replica")}` : subscribers,
        );
      } else {
        // A replica: under its root, named by its region and number, with how far behind the root it is.
        row.classList.add("replica");
        const lag = hubs.find((h) => h.hub === hub.root)?.replicas?.find((r) => r.hub === hub.hub)?.lagSeconds;
        cell(row, "key", `↳ replica ${hub.hub.slice(hub.hub.lastIndexOf("#") + 1)}`, `${hub.hub}${lag === undefined ? "" : `, ${lag} s behind its root`}`);
        cell(row, "subscribers", String(hub.subscribers.websocket + hub.subscribers.http), subscribers);
      }
      cell(row, "upstream", hub.upstream);
      cell(row, "window", String(hub.window.events), `head at resourceVersion ${hub.window.head}; ${hub.objects} objects cached`);
      cell(row, "last-event", hub.lastEventAgeSeconds === undefined ? "" : humanDuration(hub.lastEventAgeSeconds * 1000));
      cell(row, "error", hub.lastError ? String(hub.lastError.status || "conn") : "", hub.lastError?.message);
    }
  }
}
