/**
 * @module
 * `metrics.k8s.io/v1beta1`, as metrics-server serves it: `NodeMetrics` and `PodMetrics`,
 * get and list only (a watch is the generic API server's 405), made on each request from the
 * store's nodes and running pods. Usage is plausible and follows them: each container uses a
 * share of its requests that drifts every scrape interval, deterministically from its pod's uid,
 * and a node uses what its pods use plus the system's own.
 */
import { fnv1a64 } from "../k8s/shard.ts";
import type { KubeObject } from "../k8s/types.ts";
import { requestFilter } from "./filter.ts";
import { timestamp } from "./meta.ts";
import { findResource, METRICS, type ApiResource } from "./resources.ts";
import type { Store } from "./store.ts";

const API_VERSION = "metrics.k8s.io/v1beta1";

export const findMetricsResource = (group: string, version: string, resource: string): ApiResource | undefined =>
  METRICS.find((r) => r.group === group && r.version === version && r.resource === resource);

/** How often metrics-server scrapes kubelets: usage moves once per interval. */
const SCRAPE_MS = 15_000;
const WINDOW = "15.012s";
const SYSTEM = { nanocores: 180_000_000, kibibytes: 1_100_000 };

const POD_DEF = findResource("", "v1", "pods");
const NODE_DEF = findResource("", "v1", "nodes");

/** A number in [0, 1) from `seed`, fixed for one scrape interval. */
function share(seed: string, now: number): number {
  return Number.parseInt(fnv1a64(`${seed}/${Math.floor(now / SCRAPE_MS)}`).slice(0, 8), 16) / 0x100000000;
}

/** Millicores or a memory size (`100m`, `128Mi`) in nanocores or KiB. */
function quantity(value: unknown, unit: "nanocores" | "kibibytes", fallback: number): number {
  const m = typeof value === "string" ? /^([0-9.]+)(m|Ki|Mi|Gi)?$/.exec(value) : null;
  if (!m) return fallback;
  const n = Number(m[1]);
  if (unit === "nanocores") return m[2] === "m" ? n * 1_000_000 : n * 1_000_000_000;
  return m[2] === "Gi" ? n * 1024 * 1024 : m[2] === "Mi" ? n * 1024 : m[2] === "Ki" ? n : n / 1024;
}

interface Usage {
  nanocores: number;
  kibibytes: number;
}

const usageOf = (u: Usage) => ({ cpu: `${Math.round(u.nanocores)}n`, memory: `${Math.round(u.kibibytes)}Ki` });

/** Each container's usage: a drifting share of what it requests. */
function containerUsage(pod: KubeObject, now: number): Array<{ name: string; usage: Usage }> {
  const containers = ((pod.spec as { containers?: Array<{ name?: string; resources?: { requests?: Record<string, string> } }> } | undefined)?.containers ?? []).filter((c) => c.name);
  return containers.map((c) => {
    const seed = `${pod.metadata?.uid}/${c.name}`;
    return {
      name: c.name as string,
      usage: {
        nanocores: quantity(c.resources?.requests?.cpu, "nanocores", 50_000_000) * (0.05 + 0.9 * share(`${seed}/cpu`, now)),
        kibibytes: quantity(c.resources?.requests?.memory, "kibibytes", 65_536) * (0.4 + 0.5 * share(`${seed}/memory`, now)),
      },
    };
  });
}

/** A resource's objects in key order, as lists are. */
const sorted = (objects: ReadonlyMap<string, KubeObject>): KubeObject[] => [...objects.keys()].sort().map((k) => objects.get(k) as KubeObject);

const runningPods = (store: Store): KubeObject[] => (POD_DEF ? sorted(store.objects(POD_DEF)).filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Running") : []);

const metadataOf = (object: KubeObject) => {
  const meta = object.metadata ?? {};
  return { name: meta.name, ...(meta.namespace ? { namespace: meta.namespace } : {}), creationTimestamp: timestamp(Date.now()), ...(meta.labels ? { labels: meta.labels } : {}) };
};

/** The metrics of the pods or nodes a request's namespace and selectors select (as metrics-server matches them: on the pods and nodes themselves), in key order. */
export function metricsItems(store: Store, resource: ApiResource, namespace: string | undefined, query: URLSearchParams, now = Date.now()): KubeObject[] {
  const at = timestamp(now - SCRAPE_MS / 2);
  if (resource.resource === "pods") {
    if (!POD_DEF) return [];
    const filter = requestFilter(POD_DEF, namespace, query);
    return runningPods(store)
      .filter((pod) => filter.matches(pod))
      .map((pod) => ({ metadata: metadataOf(pod), timestamp: at, window: WINDOW, containers: containerUsage(pod, now).map((c) => ({ name: c.name, usage: usageOf(c.usage) })) }));
  }
  const byNode = new Map<string, Usage>();
  for (const pod of runningPods(store)) {
    const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!node) continue;
    const sum = byNode.get(node) ?? { nanocores: 0, kibibytes: 0 };
    for (const c of containerUsage(pod, now)) {
      sum.nanocores += c.usage.nanocores;
      sum.kibibytes += c.usage.kibibytes;
    }
    byNode.set(node, sum);
  }
  if (!NODE_DEF) return [];
  const filter = requestFilter(NODE_DEF, undefined, query);
  return sorted(store.objects(NODE_DEF))
    .filter((node) => filter.matches(node))
    .map((node) => {
      const pods = byNode.get(node.metadata?.name ?? "") ?? { nanocores: 0, kibibytes: 0 };
      const drift = share(`${node.metadata?.uid}/system`, now);
      const usage = { nanocores: pods.nanocores + SYSTEM.nanocores * (0.8 + 0.4 * drift), kibibytes: pods.kibibytes + SYSTEM.kibibytes * (0.9 + 0.2 * drift) };
      return { metadata: metadataOf(node), timestamp: at, window: WINDOW, usage: usageOf(usage) };
    });
}

/** The list metrics-server answers: no resourceVersion, items in key order. */
export const metricsList = (resource: ApiResource, items: KubeObject[]) => ({ kind: `${resource.kind}List`, apiVersion: API_VERSION, metadata: {}, items });

/** One object's metrics, as a get answers it (kind and apiVersion set). */
export const metricsObject = (resource: ApiResource, item: KubeObject): KubeObject => ({ kind: resource.kind, apiVersion: API_VERSION, ...item });
