/**
 * @module
 * The live cluster page. It watches the picked collection, the cluster's namespaces (the
 * sidebar) and its Events (a panel), and any collection named by `?watch=<path>` (of any
 * cluster: `?watch=/clusters/prod/api/v1/nodes`), all over one relay socket, with the client
 * library's `informer` (so each resumes, relists and acknowledges as any client of the library
 * does), and shows the objects, each watch's lifecycle, and what the relay's hub for the picked
 * key is doing, and, for operators, every live hub of the relay (a panel, polled only while
 * open). The page's state lives in its URL: `?resource=deployments&namespace=team-a&labelSelector=app%3Dweb`,
 * and `timeoutSeconds=N` asks the relay to end the picked collection's watch after N seconds,
 * to watch the client resume. Against a relay that requires a token, open `/#token=<token>`: a fragment never
 * reaches a server or its logs, and the page moves it into session storage and out of the
 * address bar at once. The relay says what the token may read (`/_relay/access`): the page opens
 * where it may look (a namespace of its own, when it may not read every namespace), offers the
 * namespaces it has rules in, and watches the namespaces and Events only where it may; without
 * a token the relay accepts, it says how to give one.
 */
import { objectKey, relaySocket, statsUrl, type Informer, type KubeResource, type WatchError, type WatchStatus } from "../index.ts";
import { readAccess, tokenNeeded, type Access } from "./access.ts";
import { ConnectionIndicator } from "./connection.ts";
import { EventsPanel } from "./events.ts";
import { after, failureBrief, plural, resumeCost } from "./format.ts";
import { HubPanel } from "./hubs.ts";
import { EventLog } from "./log.ts";
import { PodLogPanel } from "./pod-logs.ts";
import { collectionPath, RESOURCES, resourceById } from "./resources.ts";
import { NamespaceSidebar } from "./sidebar.ts";
import { ObjectTable } from "./table.ts";
import { WatchList, type WatchRow } from "./watches.ts";
import { authorization } from "../transport.ts";

const STATS_INTERVAL_MS = 3000;

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}: index.html and app.js are out of step`);
  return found as T;
}

const resourcePicker = element<HTMLSelectElement>("resource");
const namespacePicker = element<HTMLSelectElement>("namespace");
const selectorInput = element<HTMLInputElement>("selector");
const objectsTable = element<HTMLTableElement>("objects");
const count = element<HTMLElement>("count");
const notice = element<HTMLElement>("notice");
const empty = element<HTMLElement>("empty");
const relayStats = element<HTMLElement>("relay-stats");
const indicator = new ConnectionIndicator(element("connection"), { brief: true });
const log = new EventLog(element<HTMLOListElement>("log"));
const watches = new WatchList(element<HTMLUListElement>("watches"));
const events = new EventsPanel(element<HTMLOListElement>("events"));
const sidebar = new NamespaceSidebar(element<HTMLUListElement>("namespaces"), (namespace) => {
  namespacePicker.value = namespace;
  selection.namespace = namespace;
  watchSelection();
});

/** The bearer token for this tab, if the relay needs one (see the module comment). */
function sessionToken(): string | undefined {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromFragment) {
    sessionStorage.setItem("kube-watch-relay-token", fromFragment);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem("kube-watch-relay-token") ?? undefined;
}
const token = sessionToken();
/** Every watch of the page shares this one WebSocket. */
const relay = relaySocket(location.origin, token ? { token } : {});
new HubPanel(element<HTMLDetailsElement>("operator"), element<HTMLTableElement>("hubs").tBodies[0] as HTMLTableSectionElement, element("hubs-note"), token);
const answer = await readAccess(token);
const podLog = new PodLogPanel(element("pod-log"), relay);

const query = new URLSearchParams(location.search);
const timeoutSeconds = Number(query.get("timeoutSeconds")) || undefined;
/** More collections to watch, of any cluster: `?watch=/clusters/prod/api/v1/nodes` (repeatable). */
const extraWatches = query.getAll("watch");
const initialResource = resourceById(query.get("resource"));
const selection = {
  resource: initialResource,
  // Where the token may look, unless the address says.
  namespace: query.get("namespace") ?? ("unauthorized" in answer || !initialResource.namespaced ? "" : answer.openingNamespace(initialResource)),
  labelSelector: query.get("labelSelector") ?? "",
};
const table = new ObjectTable(objectsTable.tBodies[0] as HTMLTableSectionElement, selection.resource);
let watching: { informer: Informer<KubeResource>; row: WatchRow } | undefined;

function collectionUrl(): string {
  const path = collectionPath(selection.resource, selection.namespace);
  return selection.labelSelector ? `${path}?labelSelector=${encodeURIComponent(selection.labelSelector)}` : path;
}

/** Keep the URL shareable: it says what is shown. */
function saveSelection(): void {
  const params = new URLSearchParams();
  if (selection.resource !== RESOURCES[0]) params.set("resource", selection.resource.id);
  if (selection.namespace) params.set("namespace", selection.namespace);
  if (selection.labelSelector) params.set("labelSelector", selection.labelSelector);
  if (timeoutSeconds) params.set("timeoutSeconds", String(timeoutSeconds));
  for (const path of extraWatches) params.append("watch", path);
  const search = params.toString();
  history.replaceState(null, "", search ? `?${search}` : location.pathname);
}

const describe = (o: KubeResource): string => `${selection.resource.noun} ${objectKey(o)} · ${selection.resource.status(o).text} · rv ${o.metadata?.resourceVersion ?? "?"}`;

/** Say it above the table, where it is read first; `undefined` clears it. */
function notify(text: string | undefined): void {
  notice.hidden = text === undefined;
  notice.textContent = text ?? "";
}

function statusText(status: WatchStatus<KubeResource>): string {
  switch (status.type) {
    case "listed":
      return `listed ${plural(status.items.length, selection.resource.noun)} at resourceVersion ${status.resourceVersion}`;
    case "relisted":
      return `resume point expired (${status.expired}): relisted ${plural(status.items.length, selection.resource.noun)} at ${status.resourceVersion}`;
    case "connected":
      return status.resuming ? `reconnected, resuming from resourceVersion ${status.resourceVersion}` : `watching from resourceVersion ${status.resourceVersion}`;
    case "resumed":
      return `caught up: ${resumeCost(status)} (${status.from} → ${status.resourceVersion})`;
    case "closed":
      return `socket closed (${status.code}${status.reason ? `: ${status.reason}` : ""}); resuming ${after(status.retryInMs)}`;
    case "error":
      // Its whole text is in its watch's row.
      return `${failureBrief(status.error)}; retrying ${after(status.retryInMs)}`;
  }
}

function showCount(): void {
  count.textContent = plural(table.size, selection.resource.noun);
  empty.hidden = table.size > 0;
}

function watchSelection(): void {
  watching?.informer.stop();
  watching?.row.remove();
  const { resource, namespace, labelSelector } = selection;
  sidebar.select(namespace);
  table.reset(resource);
  objectsTable.classList.toggle("cluster-scoped", !resource.namespaced);
  objectsTable.classList.toggle("pods", resource.id === "pods");
  namespacePicker.disabled = !resource.namespaced;
  // All namespaces at once only where the token may read them so.
  const everywhere = "unauthorized" in answer || answer.everywhere(resource);
  (namespacePicker.options[0] as HTMLOptionElement).disabled = !everywhere;
  sidebar.allowAll(everywhere);
  saveSelection();
  const where = resource.namespaced ? (namespace ? `in ${namespace}` : "in all namespaces") : "(cluster-scoped)";
  const what = `${resource.label.toLowerCase()} ${where}${labelSelector ? ` matching ${labelSelector}` : ""}`;
  log.add("note", `watching ${what}`);
  const row = watches.add("selection", what, true);
  indicator.set("connecting", "connecting…");
  relayStats.textContent = "";
  count.textContent = "";
  empty.hidden = true;

  // The first list arrives as adds: fill the table quietly, then log and flash what changes.
  let listing = true;
  const current: Informer<KubeResource> = relay.informer(collectionUrl(), {
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    onAdd(object) {
      table.upsert(object, listing ? undefined : "added");
      if (listing) return;
      showCount();
      row.count(current);
      log.add("ADDED", describe(object));
    },
    onUpdate(object) {
      table.upsert(object, "modified");
      log.add("MODIFIED", describe(object));
    },
    onDelete(object) {
      table.remove(object);
      showCount();
      row.count(current);
      log.add("DELETED", describe(object));
    },
    onStatus(status) {
      if (status.type === "listed") listing = false;
      if (status.type === "listed" || status.type === "relisted") showCount();
      indicator.show(status);
      row.indicator.show(status);
      row.count(current);
      log.add(status.type, statusText(status));
      if (status.type === "connected") void refreshStats();
    },
  });
  watching = { informer: current, row };
  current.done.catch((error: WatchError) => {
    if (watching?.informer !== current) return;
    indicator.failed(error);
    row.indicator.failed(error);
    log.add("error", `${what}: failed: ${failureBrief(error)}`);
  });
}

/**
 * A watch beside the picked collection, with its row: its lifecycle and failure shown there
 * and in the log, named by `name`.
 */
function watchBeside<T extends KubeResource>(name: string, path: string, on: { add?(o: T): void; update?(o: T): void; remove?(o: T): void } = {}): void {
  const row = watches.add(name, path);
  const beside: Informer<T> = relay.informer<T>(path, {
    onAdd: (o) => {
      on.add?.(o);
      row.count(beside);
    },
    onUpdate: (o) => on.update?.(o),
    onDelete: (o) => {
      on.remove?.(o);
      row.count(beside);
    },
    onStatus: (status) => {
      row.indicator.show(status);
      row.count(beside);
      if (status.type !== "listed" && status.type !== "connected") log.add(status.type, `${path}: ${statusText(status)}`);
    },
  });
  beside.done.catch((error: WatchError) => {
    row.indicator.failed(error);
    log.add("error", `${path}: failed: ${failureBrief(error)}`);
  });
}

interface RelayStats {
  subscribers: number;
  watching: boolean;
  upstream: string;
  resourceVersion: number;
  windowEvents: number;
}

/** What the relay's hub for this key is doing: its subscribers and its (one) upstream watch. */
async function refreshStats(): Promise<void> {
  const url = statsUrl(collectionUrl());
  let text: string;
  try {
    const response = await fetch(url, { cache: "no-store", headers: authorization(token) });
    if (!response.ok) throw new Error(String(response.status));
    const stats = (await response.json()) as RelayStats;
    text =
      `relay: ${plural(stats.subscribers, "subscriber")} · ${plural(stats.watching ? 1 : 0, "upstream watch", "upstream watches")} (${stats.upstream})` +
      ` · window ${plural(stats.windowEvents, "event")} · rv ${stats.resourceVersion}`;
  } catch (e) {
    text = `relay stats unavailable (${(e as Error).message})`;
  }
  if (url === statsUrl(collectionUrl())) relayStats.textContent = text;
}

function addNamespace(name: string): void {
  const options = Array.from(namespacePicker.options);
  if (options.some((o) => o.value === name)) return;
  const before = options.find((o) => o.value !== "" && o.value > name);
  namespacePicker.add(new Option(name, name), before ?? null);
}

const NAMESPACES = { group: "", id: "namespaces" };
const EVENTS = { group: "", id: "events" };

function setUpControls(answer: Access): void {
  for (const r of RESOURCES) resourcePicker.add(new Option(r.label, r.id, false, r === selection.resource));
  if (selection.namespace) addNamespace(selection.namespace);
  namespacePicker.value = selection.namespace;
  selectorInput.value = selection.labelSelector;

  resourcePicker.addEventListener("change", () => {
    selection.resource = resourceById(resourcePicker.value);
    watchSelection();
  });
  namespacePicker.addEventListener("change", () => {
    selection.namespace = namespacePicker.value;
    watchSelection();
  });
  selectorInput.addEventListener("change", () => {
    selection.labelSelector = selectorInput.value.trim();
    watchSelection();
  });

  if (answer.everywhere(NAMESPACES)) {
    // The namespace picker and sidebar are themselves clients of the library: namespaces come and go live.
    watchBeside("namespaces", "/api/v1/namespaces", {
      add: (ns) => {
        addNamespace(ns.metadata?.name ?? "");
        sidebar.add(ns.metadata?.name ?? "");
      },
      remove: (ns) => {
        const name = ns.metadata?.name ?? "";
        if (name !== selection.namespace)
          Array.from(namespacePicker.options)
            .find((o) => o.value === name)
            ?.remove();
        sidebar.remove(name);
      },
    });
  } else {
    // The token may not list namespaces: the ones it has rules in.
    for (const name of answer.namespaces) {
      addNamespace(name);
      sidebar.add(name);
    }
  }
  const showEvents = { add: (e: KubeResource) => events.show(e), update: (e: KubeResource) => events.show(e), remove: (e: KubeResource) => events.remove(e) };
  if (answer.everywhere(EVENTS)) watchBeside("events", "/api/v1/events", showEvents);
  else for (const ns of answer.namespacesFor(EVENTS)) watchBeside(`events-${ns}`, `/api/v1/namespaces/${ns}/events`, showEvents);
  if (!answer.everywhere(EVENTS) && answer.namespacesFor(EVENTS).length === 0) events.note("This token may not read Events.");
  extraWatches.forEach((path, i) => watchBeside(`watch-${i + 1}`, path));
}

/** A pod's row clicked: follow its log (its first container, as kubectl does). */
objectsTable.addEventListener("click", (event) => {
  const key = (event.target as HTMLElement).closest("tr")?.dataset.key;
  if (!key || selection.resource.id !== "pods") return;
  const pod = watching?.informer.objects.get(key) as { metadata?: { namespace?: string; name?: string }; spec?: { containers?: Array<{ name: string }> } } | undefined;
  if (pod?.metadata?.namespace && pod.metadata.name) podLog.follow(pod.metadata.namespace, pod.metadata.name, pod.spec?.containers?.[0]?.name);
});

if ("unauthorized" in answer) {
  // Every watch would fail alike: say once what is missing.
  const text = tokenNeeded(location.origin, answer.unauthorized, token !== undefined);
  notify(text);
  indicator.set("failed", token ? "the relay refused the token" : "a token is needed");
  log.add("error", text);
} else {
  setUpControls(answer);
  watchSelection();
  setInterval(() => void refreshStats(), STATS_INTERVAL_MS);
  setInterval(() => table.refreshAges(), 1000);
}
