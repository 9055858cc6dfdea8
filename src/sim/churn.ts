/**
 * @module
 * Pod churn at a configurable total rate: creates, lifecycle updates (Pending → Running,
 * container restarts, readiness flaps, label flips that move pods across selectors) and
 * graceful deletions (MODIFIED with deletionTimestamp, later DELETED), keeping each
 * namespace's population near a target: its seeded size, or the pods it held when churn first
 * reached it if that is more (a namespace grown to 200,000 pods stays near 200,000); and, when
 * asked, the Events a cluster records for them. A 10 ms timer emits `rate × elapsed` operations
 * per tick, so thousands of operations a second do not fall behind, and an operation costs the
 * same however many pods its namespace holds.
 */
import type { Pod } from "kubernetes-types/core/v1.js";
import type { KubeObject } from "../k8s/types.ts";
import type { EventRecorder } from "./events.ts";
import { copyForTransition, flapReadiness, isTerminating, markTerminating, newPod, relabel, restartContainer, startPod } from "./pods.ts";
import type { Random } from "./random.ts";
import { resourceByName } from "./resources.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import type { Cluster } from "./seed.ts";
import type { Store } from "./store.ts";
import type { Writes } from "./writes.ts";

export interface ChurnOptions {
  /** Total operations per second across all namespaces; 0 stops churn. */
  ratePerSec: number;
  /** Namespaces to churn; default: the seeded ones. */
  namespaces?: string[];
  /**
   * Record the Events a cluster would for what churn does (scheduled, pulled, created, started,
   * back-off, unhealthy, killing), expiring old ones (`events.ts`). Default off, and kept as it
   * was when not given: each Event is a write, sharing the history that watches resume from.
   */
  events?: boolean;
}

const PODS = resourceByName("pods");

/** Records the Events of a change, given the pod as stored. */
type Recorded = (pod: Pod, nowMs: number) => void;
const TICK_MS = 10;
const DEFAULT_TARGET = 8;

/** Keys to pick from at random: added, removed and picked in constant time. */
class KeyPool {
  readonly keys: string[] = [];
  readonly #at = new Map<string, number>();

  get size(): number {
    return this.keys.length;
  }

  add(key: string): void {
    if (this.#at.has(key)) return;
    this.#at.set(key, this.keys.length);
    this.keys.push(key);
  }

  delete(key: string): void {
    const at = this.#at.get(key);
    if (at === undefined) return;
    this.#at.delete(key);
    const last = this.keys.pop() as string;
    if (last === key) return;
    this.keys[at] = last;
    this.#at.set(last, at);
  }
}

/** A namespace's pods, by whether they are terminating; and the population churn keeps it near. */
interface Population {
  live: KeyPool;
  terminating: KeyPool;
  target: number | undefined;
}

export class Churn {
  readonly #store: Store;
  readonly #writes: Writes;
  readonly #cluster: Cluster;
  readonly #rng: Random;
  /** Pod keys per namespace, kept in step with the store (any writer may add, change or remove pods). */
  readonly #pods = new Map<string, Population>();
  readonly #unsubscribe: () => void;
  readonly #recorder: EventRecorder;
  #events = false;
  #rate = 0;
  #namespaces: string[];
  #timer: ReturnType<typeof setInterval> | undefined;
  #last = 0;
  #budget = 0;

  /** With controllers, ReplicaSets keep their pods' number: churn deletes pods (which they replace) but makes none. */
  readonly #controlled: boolean;

  /** `recorder`: the Events, with a random sequence of their own, so recording them leaves churn's as it would be without. */
  constructor(store: Store, writes: Writes, cluster: Cluster, rng: Random, recorder: EventRecorder, controlled = false) {
    this.#controlled = controlled;
    this.#store = store;
    this.#writes = writes;
    this.#cluster = cluster;
    this.#rng = rng;
    this.#recorder = recorder;
    this.#namespaces = [...cluster.options.namespaces];
    for (const [key, pod] of store.objects(PODS)) this.#place(key, pod);
    this.#unsubscribe = store.subscribe((event) => {
      if (event.resource !== PODS) return;
      if (event.type === "DELETED") {
        const pods = this.#index(event.object.metadata?.namespace ?? "");
        pods.live.delete(event.key);
        pods.terminating.delete(event.key);
      } else this.#place(event.key, event.object);
    });
  }

  #index(namespace: string): Population {
    let pods = this.#pods.get(namespace);
    if (!pods) this.#pods.set(namespace, (pods = { live: new KeyPool(), terminating: new KeyPool(), target: undefined }));
    return pods;
  }

  /** File a pod that is in the store under live or terminating. */
  #place(key: string, pod: KubeObject): void {
    const pods = this.#index(pod.metadata?.namespace ?? "");
    const [from, to] = isTerminating(pod as Pod) ? [pods.live, pods.terminating] : [pods.terminating, pods.live];
    from.delete(key);
    to.add(key);
  }

  get settings(): { ratePerSec: number; namespaces: string[]; events: boolean } {
    return { ratePerSec: this.#rate, namespaces: [...this.#namespaces], events: this.#events };
  }

  /** Start, retune or (with rate 0) stop churn. */
  configure(options: ChurnOptions): void {
    if (!Number.isFinite(options.ratePerSec) || options.ratePerSec < 0) {
      throw new Error(`churn ratePerSec must be a number ≥ 0, got ${String(options.ratePerSec)}`);
    }
    if (options.namespaces !== undefined) {
      if (options.namespaces.length === 0) throw new Error("churn namespaces must not be empty (omit it to churn the seeded namespaces)");
      this.#namespaces = [...options.namespaces];
    }
    if (options.events !== undefined) this.#events = options.events;
    this.#rate = options.ratePerSec;
    if (this.#rate === 0) {
      this.stop();
      return;
    }
    if (!this.#timer) {
      this.#last = performance.now();
      this.#budget = 0;
      this.#timer = setInterval(() => this.#tick(), TICK_MS);
      this.#timer.unref();
    }
  }

  #tick(): void {
    const now = performance.now();
    // Cap the catch-up after a long event-loop stall at one second's worth of operations.
    this.#budget = Math.min(this.#budget + (this.#rate * (now - this.#last)) / 1000, Math.max(1, this.#rate));
    this.#last = now;
    const ops = Math.floor(this.#budget);
    this.#budget -= ops;
    this.step(ops);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#rate = 0;
  }

  close(): void {
    this.stop();
    this.#unsubscribe();
  }

  /** Perform `ops` churn operations now (also for deterministic tests). */
  step(ops: number): void {
    if (this.#events && ops > 0) this.#recorder.expire(Date.now());
    for (let i = 0; i < ops; i++) this.#operate(this.#rng.pick(this.#namespaces));
  }

  #operate(namespace: string): void {
    const rng = this.#rng;
    const pods = this.#index(namespace);
    const seeded = this.#cluster.options.podsPerNamespace > 0 ? this.#cluster.options.podsPerNamespace : DEFAULT_TARGET;
    const target = (pods.target ??= Math.max(seeded, pods.live.size));
    const live = pods.live.keys;
    const terminating = pods.terminating.keys;
    if (terminating.length > 0 && rng.chance(0.5)) return void this.#store.remove(PODS, rng.pick(terminating));
    if (this.#controlled) return this.#disturb(live);
    if (live.length === 0 || live.length < target * 0.75) return this.#create(namespace);
    if (live.length > target * 1.25) return this.#terminate(rng.pick(live));
    const r = rng.next();
    if (r < 0.15) return this.#create(namespace);
    if (r < 0.3) return this.#terminate(rng.pick(live));
    this.#update(rng.pick(live), (pod) => this.#progress(pod));
  }

  /** Under controllers: a pod is deleted now and then (its ReplicaSet replaces it), or changes as running pods do. */
  #disturb(live: readonly string[]): void {
    if (live.length === 0) return;
    const key = this.#rng.pick(live);
    if (this.#rng.chance(0.15)) return this.#terminate(key);
    this.#update(key, (pod) => this.#progress(pod));
  }

  #terminate(key: string): void {
    this.#update(key, (pod) => {
      markTerminating(pod, Date.now());
      return (stored, now) => this.#recorder.killing(stored, now);
    });
  }

  #create(namespace: string): void {
    this.#writes.ensureNamespace(namespace);
    const template = this.#rng.pick(this.#cluster.templates(namespace));
    const node = this.#rng.pick(this.#cluster.nodes);
    let pod = newPod(this.#rng, template, node, Date.now());
    while (this.#store.get(PODS, metaNamespaceKey(namespace, pod.metadata?.name ?? ""))) pod = newPod(this.#rng, template, node, Date.now());
    const stored = this.#store.put(PODS, metaNamespaceKey(namespace, pod.metadata?.name ?? ""), pod as KubeObject);
    if (this.#events) this.#recorder.scheduled(stored.object as Pod, Date.now());
  }

  /** Apply `change` to a copy of the pod and store it; what it returns records the change's Events about the stored pod. */
  #update(key: string, change: (pod: Pod) => Recorded | undefined): void {
    const current = this.#store.get(PODS, key);
    if (!current) return;
    const pod = copyForTransition(current);
    const record = change(pod);
    const stored = this.#store.put(PODS, key, pod as KubeObject);
    if (this.#events) record?.(stored.object as Pod, Date.now());
  }

  /** The next realistic status or metadata change for a live pod, and the Events it makes. */
  #progress(pod: Pod): Recorded | undefined {
    const now = Date.now();
    const recorder = this.#recorder;
    if (pod.status?.phase === "Pending") {
      startPod(pod, this.#rng, this.#cluster.node(pod.spec?.nodeName), now);
      return (stored, at) => recorder.started(stored, at);
    }
    const u = this.#rng.next();
    if (u < 0.35) {
      restartContainer(pod, this.#rng, now);
      return (stored, at) => recorder.restarted(stored, at);
    }
    if (u < 0.7) {
      relabel(pod);
      return undefined;
    }
    flapReadiness(pod, now);
    return pod.status?.containerStatuses?.every((c) => c.ready) ? undefined : (stored, at) => recorder.unready(stored, at);
  }
}
