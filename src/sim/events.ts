/**
 * @module
 * The Events a cluster records about what churn does to pods, as `v1` Events read them: the
 * scheduler's `Scheduled` (written through events.k8s.io/v1, so `eventTime`, `action` and the
 * reporting controller, and no count or first/last timestamps), and the kubelet's `Pulling`,
 * `Pulled`, `Created`, `Started`, `Killing`, `BackOff` and `Unhealthy` (client-go's legacy
 * recorder: `source`, `count`, `firstTimestamp`/`lastTimestamp`; a repeat of the same reason
 * and message about the same object is the same Event, its count raised, as the recorder's
 * correlator aggregates them). Events expire as the API server's `--event-ttl` (an hour) has
 * them, and a namespace keeps at most its newest `PER_NAMESPACE`, so a churning demo stays
 * bounded.
 */
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import { metaNamespaceKey } from "../k8s/key.ts";
import type { KubeObject } from "../k8s/types.ts";
import { timestamp } from "./meta.ts";
import type { Random } from "./random.ts";
import { resourceByName } from "./resources.ts";
import type { Store } from "./store.ts";

const EVENTS = resourceByName("events");

/** The API server's default `--event-ttl`. */
export const EVENT_TTL_MS = 60 * 60_000;
/** Events a namespace keeps at most: the newest by their last occurrence. */
export const PER_NAMESPACE = 200;

/** The control-plane node the scheduler runs on (the seeded cluster's first node). */
const SCHEDULER_HOST = "sim-node-1";

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, "000Z");

/** What an Event is about: the pod (and one of its containers), at the pod's resourceVersion then. */
function involvedObject(pod: Pod, container?: Container): Record<string, string> {
  const meta = pod.metadata ?? {};
  return {
    kind: "Pod",
    namespace: meta.namespace ?? "",
    name: meta.name ?? "",
    uid: meta.uid ?? "",
    apiVersion: "v1",
    resourceVersion: meta.resourceVersion ?? "",
    ...(container ? { fieldPath: `spec.containers{${container.name}}` } : {}),
  };
}

export class EventRecorder {
  readonly #store: Store;
  readonly #rng: Random;
  /** Per namespace, the Events' keys by when each last happened, oldest first. */
  readonly #byNamespace = new Map<string, Map<string, number>>();
  /** The kubelet's correlator: an Event's name by what it says about which object. */
  readonly #names = new Map<string, string>();
  /** Images each node has pulled: a second pod of the image finds it present. */
  readonly #pulled = new Set<string>();
  #sequence = 0;

  constructor(store: Store, rng: Random) {
    this.#store = store;
    this.#rng = rng;
    // Events already stored (the seed's) age out like any other.
    const stored = [...store.objects(EVENTS)].map(([key, event]) => ({ key, namespace: event.metadata?.namespace ?? "", last: lastOf(event) }));
    for (const { key, namespace, last } of stored.sort((a, b) => a.last - b.last)) this.#touch(namespace, key, last);
  }

  /** The scheduler bound a new pod to its node. */
  scheduled(pod: Pod, nowMs: number): void {
    const { namespace = "", name = "" } = pod.metadata ?? {};
    this.#put(namespace, {
      kind: "Event",
      apiVersion: "v1",
      metadata: { name: this.#name(name, nowMs), namespace, uid: this.#rng.uuid(), creationTimestamp: timestamp(nowMs) },
      involvedObject: involvedObject(pod),
      reason: "Scheduled",
      message: `Successfully assigned ${namespace}/${name} to ${pod.spec?.nodeName ?? ""}`,
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      type: "Normal",
      eventTime: microTime(nowMs),
      action: "Binding",
      reportingComponent: "default-scheduler",
      reportingInstance: `default-scheduler-${SCHEDULER_HOST}`,
    });
  }

  /** The kubelet started the pod's containers: the image pulled (or found present), each container created and started. */
  started(pod: Pod, nowMs: number): void {
    const node = pod.spec?.nodeName ?? "";
    for (const container of pod.spec?.containers ?? []) {
      const image = container.image ?? "";
      if (this.#pulled.has(`${node} ${image}`)) {
        this.#kubelet(pod, container, "Normal", "Pulled", `Container image "${image}" already present on machine`, nowMs);
      } else {
        this.#pulled.add(`${node} ${image}`);
        const seconds = (this.#rng.between(400, 9000) / 1000).toFixed(3);
        this.#kubelet(pod, container, "Normal", "Pulling", `Pulling image "${image}"`, nowMs);
        this.#kubelet(
          pod,
          container,
          "Normal",
          "Pulled",
          `Successfully pulled image "${image}" in ${seconds}s (${seconds}s including waiting). Image size: ${this.#rng.between(8, 180) * 1_048_576} bytes.`,
          nowMs,
        );
      }
      this.#kubelet(pod, container, "Normal", "Created", `Created container: ${container.name}`, nowMs);
      this.#kubelet(pod, container, "Normal", "Started", `Started container ${container.name}`, nowMs);
    }
  }

  /** A container exited and the kubelet restarted it after a back-off. */
  restarted(pod: Pod, nowMs: number): void {
    const { namespace = "", name = "", uid = "" } = pod.metadata ?? {};
    for (const container of pod.spec?.containers ?? []) {
      this.#kubelet(pod, container, "Warning", "BackOff", `Back-off restarting failed container ${container.name} in pod ${name}_${namespace}(${uid})`, nowMs);
      this.#kubelet(pod, container, "Normal", "Pulled", `Container image "${container.image ?? ""}" already present on machine`, nowMs);
      this.#kubelet(pod, container, "Normal", "Created", `Created container: ${container.name}`, nowMs);
      this.#kubelet(pod, container, "Normal", "Started", `Started container ${container.name}`, nowMs);
    }
  }

  /** A readiness probe failed. */
  unready(pod: Pod, nowMs: number): void {
    for (const container of pod.spec?.containers ?? []) {
      const probe = container.readinessProbe?.httpGet;
      const message = probe ? "Readiness probe failed: HTTP probe failed with statuscode: 503" : "Readiness probe failed: container is not ready";
      this.#kubelet(pod, container, "Warning", "Unhealthy", message, nowMs);
    }
  }

  /** Graceful deletion began: the kubelet stops the containers. */
  killing(pod: Pod, nowMs: number): void {
    for (const container of pod.spec?.containers ?? []) this.#kubelet(pod, container, "Normal", "Killing", `Stopping container ${container.name}`, nowMs);
  }

  /** Delete the Events past their TTL. */
  expire(nowMs: number): void {
    for (const [namespace, keys] of this.#byNamespace) {
      for (const [key, last] of keys) {
        if (nowMs - last < EVENT_TTL_MS) break;
        this.#delete(namespace, key);
      }
    }
  }

  /** What client-go's recorder writes for the kubelet: a new Event, or the same one again with its count raised. */
  #kubelet(pod: Pod, container: Container, type: "Normal" | "Warning", reason: string, message: string, nowMs: number): void {
    const involved = involvedObject(pod, container);
    const namespace = involved.namespace ?? "";
    const correlation = JSON.stringify([involved.uid, involved.fieldPath, type, reason, message]);
    const existing = this.#names.get(correlation);
    const current = existing === undefined ? undefined : this.#store.get(EVENTS, metaNamespaceKey(namespace, existing));
    if (current) {
      this.#put(namespace, { ...current, lastTimestamp: timestamp(nowMs), count: ((current.count as number | undefined) ?? 1) + 1 });
      return;
    }
    const name = this.#name(involved.name ?? "", nowMs);
    this.#names.set(correlation, name);
    const at = timestamp(nowMs);
    const node = pod.spec?.nodeName ?? "";
    this.#put(namespace, {
      kind: "Event",
      apiVersion: "v1",
      metadata: { name, namespace, uid: this.#rng.uuid(), creationTimestamp: at },
      involvedObject: involved,
      reason,
      message,
      source: { component: "kubelet", host: node },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: "kubelet",
      reportingInstance: node,
    });
  }

  /** client-go's name for an Event: the object's name and the time in nanoseconds, in hex (unique here by a sequence). */
  #name(object: string, nowMs: number): string {
    return `${object}.${(BigInt(nowMs) * 1_000_000n + BigInt(this.#sequence++ % 1_000_000)).toString(16)}`;
  }

  #put(namespace: string, event: KubeObject): void {
    const key = metaNamespaceKey(namespace, event.metadata?.name ?? "");
    this.#store.put(EVENTS, key, event);
    this.#touch(namespace, key, lastOf(event));
    const keys = this.#byNamespace.get(namespace);
    while (keys && keys.size > PER_NAMESPACE) this.#delete(namespace, keys.keys().next().value as string);
  }

  #touch(namespace: string, key: string, last: number): void {
    let keys = this.#byNamespace.get(namespace);
    if (!keys) this.#byNamespace.set(namespace, (keys = new Map()));
    keys.delete(key);
    keys.set(key, last);
  }

  #delete(namespace: string, key: string): void {
    this.#byNamespace.get(namespace)?.delete(key);
    const name = key.slice(namespace.length + 1);
    for (const [correlation, named] of this.#names) if (named === name) this.#names.delete(correlation);
    this.#store.remove(EVENTS, key);
  }
}

/** When an Event last happened: its `lastTimestamp`, or (events.k8s.io) its `eventTime`. */
function lastOf(event: KubeObject): number {
  const at = (event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp) as string | undefined;
  return at ? Date.parse(at) : 0;
}
