/**
 * @module
 * The live cluster page. It shows the picked collection as a live view (the relay's window of
 * it in the order and under the filter the table asks for, with the count, kept live by row
 * changes: the page holds the rows on screen, never the collection), watches the cluster's
 * namespaces (the sidebar) and its Events (a panel), and any collection named by
 * `?watch=<path>` (of any cluster: `?watch=/clusters/prod/api/v1/nodes`), all over one relay
 * socket, with the client library's `view` and `informer` (so each reopens or resumes,
 * relists and acknowledges as any client of the library does), and shows each watch's
 * lifecycle, what the relay's hub for the picked key is doing, and, for operators, every live
 * hub of the relay (a panel, polled only while open). With more than one cluster configured, a
 * picker shows one cluster's collection or every cluster's as one (the merged key `/clusters/*`,
 * with its Cluster column), and the namespaces and Events follow it. The page's state lives in its URL:
 * `?cluster=east&resource=deployments&namespace=team-a&labelSelector=app%3Dweb&sort=-Status&filter=web&status=Running`,
 * and `timeoutSeconds=N` asks the relay to end the picked collection's view after N seconds, to
 * watch the client reopen it. Against a relay that requires a token, open `/#token=<token>`: a fragment never
 * reaches a server or its logs, and the page moves it into session storage and out of the
 * address bar at once. The relay says what the token may read (`/_relay/access`): the page opens
 * where it may look (a namespace of its own, when it may not read every namespace), offers the
 * namespaces it has rules in, and watches the namespaces and Events only where it may; without
 * a token the relay accepts, it says how to give one.
 */
import { clusterOf, relaySocket, statsUrl, type Informer, type KubeResource, type View, type ViewRow, type ViewStatus, type ViewWindow, type WatchError, type WatchStatus } from "../index.ts";
import { readAccess, tokenNeeded, type Access } from "./access.ts";
import { clusterPrefix, offerClusters, readClusters } from "./clusters.ts";
import { ConnectionIndicator } from "./connection.ts";
import { EventsPanel } from "./events.ts";
import { after, failure, failureBrief, plural, resumeCost } from "./format.ts";
import { HubPanel } from "./hubs.ts";
import { EventLog } from "./log.ts";
import { PodLogPanel } from "./pod-logs.ts";
import { collectionPath, RESOURCES, resourceById } from "./resources.ts";
import { NamespaceSidebar } from "./sidebar.ts";
import { ViewTable } from "./table.ts";
import { WatchList, type WatchRow } from "./watches.ts";
import { authorization } from "../transport.ts";
import { DEFAULT_CLUSTER } from "../../k8s/key.ts";
import { ALL_CLUSTERS } from "../../k8s/members.ts";
import type { Status } from "../../k8s/types.ts";

const STATS_INTERVAL_MS = 3000;
/** A filter typed is asked for once typing pauses this long. */
const TYPING_MS = 250;

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}: index.html and app.js are out of step`);
  return found as T;
}

const clusterPicker = element<HTMLSelectElement>("cluster");
const resourcePicker = element<HTMLSelectElement>("resource");
const namespacePicker = element<HTMLSelectElement>("namespace");
const selectorInput = element<HTMLInputElement>("selector");
const objectsTable = element<HTMLTableElement>("objects");
const nameFilter = element<HTMLInputElement>("name-filter");
const statusFilter = element<HTMLSelectElement>("status-filter");
const countLabel = element<HTMLElement>("count");
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
const podLog = new PodLogPanel(element("pod-log"), relay);

const query = new URLSearchParams(location.search);
/** The cluster shown: `?cluster=east`, `?cluster=*` for all of them as one; the default cluster without. */
const initialCluster = query.get("cluster") || DEFAULT_CLUSTER;
const [clusters, firstAnswer] = await Promise.all([readClusters(token), readAccess(token, initialCluster)]);
/** What the token may read on the cluster shown. */
let answer: Access | { unauthorized: Status } = firstAnswer;
const timeoutSeconds = Number(query.get("timeoutSeconds")) || undefined;
/** More collections to watch, of any cluster: `?watch=/clusters/prod/api/v1/nodes` (repeatable). */
const extraWatches = query.getAll("watch");
const initialResource = resourceById(query.get("resource"));
const selection = {
  cluster: initialCluster,
  resource: initialResource,
  // Where the token may look, unless the address says.
  namespace: query.get("namespace") ?? ("unauthorized" in answer || !initialResource.namespaced ? "" : answer.openingNamespace(initialResource)),
  labelSelector: query.get("labelSelector") ?? "",
  /** The table's order, as the view asks for it (`-Status,name`); `""`, by namespace and name. */
  sort: query.get("sort") ?? "",
  /** What the names contain. */
  name: query.get("filter") ?? "",
  /** The Status column's value (resources that have one). */
  status: query.get("status") ?? "",
};
const table = new ViewTable(element("scroll"), objectsTable, {
  sort(sort) {
    selection.sort = sort;
    moveView({ sort, offset: 0 });
    log.add("note", sort ? `sorted by ${sort.replace(/^-/, "")}${sort.startsWith("-") ? ", descending" : ""}` : "sorted by namespace and name");
  },
  asked: () => selection.sort,
  window: (offset, limit) => moveView({ offset, limit }),
});
let watching: { view: View<KubeResource>; row: WatchRow } | undefined;
/** Status values seen in the picked collection's rows, for the Status filter. */
const statusesSeen = new Set<string>();

function collectionUrl(): string {
  const path = clusterPrefix(selection.cluster) + collectionPath(selection.resource, selection.namespace);
  return selection.labelSelector ? `${path}?labelSelector=${encodeURIComponent(selection.labelSelector)}` : path;
}

/** The view's filter: the name contains the text typed, and the Status is the one picked. */
function viewFilter(): string {
  const terms: string[] = [];
  // Names never hold a comma; the filter's terms are separated by them.
  const name = selection.name.replaceAll(",", "").trim();
  if (name) terms.push(`name~${name}`);
  if (selection.status) terms.push(`Status=${selection.status}`);
  return terms.join(",");
}

/** Keep the URL shareable: it says what is shown. */
function saveSelection(): void {
  const params = new URLSearchParams();
  if (selection.cluster !== DEFAULT_CLUSTER) params.set("cluster", selection.cluster);
  if (selection.resource !== RESOURCES[0]) params.set("resource", selection.resource.id);
  if (selection.namespace) params.set("namespace", selection.namespace);
  if (selection.labelSelector) params.set("labelSelector", selection.labelSelector);
  if (selection.sort) params.set("sort", selection.sort);
  if (selection.name) params.set("filter", selection.name);
  if (selection.status) params.set("status", selection.status);
  if (timeoutSeconds) params.set("timeoutSeconds", String(timeoutSeconds));
  for (const path of extraWatches) params.append("watch", path);
  const search = params.toString();
  history.replaceState(null, "", search ? `?${search}` : location.pathname);
}

/** A row in a line: `pod team-a/web-1 · Running · rv 42`. */
function describe(row: ViewRow): string {
  const columns = watching?.view.columns ?? [];
  const at = ["Status", "Ready"].map((name) => columns.findIndex((c) => c.name === name)).find((i) => i >= 0) ?? -1;
  const status = at >= 0 ? String(row.cells?.[at] ?? "") : "";
  return `${selection.resource.noun} ${row.key}${status ? ` · ${status}` : ""} · rv ${row.resourceVersion}`;
}

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

/** What the picked collection's view is doing, in the log's words. */
function viewStatusText(status: ViewStatus): string {
  switch (status.type) {
    case "connected":
      return status.resuming ? `reconnected, reopening the view (last at resourceVersion ${status.resourceVersion})` : "opening the view";
    case "resumed":
      return `caught up: ${resumeCost(status)} (${status.from} → ${status.resourceVersion})`;
    case "closed":
      return `socket closed (${status.code}${status.reason ? `: ${status.reason}` : ""}); reopening ${after(status.retryInMs)}`;
    case "error":
      return `${failureBrief(status.error)}; retrying ${after(status.retryInMs)}`;
  }
}

function showCount(count: number): void {
  countLabel.textContent = plural(count, selection.resource.noun);
  empty.hidden = count > 0;
  watching?.row.count(count);
}

/** The Status filter offers the values seen (and the one picked); it shows only for a resource whose table has a Status. */
function offerStatuses(rows: Iterable<ViewRow>): void {
  const at = watching?.view.columns.findIndex((c) => c.name === "Status") ?? -1;
  statusFilter.hidden = at < 0;
  if (at < 0) return;
  let added = false;
  for (const row of rows) {
    const value = String(row.cells?.[at] ?? "");
    if (!value || statusesSeen.has(value)) continue;
    statusesSeen.add(value);
    added = true;
  }
  if (!added && statusFilter.options.length > 1) return;
  const values = [...new Set([...statusesSeen, ...(selection.status ? [selection.status] : [])])].sort();
  statusFilter.replaceChildren(new Option("Any status", ""), ...values.map((v) => new Option(v, v)));
  statusFilter.value = selection.status;
}

/** Move the picked collection's view (another window, order or filter); its rows stay until the new window comes. */
function moveView(change: ViewWindow): void {
  const current = watching?.view;
  if (!current) return;
  saveSelection();
  current.update(change).catch((error: WatchError) => {
    if (watching?.view !== current) return;
    log.add("error", `${failureBrief(error)}: ${failure(error)}`);
  });
}

function watchSelection(): void {
  watching?.view.close();
  watching?.row.remove();
  const { resource, namespace, labelSelector } = selection;
  sidebar.select(namespace);
  table.clear(resource);
  statusesSeen.clear();
  statusFilter.hidden = true;
  objectsTable.classList.toggle("cluster-scoped", !resource.namespaced);
  objectsTable.classList.toggle("pods", resource.id === "pods");
  namespacePicker.disabled = !resource.namespaced;
  // All namespaces at once only where the token may read them so.
  const everywhere = "unauthorized" in answer || answer.everywhere(resource);
  (namespacePicker.options[0] as HTMLOptionElement).disabled = !everywhere;
  sidebar.allowAll(everywhere);
  saveSelection();
  const where = resource.namespaced ? (namespace ? `in ${namespace}` : "in all namespaces") : "(cluster-scoped)";
  const of = selection.cluster === DEFAULT_CLUSTER ? "" : selection.cluster === ALL_CLUSTERS ? " of all clusters" : ` of ${selection.cluster}`;
  const what = `${resource.label.toLowerCase()} ${where}${of}${labelSelector ? ` matching ${labelSelector}` : ""}`;
  log.add("note", `watching ${what}`);
  const row = watches.add("selection", what, true);
  indicator.set("connecting", "connecting…");
  relayStats.textContent = "";
  countLabel.textContent = "";
  empty.hidden = true;

  let first = true;
  /** The window holds every row that passes the filter: a row in or out is an object added or deleted, not a scroll. */
  const whole = () => current.window.offset === 0 && current.count < current.window.limit;
  const current: View<KubeResource> = relay.view(collectionUrl(), {
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    sort: selection.sort,
    filter: viewFilter(),
    limit: table.limit,
    onReset(rows) {
      table.reset(current.columns, rows, current.window, current.count);
      offerStatuses(rows);
      showCount(current.count);
      if (first) log.add("listed", `${plural(current.count, resource.noun)} at resourceVersion ${current.resourceVersion}; showing the first ${plural(rows.length, "row")}`);
      first = false;
    },
    onInsert(added, at) {
      const real = whole();
      table.insert(added, at);
      offerStatuses([added]);
      if (real) log.add("ADDED", describe(added));
    },
    onRemove(removed, at) {
      const real = whole();
      table.remove(at, real);
      if (real) log.add("DELETED", describe(removed));
    },
    onUpdate(updated, _, at) {
      table.update(updated, at);
      offerStatuses([updated]);
      log.add("MODIFIED", describe(updated));
    },
    onMove: (_, from, to) => table.move(from, to),
    onCount(n) {
      table.setCount(n);
      showCount(n);
    },
    onStatus(status) {
      indicator.show(status);
      row.indicator.show(status);
      log.add(status.type, viewStatusText(status));
      if (status.type === "connected") void refreshStats();
    },
  });
  watching = { view: current, row };
  current.done.catch((error: WatchError) => {
    if (watching?.view !== current) return;
    indicator.failed(error);
    row.indicator.failed(error);
    log.add("error", `${what}: failed: ${failureBrief(error)}`);
  });
}

/**
 * A watch beside the picked collection, with its row: its lifecycle and failure shown there
 * and in the log, named by `name`. Stopping it takes its row away.
 */
function watchBeside<T extends KubeResource>(name: string, path: string, on: { add?(o: T): void; update?(o: T): void; remove?(o: T): void } = {}): () => void {
  const row = watches.add(name, path);
  const beside: Informer<T> = relay.informer<T>(path, {
    onAdd: (o) => {
      on.add?.(o);
      row.count(beside.objects.size);
    },
    onUpdate: (o) => on.update?.(o),
    onDelete: (o) => {
      on.remove?.(o);
      row.count(beside.objects.size);
    },
    onStatus: (status) => {
      row.indicator.show(status);
      row.count(beside.objects.size);
      if (status.type !== "listed" && status.type !== "connected") log.add(status.type, `${path}: ${statusText(status)}`);
    },
  });
  let stopped = false;
  beside.done.catch((error: WatchError) => {
    if (stopped) return;
    row.indicator.failed(error);
    log.add("error", `${path}: failed: ${failureBrief(error)}`);
  });
  return () => {
    stopped = true;
    beside.stop();
    row.remove();
  };
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

function setUpControls(): void {
  offerClusters(clusterPicker, clusters, selection.cluster);
  clusterPicker.addEventListener("change", () => void pickCluster(clusterPicker.value));
  for (const r of RESOURCES) resourcePicker.add(new Option(r.label, r.id, false, r === selection.resource));
  if (selection.namespace) addNamespace(selection.namespace);
  namespacePicker.value = selection.namespace;
  selectorInput.value = selection.labelSelector;

  resourcePicker.addEventListener("change", () => {
    selection.resource = resourceById(resourcePicker.value);
    // Another resource has other columns to sort and filter by.
    selection.sort = "";
    selection.status = "";
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

  nameFilter.value = selection.name;
  let typing: ReturnType<typeof setTimeout> | undefined;
  const filter = () => {
    moveView({ filter: viewFilter(), offset: 0 });
    const said = [selection.name && `names containing ${selection.name}`, selection.status && `Status ${selection.status}`].filter(Boolean).join(", ");
    log.add("note", said ? `filtered: ${said}` : "not filtered");
  };
  // Asked for once typing pauses, not at every key.
  nameFilter.addEventListener("input", () => {
    if (typing !== undefined) clearTimeout(typing);
    typing = setTimeout(() => {
      typing = undefined;
      if (nameFilter.value.trim() === selection.name) return;
      selection.name = nameFilter.value.trim();
      filter();
    }, TYPING_MS);
  });
  statusFilter.addEventListener("change", () => {
    selection.status = statusFilter.value;
    filter();
  });
}

/** The watches of the cluster shown beside its collection's view (the namespaces, the Events), to stop when another is picked. */
let clusterWatches: Array<() => void> = [];

/** A namespace's own name: in every cluster's view it is named `<cluster>:<name>`. */
const ownName = (object: KubeResource): string => clusterOf(object)?.name ?? object.metadata?.name ?? "";

/** The watches beside the picked collection's view: the namespaces and the Events of the cluster shown. */
function watchClusterBesides(answer: Access): void {
  const prefix = clusterPrefix(selection.cluster);
  if (answer.everywhere(NAMESPACES)) {
    /** How many of the clusters shown have a namespace of that name. */
    const held = new Map<string, number>();
    // The namespace picker and sidebar are themselves clients of the library: namespaces come and go live.
    const stop = watchBeside("namespaces", `${prefix}/api/v1/namespaces`, {
      add: (ns) => {
        const name = ownName(ns);
        held.set(name, (held.get(name) ?? 0) + 1);
        addNamespace(name);
        sidebar.add(name);
      },
      remove: (ns) => {
        const name = ownName(ns);
        const left = (held.get(name) ?? 1) - 1;
        if (left > 0) return void held.set(name, left);
        held.delete(name);
        if (name !== selection.namespace)
          Array.from(namespacePicker.options)
            .find((o) => o.value === name)
            ?.remove();
        sidebar.remove(name);
      },
    });
    clusterWatches.push(stop);
  } else {
    // The token may not list namespaces: the ones it has rules in.
    for (const name of answer.namespaces) {
      addNamespace(name);
      sidebar.add(name);
    }
  }
  const showEvents = { add: (e: KubeResource) => events.show(e), update: (e: KubeResource) => events.show(e), remove: (e: KubeResource) => events.remove(e) };
  if (answer.everywhere(EVENTS)) clusterWatches.push(watchBeside("events", `${prefix}/api/v1/events`, showEvents));
  else for (const ns of answer.namespacesFor(EVENTS)) clusterWatches.push(watchBeside(`events-${ns}`, `${prefix}/api/v1/namespaces/${ns}/events`, showEvents));
  if (!answer.everywhere(EVENTS) && answer.namespacesFor(EVENTS).length === 0) events.note("This token may not read Events.");
}

/**
 * Another cluster picked (or every cluster): its collection, with the resource, namespace, label
 * selector, order and filter kept (an order by the Cluster column only in every cluster's), and
 * its namespaces and Events beside it, as the token may read them there.
 */
async function pickCluster(cluster: string): Promise<void> {
  selection.cluster = cluster;
  if (cluster !== ALL_CLUSTERS)
    selection.sort = selection.sort
      .split(",")
      .filter((key) => key !== "" && key.replace(/^-/, "") !== "Cluster")
      .join(",");
  const read = await readAccess(token, cluster);
  // Picked again while the relay answered: that pick's.
  if (selection.cluster !== cluster) return;
  answer = read;
  for (const stop of clusterWatches) stop();
  clusterWatches = [];
  // Another cluster's namespaces: the one shown stays picked.
  for (const option of Array.from(namespacePicker.options)) if (option.value !== "") option.remove();
  sidebar.clear();
  events.clear();
  if (selection.namespace) addNamespace(selection.namespace);
  namespacePicker.value = selection.namespace;
  log.add("note", `showing ${cluster === ALL_CLUSTERS ? "all clusters" : `cluster ${cluster}`}`);
  watchSelection();
  if (!("unauthorized" in read)) watchClusterBesides(read);
}

/** A pod's row clicked: follow its log (its first container, as kubectl does). */
objectsTable.addEventListener("click", (event) => {
  const key = (event.target as HTMLElement).closest("tr")?.dataset.key;
  if (!key || selection.resource.id !== "pods") return;
  const [namespace, shown = ""] = key.split("/");
  // In every cluster's view a pod is named `<cluster>:<name>`; its log is its own cluster's.
  const at = selection.cluster === ALL_CLUSTERS ? shown.indexOf(":") : -1;
  const [cluster, name] = at < 0 ? [selection.cluster, shown] : [shown.slice(0, at), shown.slice(at + 1)];
  if (namespace && name) void followPodLog(cluster, namespace, name);
});

/**
 * The view's rows are cells: the pod itself says which container is its first. Any state of it
 * will do (`resourceVersion=0`): the hub that keeps the table live answers it, not the upstream.
 */
async function followPodLog(cluster: string, namespace: string, name: string): Promise<void> {
  const url = `${clusterPrefix(cluster)}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}?resourceVersion=0`;
  const response = await fetch(url, { cache: "no-store", headers: authorization(token) }).catch(() => undefined);
  // Without it, the relay's answer to the log says what is missing (a pod gone, a container to name).
  const pod = response?.ok ? ((await response.json()) as { spec?: { containers?: Array<{ name: string }> } }) : undefined;
  podLog.follow(namespace, name, pod?.spec?.containers?.[0]?.name, cluster);
}

if ("unauthorized" in answer) {
  // Every watch would fail alike: say once what is missing.
  const text = tokenNeeded(location.origin, answer.unauthorized, token !== undefined);
  notify(text);
  indicator.set("failed", token ? "the relay refused the token" : "a token is needed");
  log.add("error", text);
} else {
  setUpControls();
  // The table first: what the page opens on comes before what is beside it on the socket.
  watchSelection();
  watchClusterBesides(answer);
  extraWatches.forEach((path, i) => watchBeside(`watch-${i + 1}`, path));
  setInterval(() => void refreshStats(), STATS_INTERVAL_MS);
  setInterval(() => table.refreshAges(), 1000);
}
