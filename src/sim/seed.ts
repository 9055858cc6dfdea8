/**
 * @module
 * The simulated cluster's layout and initial objects: nodes, and per namespace a set of
 * Deployments with their ReplicaSets, Services, ConfigMaps, Secrets, Events, Widgets and
 * Running pods. Churn asks for a namespace's pod templates here, which seeds the workloads of
 * a namespace it has not seen before.
 */
import type { KubeObject } from "../k8s/types.ts";
import { appConfigMap, appSecret, deploymentObjects, namespaceObject, nodeObject, rootCaConfigMap, scalingEvent, serviceObject, widgetObject } from "./fixtures.ts";
import { newPod, startPod, type NodeRef, type PodTemplateRef } from "./pods.ts";
import type { Random } from "./random.ts";
import { resourceByName } from "./resources.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import type { Store } from "./store.ts";

export interface InitialOptions {
  namespaces?: string[];
  podsPerNamespace?: number;
  nodes?: number;
  /** Deployments per namespace. */
  deployments?: number;
  /** Namespaces whose pods, seeded and churned, are slim (about 2.5 KB of JSON; see `PodTemplateRef.slim`). */
  slimPodNamespaces?: string[];
}

const DEFAULT_INITIAL: Required<InitialOptions> = {
  namespaces: ["default", "team-a", "team-b", "team-c"],
  podsPerNamespace: 8,
  nodes: 3,
  deployments: 2,
  slimPodNamespaces: [],
};

const HOUR = 3_600_000;

export class Cluster {
  readonly nodes: NodeRef[] = [];
  readonly options: Required<InitialOptions>;
  readonly #store: Store;
  readonly #rng: Random;
  readonly #templates = new Map<string, PodTemplateRef[]>();

  constructor(store: Store, rng: Random, initial: InitialOptions = {}) {
    this.#store = store;
    this.#rng = rng;
    const given = Object.fromEntries(Object.entries(initial).filter(([, v]) => v !== undefined));
    this.options = { ...DEFAULT_INITIAL, ...given };
    const now = Date.now();
    const nodes = Math.max(1, this.options.nodes);
    for (let i = 0; i < nodes; i++) {
      const { object, ref } = nodeObject(rng, i, now - 240 * HOUR);
      this.#put("nodes", object);
      this.nodes.push(ref);
    }
    for (const ns of this.options.namespaces) this.#seedNamespace(ns, this.options.podsPerNamespace);
  }

  /** Pod templates (one per Deployment) of a namespace, seeding its workloads on first use. */
  templates(namespace: string): PodTemplateRef[] {
    return this.#templates.get(namespace) ?? this.#seedNamespace(namespace, 0);
  }

  /** The node a pod is scheduled on. */
  node(name: string | undefined): NodeRef {
    return this.nodes.find((n) => n.name === name) ?? this.#rng.pick(this.nodes);
  }

  #put(resource: string, object: KubeObject): void {
    const def = resourceByName(resource);
    this.#store.put(def, metaNamespaceKey(object.metadata?.namespace, object.metadata?.name ?? ""), object);
  }

  #seedNamespace(namespace: string, pods: number): PodTemplateRef[] {
    const rng = this.#rng;
    const now = Date.now();
    const created = now - 72 * HOUR;
    if (!this.#store.get(resourceByName("namespaces"), namespace)) this.#put("namespaces", namespaceObject(namespace, rng.uuid(), created));
    this.#put("configmaps", rootCaConfigMap(rng, namespace, created));
    const count = Math.max(1, this.options.deployments);
    const templates: PodTemplateRef[] = [];
    for (let d = 0; d < count; d++) {
      const replicas = Math.floor(pods / count) + (d < pods % count ? 1 : 0);
      const deployedAt = now - rng.between(24, 48) * HOUR;
      const { deployment, replicaSet, template: full } = deploymentObjects(rng, namespace, d, replicas, deployedAt);
      const template = this.options.slimPodNamespaces.includes(namespace) ? { ...full, slim: true } : full;
      this.#put("deployments", deployment);
      this.#put("replicasets", replicaSet);
      this.#put("services", serviceObject(rng, template, deployedAt));
      this.#put("configmaps", appConfigMap(rng, template, deployedAt));
      this.#put("secrets", appSecret(rng, template, deployedAt));
      this.#put("events", scalingEvent(rng, deployment, template.replicaSetName, replicas, deployedAt));
      for (let p = 0; p < replicas; p++) {
        const startedAt = now - rng.between(60_000, 20 * HOUR);
        const node = rng.pick(this.nodes);
        const pod = newPod(rng, template, node, startedAt);
        startPod(pod, rng, node, startedAt + rng.between(2_000, 15_000));
        this.#put("pods", pod as KubeObject);
      }
      templates.push(template);
    }
    for (let w = 0; w < 2; w++) this.#put("widgets", widgetObject(rng, namespace, w, created));
    this.#templates.set(namespace, templates);
    return templates;
  }
}
