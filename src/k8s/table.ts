/**
 * @module
 * Server-side printing: objects as `meta.k8s.io` `Table`s, which kubectl requests for its
 * human-readable output. Columns follow kubernetes/kubernetes `pkg/printers/internalversion`
 * for the built-ins; any other resource gets Name and Age, as a custom resource without
 * printer columns does. Rows carry the object's metadata as `PartialObjectMetadata` in the
 * Table's own group/version unless `includeObject` says otherwise (apiserver
 * `pkg/endpoints/handlers/response.go` `asTable`). Shared by the simulator and the relay.
 */
import { CLUSTER_ANNOTATION, membersOf } from "./members.ts";
import type { KubeObject } from "./types.ts";

export type IncludeObject = "None" | "Metadata" | "Object";

/** Which resource's printer to use: built-ins are known by group and plural. */
export interface TableResource {
  group: string;
  resource: string;
  /** A merged key's (`members.ts`) Tables have a Cluster column after the name. */
  cluster?: string | undefined;
}

export interface TableOptions {
  version: "v1" | "v1beta1";
  includeObject: IncludeObject;
}

interface Column {
  name: string;
  type: "string" | "integer" | "date";
  format?: string;
  description: string;
  priority?: number;
  cell: (o: Obj, now: number) => string | number;
  /** The value rows are ordered by, where it is not the cell's: a time shown as an age, a count shown with when. */
  order?: { as: "time" | "count"; value: (o: Obj) => number };
}

// Loose access to the fields the printers read; objects are arbitrary JSON.
// biome-ignore lint/suspicious/noExplicitAny: the printers read arbitrary JSON by path
type Obj = Record<string, any>;

const NONE = "<none>";

/** apimachinery `duration.HumanDuration`: `45s`, `3m20s`, `5h10m`, `4d3h`, `2y10d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  const days = Math.floor(hours / 24) % 365;
  if (hours < 24 * 365 * 8) return days === 0 ? `${years}y` : `${years}y${days}d`;
  return `${years}y`;
}

const since = (time: string | undefined, now: number): string => (time ? humanDuration(now - Date.parse(time)) : "<unknown>");

const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description:
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  cell: (o) => o.metadata?.name ?? "",
};

const AGE: Column = {
  name: "Age",
  type: "string",
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  cell: (o, now) => since(o.metadata?.creationTimestamp, now),
  // Youngest first, as the ages read.
  order: { as: "time", value: (o) => -timeOf(o.metadata?.creationTimestamp) },
};

/** A timestamp's milliseconds; 0 without one. */
const timeOf = (time: string | undefined): number => (time ? Date.parse(time) || 0 : 0);

/** The number a count cell begins with (`3 (5m ago)`: 3). */
const countOf = (cell: string | number): number => (typeof cell === "number" ? cell : Number.parseInt(cell, 10) || 0);

const col = (name: string, description: string, cell: Column["cell"], extra: Partial<Column> = {}): Column => ({ name, type: "string", description, cell, ...extra });

function podStatus(o: Obj): string {
  if (o.metadata?.deletionTimestamp) return "Terminating";
  let reason: string = o.status?.reason ?? o.status?.phase ?? "";
  for (const cs of o.status?.containerStatuses ?? []) {
    if (cs.state?.waiting?.reason) reason = cs.state.waiting.reason;
    else if (cs.state?.terminated?.reason) reason = cs.state.terminated.reason;
  }
  return reason;
}

function podRestarts(o: Obj, now: number): string {
  let restarts = 0;
  let last: string | undefined;
  for (const cs of o.status?.containerStatuses ?? []) {
    restarts += cs.restartCount ?? 0;
    const finished: string | undefined = cs.lastState?.terminated?.finishedAt;
    if (finished && (!last || finished > last)) last = finished;
  }
  return last && restarts > 0 ? `${restarts} (${since(last, now)} ago)` : String(restarts);
}

const containers = (o: Obj): Obj[] => o.spec?.template?.spec?.containers ?? [];
const selector = (o: Obj): string =>
  Object.entries(o.spec?.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(",") || NONE;
const wideWorkload = [
  col(
    "Containers",
    "Names of each container in the template.",
    (o) =>
      containers(o)
        .map((c) => c.name)
        .join(","),
    { priority: 1 },
  ),
  col(
    "Images",
    "Images referenced by each container in the template.",
    (o) =>
      containers(o)
        .map((c) => c.image)
        .join(","),
    { priority: 1 },
  ),
  col("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.", selector, { priority: 1 }),
];

/** Columns by `group/resource` (`/pods` for the core group). */
const COLUMNS: Record<string, Column[]> = {
  "/pods": [
    NAME,
    col("Ready", "The aggregate readiness state of this pod for accepting traffic.", (o) => {
      const statuses: Obj[] = o.status?.containerStatuses ?? [];
      return `${statuses.filter((c) => c.ready).length}/${(o.spec?.containers ?? []).length}`;
    }),
    col("Status", "The aggregate status of the containers in this pod.", podStatus),
    col("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", podRestarts, {
      order: { as: "count", value: (o) => countOf(podRestarts(o, 0)) },
    }),
    AGE,
    col("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", (o) => o.status?.podIP ?? NONE, { priority: 1 }),
    col(
      "Node",
      "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.",
      (o) => o.spec?.nodeName ?? NONE,
      { priority: 1 },
    ),
    col(
      "Nominated Node",
      "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
      (o) => o.status?.nominatedNodeName ?? NONE,
      { priority: 1 },
    ),
    col(
      "Readiness Gates",
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
      (o) => (o.spec?.readinessGates?.length ? String(o.spec.readinessGates.length) : NONE),
      { priority: 1 },
    ),
  ],
  "/namespaces": [NAME, col("Status", "The status of the namespace", (o) => o.status?.phase ?? ""), AGE],
  "/nodes": [
    NAME,
    col("Status", "The status of the node", (o) => {
      const ready = (o.status?.conditions ?? []).find((c: Obj) => c.type === "Ready");
      return (ready?.status === "True" ? "Ready" : "NotReady") + (o.spec?.unschedulable ? ",SchedulingDisabled" : "");
    }),
    col(
      "Roles",
      "The roles of the node",
      (o) =>
        Object.keys(o.metadata?.labels ?? {})
          .filter((l) => l.startsWith("node-role.kubernetes.io/"))
          .map((l) => l.slice(24))
          .join(",") || NONE,
    ),
    AGE,
    col("Version", "Kubelet Version reported by the node.", (o) => o.status?.nodeInfo?.kubeletVersion ?? ""),
    col(
      "Internal-IP",
      "List of addresses reachable to the node. Queried from cloud provider, if available.",
      (o) => (o.status?.addresses ?? []).find((a: Obj) => a.type === "InternalIP")?.address ?? NONE,
      { priority: 1 },
    ),
    col(
      "External-IP",
      "List of addresses reachable to the node. Queried from cloud provider, if available.",
      (o) => (o.status?.addresses ?? []).find((a: Obj) => a.type === "ExternalIP")?.address ?? NONE,
      { priority: 1 },
    ),
    col("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", (o) => o.status?.nodeInfo?.osImage ?? "", { priority: 1 }),
    col("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", (o) => o.status?.nodeInfo?.kernelVersion ?? "", { priority: 1 }),
    col("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", (o) => o.status?.nodeInfo?.containerRuntimeVersion ?? "", {
      priority: 1,
    }),
  ],
  "apps/deployments": [
    NAME,
    col("Ready", "Number of the pod with ready state", (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`),
    col("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", (o) => o.status?.updatedReplicas ?? 0, { type: "integer" }),
    col("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", (o) => o.status?.availableReplicas ?? 0, { type: "integer" }),
    AGE,
    ...wideWorkload,
  ],
  "apps/replicasets": [
    NAME,
    col("Desired", "Replicas is the number of desired replicas.", (o) => o.spec?.replicas ?? 0, { type: "integer" }),
    col("Current", "Replicas is the most recently observed number of replicas.", (o) => o.status?.replicas ?? 0, { type: "integer" }),
    col("Ready", "The number of ready replicas for this replica set.", (o) => o.status?.readyReplicas ?? 0, { type: "integer" }),
    AGE,
    ...wideWorkload,
  ],
  "/services": [
    NAME,
    col("Type", "type determines how the Service is exposed.", (o) => o.spec?.type ?? ""),
    col("Cluster-IP", "clusterIP is the IP address of the service.", (o) => o.spec?.clusterIP ?? NONE),
    col("External-IP", "List of IP addresses for which nodes in the cluster will also accept traffic for this service.", (o) => (o.spec?.externalIPs ?? []).join(",") || NONE),
    col(
      "Port(s)",
      "The list of ports that are exposed by this service.",
      (o) => (o.spec?.ports ?? []).map((p: Obj) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`).join(",") || NONE,
    ),
    AGE,
    col(
      "Selector",
      "Route service traffic to pods with label keys and values matching this selector.",
      (o) =>
        Object.entries(o.spec?.selector ?? {})
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(",") || NONE,
      { priority: 1 },
    ),
  ],
  "/configmaps": [NAME, col("Data", "Data contains the configuration data.", (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length, { type: "integer" }), AGE],
  "/secrets": [NAME, col("Type", "The type of the secret", (o) => o.type ?? ""), col("Data", "The number of entries in the secret", (o) => Object.keys(o.data ?? {}).length, { type: "integer" }), AGE],
  "/events": [
    col("Last Seen", "Time when last Event occurred", (o, now) => since(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp, now), {
      order: { as: "time", value: (o) => -timeOf(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp) },
    }),
    col("Type", "Type of this event.", (o) => o.type ?? ""),
    col("Reason", "Short, machine understandable string that gives the reason for this event being generated.", (o) => o.reason ?? ""),
    col("Object", "The object that this event is about.", (o) => `${String(o.involvedObject?.kind ?? "").toLowerCase()}/${o.involvedObject?.name ?? ""}`),
    col("Message", "A human-readable description of the status of this operation.", (o) => o.message ?? ""),
  ],
};

/** The cluster a merged key's object comes from. */
const CLUSTER = col("Cluster", "The cluster the object is in (a merged key's objects are named <cluster>:<name>).", (o) => o.metadata?.annotations?.[CLUSTER_ANNOTATION] ?? "");

function columnsOf(r: TableResource): Column[] {
  const columns = COLUMNS[`${r.group}/${r.resource}`] ?? [NAME, AGE];
  // Second, after the name: a view's first column is the name (`view.ts`).
  return r.cluster !== undefined && membersOf(r.cluster) ? [columns[0]!, CLUSTER, ...columns.slice(1)] : columns;
}

function row(columns: Column[], object: KubeObject, options: TableOptions, now: number) {
  const o = object as Obj;
  const cells = columns.map((c) => c.cell(o, now));
  if (options.includeObject === "None") return { cells, object: null };
  if (options.includeObject === "Object") return { cells, object };
  return { cells, object: { kind: "PartialObjectMetadata", apiVersion: `meta.k8s.io/${options.version}`, metadata: object.metadata ?? {} } };
}

const definitions = (columns: Column[]) => columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? "", description: c.description, priority: c.priority ?? 0 }));

/**
 * A Table of `objects`. `withHeaders: false` gives `columnDefinitions: null`, as in every
 * watch event after the first (apiserver `watchEmbeddedEncoder`).
 */
export function toTable(resource: TableResource, objects: readonly KubeObject[], metadata: object, options: TableOptions, withHeaders = true) {
  const now = Date.now();
  return { ...tableHead(resource, metadata, options, withHeaders), rows: objects.map((o) => tableRow(resource, o, options, now)) };
}

/**
 * A resource's Table columns, by name, with what their rows are ordered by (`orderValues`): text,
 * a number (a count, whatever else its cell says), or a time (an age): what a live view may sort
 * and filter by.
 */
export function columnsFor(resource: TableResource): Array<{ name: string; value: "text" | "number" | "time" }> {
  return columnsOf(resource).map((c) => ({ name: c.name, value: c.order?.as === "time" ? "time" : c.order || c.type === "integer" ? "number" : "text" }));
}

/** The values an object's row is ordered by, one per column (`columnsFor`): independent of the time it is asked. */
export function orderValues(resource: TableResource, object: KubeObject): Array<string | number | null> {
  const o = object as Obj;
  return columnsOf(resource).map((c) => {
    if (c.order) return c.order.value(o);
    const cell = c.cell(o, 0);
    return c.type === "integer" ? countOf(cell) : cell;
  });
}

/** A Table's fields but its rows: what a Table streamed a row at a time begins with. */
export function tableHead(resource: TableResource, metadata: object, options: TableOptions, withHeaders = true) {
  return { kind: "Table", apiVersion: `meta.k8s.io/${options.version}`, metadata, columnDefinitions: withHeaders ? definitions(columnsOf(resource)) : null };
}

/** One object's row, its cells as of `now`. */
export function tableRow(resource: TableResource, object: KubeObject, options: TableOptions, now: number) {
  return row(columnsOf(resource), object, options, now);
}

export function tableOptions(version: TableOptions["version"], query: URLSearchParams): TableOptions {
  const include = query.get("includeObject");
  return { version, includeObject: include === "None" || include === "Object" ? include : "Metadata" };
}
