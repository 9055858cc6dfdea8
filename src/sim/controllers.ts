/**
 * @module
 * The controllers that keep workloads consistent, when the simulator runs them (`controllers`):
 * the deployment controller (a ReplicaSet per pod template, named by its `pod-template-hash`;
 * a new template rolls: the new ReplicaSet gets the replicas, old ones give theirs up as new
 * pods become available), the ReplicaSet controller (pods made from its template until it has
 * `spec.replicas`, the surplus deleted gracefully), a scheduler and kubelet (a pod made through
 * the API lands on a node, and a pending pod starts a moment later), and the statuses that
 * follow the pods (replicas, ready, available, updated, observedGeneration, conditions). They
 * react to the store's events in a microtask after the write (never inside the store's
 * notification, which would reorder events) and write only what changed. Deletion cascades are
 * the writes' (`writes.ts`), with or without controllers.
 */
import type { Pod } from "kubernetes-types/core/v1.js";
import type { KubeObject } from "../k8s/types.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import { copyObject, timestamp } from "./meta.ts";
import { isTerminating, markTerminating, startPod, type NodeRef } from "./pods.ts";
import { NAME_ALPHABET, type Random } from "./random.ts";
import { resourceByName } from "./resources.ts";
import type { EventRecorder } from "./events.ts";
import type { Store, StoredEvent } from "./store.ts";

const PODS = resourceByName("pods");
const REPLICA_SETS = resourceByName("replicasets");
const DEPLOYMENTS = resourceByName("deployments");

/** How long a container takes to start (ms), and a terminating pod to go. */
const START_MS: readonly [number, number] = [800, 2000];
const GRACE_MS = 1000;

const HASH_LABEL = "pod-template-hash";
const REVISION = "deployment.kubernetes.io/revision";

type Meta = NonNullable<KubeObject["metadata"]>;
type Workload = KubeObject & {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> }; template?: { metadata?: Meta; spec?: Record<string, unknown> } };
  status?: Record<string, unknown>;
};

/** JSON with sorted keys, so equal templates compare equal whatever order their fields came in. */
const canonical = (value: unknown): string => {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(value));
};

/** FNV-1a of the template, spelled as the controller spells it (`rand.SafeEncodeString`). */
function templateHash(template: unknown): string {
  let hash = 0x811c9dc5;
  for (const c of canonical(template)) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return [...String(hash)].map((d) => NAME_ALPHABET[d.charCodeAt(0) % NAME_ALPHABET.length]).join("");
}

const ownerOf = (object: KubeObject, kind: string) => object.metadata?.ownerReferences?.find((o) => o.kind === kind && o.controller);
const isReady = (pod: KubeObject): boolean => (pod as Pod).status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Whether a ReplicaSet runs a Deployment's template, its hash label aside (the controller's `EqualIgnoreHash`). */
function sameTemplate(rs: Workload, deployment: Workload): boolean {
  const template = rs.spec?.template ?? {};
  const { [HASH_LABEL]: _, ...labels } = template.metadata?.labels ?? {};
  return canonical({ ...template, metadata: { ...template.metadata, labels } }) === canonical(deployment.spec?.template ?? {});
}

export class Controllers {
  readonly #store: Store;
  readonly #rng: Random;
  readonly #nodes: readonly NodeRef[];
  readonly #queue = new Map<string, { def: typeof PODS; key: string }>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #unsubscribe: () => void;
  /** The Events the scheduler and the kubelet record about the pods started here, while they are on. */
  readonly #events: { recorder: EventRecorder; on: () => boolean } | undefined;
  #flushing = false;
  #closed = false;

  constructor(store: Store, rng: Random, nodes: readonly NodeRef[], events?: { recorder: EventRecorder; on: () => boolean }) {
    this.#store = store;
    this.#rng = rng;
    this.#nodes = nodes;
    this.#events = events;
    this.#unsubscribe = store.subscribe((event) => this.#observe(event));
    for (const key of store.objects(DEPLOYMENTS).keys()) this.#enqueue(DEPLOYMENTS, key);
    for (const key of store.objects(REPLICA_SETS).keys()) this.#enqueue(REPLICA_SETS, key);
  }

  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  #observe(event: StoredEvent): void {
    const { resource, object } = event;
    const namespace = object.metadata?.namespace;
    if (resource === DEPLOYMENTS) this.#enqueue(DEPLOYMENTS, event.key);
    else if (resource === REPLICA_SETS) {
      this.#enqueue(REPLICA_SETS, event.key);
      const owner = ownerOf(object, "Deployment");
      if (owner) this.#enqueue(DEPLOYMENTS, metaNamespaceKey(namespace, owner.name));
    } else if (resource === PODS) {
      const owner = ownerOf(object, "ReplicaSet");
      if (owner) this.#enqueue(REPLICA_SETS, metaNamespaceKey(namespace, owner.name));
      // The default scheduler's: a pod that names another scheduler waits for that one, as in a cluster.
      const scheduler = (object as Pod).spec?.schedulerName ?? "default-scheduler";
      if (event.type === "ADDED" && !(object as Pod).status?.containerStatuses && scheduler === "default-scheduler") this.#enqueue(PODS, event.key);
    }
  }

  #enqueue(def: typeof PODS, key: string): void {
    if (this.#closed) return;
    this.#queue.set(`${def.id}|${key}`, { def, key });
    if (this.#queue.size === 1 && !this.#flushing) queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    if (this.#closed || this.#flushing) return;
    this.#flushing = true;
    try {
      // Each write may queue more work; a consistent state queues none.
      for (let round = 0; this.#queue.size > 0 && round < 10_000; round++) {
        const [id, item] = this.#queue.entries().next().value as [string, { def: typeof PODS; key: string }];
        this.#queue.delete(id);
        if (item.def === DEPLOYMENTS) this.#deployment(item.key);
        else if (item.def === REPLICA_SETS) this.#replicaSet(item.key);
        else this.#schedule(item.key);
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** The objects of `def` in `namespace` that `uid` controls. */
  #owned(def: typeof PODS, namespace: string, uid: string | undefined): Array<[string, KubeObject]> {
    const out: Array<[string, KubeObject]> = [];
    for (const [key, object] of this.#store.objects(def)) {
      if (key.startsWith(`${namespace}/`) && object.metadata?.ownerReferences?.some((o) => o.uid === uid && o.controller)) out.push([key, object]);
    }
    return out;
  }

  #deployment(key: string): void {
    const deployment = this.#store.get(DEPLOYMENTS, key) as Workload | undefined;
    if (!deployment || deployment.metadata?.deletionTimestamp) return;
    const meta = deployment.metadata ?? {};
    const namespace = meta.namespace ?? "";
    const desired = deployment.spec?.replicas ?? 1;
    const hash = templateHash(deployment.spec?.template ?? {});
    const owned = this.#owned(REPLICA_SETS, namespace, meta.uid) as Array<[string, Workload]>;
    const revisionOf = (rs: Workload) => Number(rs.metadata?.annotations?.[REVISION] ?? 0);
    let current = owned.find(([, rs]) => sameTemplate(rs, deployment));
    if (!current) current = this.#newReplicaSet(deployment, hash, Math.max(0, ...owned.map(([, rs]) => revisionOf(rs))) + 1);
    const [currentKey, newRs] = current;
    if (newRs.spec?.replicas !== desired) this.#setReplicas(currentKey, newRs, desired);
    // Old ReplicaSets keep what the new one cannot yet serve, newest first, and give up the rest.
    let old = Math.max(0, desired - Number(newRs.status?.availableReplicas ?? 0));
    for (const [rsKey, rs] of owned.filter(([k]) => k !== currentKey).sort(([, a], [, b]) => revisionOf(b) - revisionOf(a))) {
      const keep = Math.min(old, rs.spec?.replicas ?? 0);
      old -= keep;
      if (rs.spec?.replicas !== keep) this.#setReplicas(rsKey, rs, keep);
    }
    const all = this.#owned(REPLICA_SETS, namespace, meta.uid).map(([, rs]) => (rs.status ?? {}) as Record<string, number>);
    const sum = (field: string) => all.reduce((n, s) => n + (s[field] ?? 0), 0);
    const updated = Number((this.#store.get(REPLICA_SETS, currentKey) as Workload | undefined)?.status?.replicas ?? 0);
    const available = sum("availableReplicas");
    const complete = updated === desired && sum("replicas") === desired && available === desired;
    const previous = (deployment.status?.conditions ?? []) as Array<Record<string, string>>;
    const condition = (type: string, status: boolean, reason: string, message: string) => {
      const before = previous.find((c) => c.type === type);
      const value = status ? "True" : "False";
      const now = timestamp(Date.now());
      const changed = before?.status !== value || before?.reason !== reason;
      return {
        type,
        status: value,
        lastUpdateTime: changed ? now : (before?.lastUpdateTime ?? now),
        lastTransitionTime: before?.status === value ? (before.lastTransitionTime ?? now) : now,
        reason,
        message,
      };
    };
    const rsName = newRs.metadata?.name;
    const status = {
      observedGeneration: meta.generation ?? 1,
      replicas: sum("replicas"),
      updatedReplicas: updated,
      readyReplicas: sum("readyReplicas"),
      availableReplicas: available,
      ...(desired > available ? { unavailableReplicas: desired - available } : {}),
      conditions: [
        available >= desired
          ? condition("Available", true, "MinimumReplicasAvailable", "Deployment has minimum availability.")
          : condition("Available", false, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
        complete
          ? condition("Progressing", true, "NewReplicaSetAvailable", `ReplicaSet "${rsName}" has successfully progressed.`)
          : condition("Progressing", true, "ReplicaSetUpdated", `ReplicaSet "${rsName}" is progressing.`),
      ],
    };
    const revision = newRs.metadata?.annotations?.[REVISION] ?? "1";
    const withoutTimes = (s: unknown) => JSON.stringify(s, (k, v) => (k === "lastUpdateTime" || k === "lastTransitionTime" ? undefined : v));
    if (withoutTimes(status) === withoutTimes(deployment.status) && meta.annotations?.[REVISION] === revision) return;
    this.#store.put(DEPLOYMENTS, key, { ...deployment, metadata: { ...meta, annotations: { ...meta.annotations, [REVISION]: revision } }, status });
  }

  #newReplicaSet(deployment: Workload, hash: string, revision: number): [string, Workload] {
    const meta = deployment.metadata ?? {};
    const template = copyObject(deployment.spec?.template ?? {});
    const labels = { ...template.metadata?.labels, [HASH_LABEL]: hash };
    const name = `${meta.name}-${hash}`;
    const replicaSet: Workload = {
      kind: "ReplicaSet",
      apiVersion: "apps/v1",
      metadata: {
        name,
        namespace: meta.namespace,
        uid: this.#rng.uuid(),
        generation: 1,
        creationTimestamp: timestamp(Date.now()),
        labels,
        annotations: { "deployment.kubernetes.io/desired-replicas": String(deployment.spec?.replicas ?? 1), [REVISION]: String(revision) },
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: meta.name ?? "", uid: meta.uid ?? "", controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 0, selector: { matchLabels: { ...deployment.spec?.selector?.matchLabels, [HASH_LABEL]: hash } }, template: { ...template, metadata: { ...template.metadata, labels } } },
      status: { replicas: 0, observedGeneration: 1 },
    };
    const key = metaNamespaceKey(meta.namespace, name);
    return [key, this.#store.put(REPLICA_SETS, key, replicaSet).object as Workload];
  }

  #setReplicas(key: string, rs: Workload, replicas: number): void {
    const meta = rs.metadata ?? {};
    this.#store.put(REPLICA_SETS, key, { ...rs, metadata: { ...meta, generation: (meta.generation ?? 1) + 1 }, spec: { ...rs.spec, replicas } });
  }

  #replicaSet(key: string): void {
    const rs = this.#store.get(REPLICA_SETS, key) as Workload | undefined;
    if (!rs) return;
    const meta = rs.metadata ?? {};
    const namespace = meta.namespace ?? "";
    const pods = this.#owned(PODS, namespace, meta.uid);
    const active = pods.filter(([, p]) => !isTerminating(p as Pod));
    const desired = rs.spec?.replicas ?? 1;
    for (let i = active.length; i < desired; i++) this.#createPod(rs);
    if (active.length > desired) {
      // The surplus goes, the least far along first: not ready, then the youngest.
      const surplus = [...active].sort(([, a], [, b]) => Number(isReady(a)) - Number(isReady(b)) || String(b.metadata?.creationTimestamp).localeCompare(String(a.metadata?.creationTimestamp)));
      for (const [podKey] of surplus.slice(0, active.length - desired)) this.#terminate(podKey);
    }
    const now = this.#owned(PODS, namespace, meta.uid).filter(([, p]) => !isTerminating(p as Pod));
    const ready = now.filter(([, p]) => isReady(p)).length;
    const status = { replicas: now.length, fullyLabeledReplicas: now.length, readyReplicas: ready, availableReplicas: ready, observedGeneration: meta.generation ?? 1 };
    if (sameJson(status, rs.status)) return;
    this.#store.put(REPLICA_SETS, key, { ...(this.#store.get(REPLICA_SETS, key) ?? rs), status });
  }

  #createPod(rs: Workload): void {
    const meta = rs.metadata ?? {};
    const template = copyObject(rs.spec?.template ?? {});
    const node = this.#rng.pick(this.#nodes);
    let name = "";
    do name = `${meta.name}-${this.#rng.string(NAME_ALPHABET, 5)}`;
    while (this.#store.get(PODS, metaNamespaceKey(meta.namespace, name)));
    const pod: Pod = {
      kind: "Pod",
      apiVersion: "v1",
      metadata: {
        name,
        generateName: `${meta.name}-`,
        namespace: meta.namespace,
        uid: this.#rng.uuid(),
        creationTimestamp: timestamp(Date.now()),
        labels: template.metadata?.labels ?? {},
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: meta.name ?? "", uid: meta.uid ?? "", controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        restartPolicy: "Always",
        terminationGracePeriodSeconds: 30,
        dnsPolicy: "ClusterFirst",
        schedulerName: "default-scheduler",
        ...(template.spec as Pod["spec"]),
        nodeName: node.name,
      } as Pod["spec"],
    };
    const key = metaNamespaceKey(meta.namespace, name);
    this.#scheduled(key, this.#pending(pod, node), node);
  }

  /** A pod as the kubelet first reports it: scheduled, its containers being created. */
  #pending(pod: Pod, node: NodeRef): Pod {
    const at = timestamp(Date.now());
    const names = (pod.spec?.containers ?? []).map((c) => c.name);
    const unready = (type: string) => ({
      type,
      status: "False",
      lastProbeTime: null as unknown as string,
      lastTransitionTime: at,
      reason: "ContainersNotReady",
      message: `containers with unready status: [${names.join(" ")}]`,
    });
    return {
      ...pod,
      status: {
        phase: "Pending",
        conditions: [
          { type: "PodReadyToStartContainers", status: "False", lastProbeTime: null as unknown as string, lastTransitionTime: at },
          { type: "Initialized", status: "True", lastProbeTime: null as unknown as string, lastTransitionTime: at },
          unready("Ready"),
          unready("ContainersReady"),
          { type: "PodScheduled", status: "True", lastProbeTime: null as unknown as string, lastTransitionTime: at },
        ],
        hostIP: node.internalIP,
        hostIPs: [{ ip: node.internalIP }],
        startTime: at,
        containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
          name: c.name,
          state: { waiting: { reason: "ContainerCreating" } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: c.image ?? "",
          imageID: "",
          started: false,
        })),
        qosClass: "BestEffort",
      },
    };
  }

  /** A pod made through the API: the scheduler puts it on a node, then the kubelet starts it. */
  #schedule(key: string): void {
    const pod = this.#store.get(PODS, key) as Pod | undefined;
    if (!pod || isTerminating(pod) || pod.status?.containerStatuses) return;
    const node = this.#nodes.find((n) => n.name === pod.spec?.nodeName) ?? this.#rng.pick(this.#nodes);
    this.#scheduled(key, this.#pending({ ...pod, spec: { ...(pod.spec as Pod["spec"]), nodeName: node.name } as Pod["spec"] }, node), node);
  }

  /** A pod bound to its node, as the scheduler says it is, to be started a moment later. */
  #scheduled(key: string, pod: Pod, node: NodeRef): void {
    const stored = this.#store.put(PODS, key, pod as KubeObject);
    if (this.#events?.on()) this.#events.recorder.scheduled(stored.object as Pod, Date.now());
    this.#startLater(key, node);
  }

  #later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#closed) action();
    }, ms);
    this.#timers.add(timer);
  }

  #startLater(key: string, node: NodeRef): void {
    this.#later(this.#rng.between(START_MS[0], START_MS[1]), () => {
      const pod = this.#store.get(PODS, key) as Pod | undefined;
      if (!pod || isTerminating(pod) || pod.status?.phase !== "Pending") return;
      const started: Pod = { ...pod, status: copyObject(pod.status) };
      startPod(started, this.#rng, node, Date.now());
      const stored = this.#store.put(PODS, key, started as KubeObject);
      if (this.#events?.on()) this.#events.recorder.started(stored.object as Pod, Date.now());
    });
  }

  /** Graceful deletion: Terminating now, gone a moment later. */
  #terminate(key: string): void {
    const pod = this.#store.get(PODS, key) as Pod | undefined;
    if (!pod) return;
    const terminating: Pod = { ...pod, metadata: { ...pod.metadata } };
    markTerminating(terminating, Date.now());
    this.#store.put(PODS, key, terminating as KubeObject);
    this.#later(GRACE_MS, () => void this.#store.remove(PODS, key));
  }
}
