/**
 * @module
 * What the page can show: the resources in its picker, their collection paths, and the STATUS
 * column for each kind, in the spirit of `kubectl get`'s.
 */
import type { Deployment, ReplicaSet } from "kubernetes-types/apps/v1.js";
import type { ConfigMap, Event, Namespace, Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { KubeResource } from "../index.ts";

/** How a status reads at a glance. */
export type Tone = "ok" | "warn" | "bad" | "none";

export interface StatusCell {
  text: string;
  tone: Tone;
}

export interface Resource {
  /** The picker's value and the page's `?resource=`. */
  id: string;
  label: string;
  /** Singular, lower case, for counts: `34 pods`. */
  noun: string;
  group: string;
  version: string;
  namespaced: boolean;
  /** Takes the kind's own type (`Pod`, `Node`, ...): methods are checked bivariantly. */
  status(object: KubeResource): StatusCell;
}

const BAD = /Err|BackOff|Failed|Error|OOMKilled|NotReady|Unknown|Evicted/;
const WARN = /Pending|Creating|Terminating|Initializing|Init:|ContainerStatusUnknown/;

function tone(text: string): Tone {
  if (BAD.test(text)) return "bad";
  if (WARN.test(text)) return "warn";
  return "ok";
}

/** kubectl's STATUS for a pod: a container's waiting/terminated reason, else the phase; Terminating when deleting. */
function podStatus(pod: Pod): StatusCell {
  const containers = pod.status?.containerStatuses ?? [];
  const ready = containers.filter((c) => c.ready).length;
  const total = pod.spec?.containers?.length ?? containers.length;
  let reason = pod.status?.reason ?? pod.status?.phase ?? "Unknown";
  for (const c of containers) reason = c.state?.waiting?.reason ?? c.state?.terminated?.reason ?? reason;
  if (pod.metadata?.deletionTimestamp) reason = "Terminating";
  const text = `${reason} · ${ready}/${total}`;
  return { text, tone: reason === "Running" && ready < total ? "warn" : tone(reason) };
}

function replicas(ready: number | undefined, wanted: number | undefined): StatusCell {
  const text = `${ready ?? 0}/${wanted ?? 1} ready`;
  return { text, tone: (ready ?? 0) === (wanted ?? 1) ? "ok" : "warn" };
}

function nodeStatus(node: Node): StatusCell {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  const text = (ready ? "Ready" : "NotReady") + (node.spec?.unschedulable ? ",SchedulingDisabled" : "");
  return { text, tone: ready ? (node.spec?.unschedulable ? "warn" : "ok") : "bad" };
}

function eventStatus(event: Event): StatusCell {
  const about = event.involvedObject ? `${event.involvedObject.kind}/${event.involvedObject.name}` : "";
  return { text: `${event.reason ?? ""} ${about}: ${event.message ?? ""}`.trim(), tone: event.type === "Warning" ? "warn" : "none" };
}

export const RESOURCES: readonly Resource[] = [
  { id: "pods", noun: "pod", label: "Pods", group: "", version: "v1", namespaced: true, status: podStatus },
  { id: "deployments", noun: "deployment", label: "Deployments", group: "apps", version: "v1", namespaced: true, status: (d: Deployment) => replicas(d.status?.readyReplicas, d.spec?.replicas) },
  { id: "replicasets", noun: "replicaset", label: "ReplicaSets", group: "apps", version: "v1", namespaced: true, status: (r: ReplicaSet) => replicas(r.status?.readyReplicas, r.spec?.replicas) },
  {
    id: "services",
    noun: "service",
    label: "Services",
    group: "",
    version: "v1",
    namespaced: true,
    status: (s: Service) => ({ text: `${s.spec?.type ?? "ClusterIP"} ${s.spec?.clusterIP ?? ""}`.trim(), tone: "none" }),
  },
  {
    id: "configmaps",
    noun: "configmap",
    label: "ConfigMaps",
    group: "",
    version: "v1",
    namespaced: true,
    status: (c: ConfigMap) => ({ text: `${Object.keys(c.data ?? {}).length} keys`, tone: "none" }),
  },
  { id: "events", noun: "event", label: "Events", group: "", version: "v1", namespaced: true, status: eventStatus },
  { id: "nodes", noun: "node", label: "Nodes", group: "", version: "v1", namespaced: false, status: nodeStatus },
  {
    id: "namespaces",
    noun: "namespace",
    label: "Namespaces",
    group: "",
    version: "v1",
    namespaced: false,
    status: (n: Namespace) => ({ text: n.status?.phase ?? "", tone: tone(n.status?.phase ?? "") }),
  },
];

export const resourceById = (id: string | null): Resource => RESOURCES.find((r) => r.id === id) ?? (RESOURCES[0] as Resource);

/** The collection path: `/api/v1/namespaces/team-a/pods`, `/apis/apps/v1/deployments`. */
export function collectionPath(resource: Resource, namespace: string): string {
  const base = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  return resource.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.id}` : `${base}/${resource.id}`;
}
