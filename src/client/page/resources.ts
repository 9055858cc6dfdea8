/**
 * @module
 * What the page can show: the resources in its picker and their collection paths, and how a
 * status reads at a glance. Their columns are the relay's Tables', as `kubectl get` prints them.
 */

/** How a status reads at a glance. */
export type Tone = "ok" | "warn" | "bad";

export interface Resource {
  /** The picker's value and the page's `?resource=`. */
  id: string;
  label: string;
  /** Singular, lower case, for counts: `34 pods`. */
  noun: string;
  group: string;
  version: string;
  namespaced: boolean;
}

const BAD = /Err|BackOff|Failed|Error|OOMKilled|NotReady|Unknown|Evicted/;
const WARN = /Pending|Creating|Terminating|Initializing|Init:|ContainerStatusUnknown|SchedulingDisabled/;

/**
 * The tone of a cell: a Status by what it says (`Running`, `CrashLoopBackOff`, `NotReady`), a
 * Ready count by whether all are (`1/1`, `0/1`); other cells have none.
 */
export function toneOf(column: string, text: string): Tone | undefined {
  if (column === "Status") return BAD.test(text) ? "bad" : WARN.test(text) ? "warn" : "ok";
  const ready = column === "Ready" ? /^(\d+)\/(\d+)$/.exec(text) : null;
  return ready ? (ready[1] === ready[2] ? "ok" : "warn") : undefined;
}

export const RESOURCES: readonly Resource[] = [
  { id: "pods", noun: "pod", label: "Pods", group: "", version: "v1", namespaced: true },
  { id: "deployments", noun: "deployment", label: "Deployments", group: "apps", version: "v1", namespaced: true },
  { id: "replicasets", noun: "replicaset", label: "ReplicaSets", group: "apps", version: "v1", namespaced: true },
  { id: "services", noun: "service", label: "Services", group: "", version: "v1", namespaced: true },
  { id: "configmaps", noun: "configmap", label: "ConfigMaps", group: "", version: "v1", namespaced: true },
  { id: "events", noun: "event", label: "Events", group: "", version: "v1", namespaced: true },
  { id: "nodes", noun: "node", label: "Nodes", group: "", version: "v1", namespaced: false },
  { id: "namespaces", noun: "namespace", label: "Namespaces", group: "", version: "v1", namespaced: false },
];

export const resourceById = (id: string | null): Resource => RESOURCES.find((r) => r.id === id) ?? (RESOURCES[0] as Resource);

/** The collection path: `/api/v1/namespaces/team-a/pods`, `/apis/apps/v1/deployments`. */
export function collectionPath(resource: Resource, namespace: string): string {
  const base = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  return resource.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.id}` : `${base}/${resource.id}`;
}
