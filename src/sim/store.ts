/**
 * @module
 * The simulated etcd + watch cache: one global resourceVersion counter shared by every
 * resource (each write takes the next revision), current objects per resource, a bounded
 * history of changes for watch resume and consistent paged lists, and synchronous
 * notification of watchers. Stored objects are never mutated after a write: readers clone.
 */
import { eventLine } from "../k8s/event.ts";
import type { KubeObject } from "../k8s/types.ts";
import { VersionWaiters } from "../k8s/waiters.ts";
import { goJson } from "./json.ts";
import { canonicalObject } from "./meta.ts";
import type { ResourceDef } from "./resources.ts";

/** Set on every stored object at write time (`String(Date.now())`): the benchmark's latency origin. */
export const WRITTEN_AT = "sim.kube-watch-relay.dev/written-at";

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** One committed write. Every revision after `Store.oldestResumable` has exactly one. */
export class StoredEvent {
  readonly rv: number;
  readonly type: ChangeType;
  readonly resource: ResourceDef;
  readonly key: string;
  /** The object after the change; for DELETED, the last state stamped with the deletion RV. */
  readonly object: KubeObject;
  /** The object before the change (MODIFIED and DELETED), for selector transitions and snapshots. */
  readonly prev: KubeObject | undefined;
  #json: string | undefined;
  readonly #lines: Partial<Record<ChangeType, Buffer>> = {};

  constructor(rv: number, type: ChangeType, resource: ResourceDef, key: string, object: KubeObject, prev: KubeObject | undefined) {
    this.rv = rv;
    this.type = type;
    this.resource = resource;
    this.key = key;
    this.object = object;
    this.prev = prev;
  }

  /** `object` as JSON, serialised once however many watchers send it. */
  get json(): string {
    return (this.#json ??= goJson(this.object));
  }

  /**
   * The watch line sending this change as `type`, encoded once however many watchers send it
   * (the cacher's serialise-once). Watchers that fall behind queue the same buffer, not a copy each.
   */
  line(type: ChangeType): Buffer {
    return (this.#lines[type] ??= Buffer.from(eventLine(type, this.json)));
  }
}

export type Listener = (event: StoredEvent) => void;

export class Store {
  #rv: number;
  /** Every event with rv > #startRV is in #history (the watch cache's `oldest - 1`). */
  #startRV: number;
  #history: StoredEvent[] = [];
  #head = 0;
  #historyLimit: number;
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  /** Each resource's current keys, sorted, while no key comes or goes (a paged list of 100,000 objects reads them 200 times). */
  readonly #sortedKeys = new Map<string, string[]>();
  readonly #listeners = new Set<Listener>();
  readonly #waiters = new VersionWaiters();

  constructor(options: { historyLimit: number; initialResourceVersion?: number }) {
    this.#rv = options.initialResourceVersion ?? 0;
    this.#startRV = this.#rv;
    this.#historyLimit = Math.max(1, options.historyLimit);
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest RV a watch can resume from; older ones get 410 Expired. */
  get oldestResumable(): number {
    return this.#startRV;
  }

  get historyLength(): number {
    return this.#history.length - this.#head;
  }

  #bucket(def: ResourceDef): Map<string, KubeObject> {
    let bucket = this.#objects.get(def.id);
    if (!bucket) this.#objects.set(def.id, (bucket = new Map()));
    return bucket;
  }

  get(def: ResourceDef, key: string): KubeObject | undefined {
    return this.#objects.get(def.id)?.get(key);
  }

  /** Current objects of a resource by storage key (unsorted). */
  objects(def: ResourceDef): ReadonlyMap<string, KubeObject> {
    return this.#bucket(def);
  }

  /** The keys of `objects(def)`, sorted. Do not modify. */
  sortedKeys(def: ResourceDef): readonly string[] {
    let keys = this.#sortedKeys.get(def.id);
    if (!keys) this.#sortedKeys.set(def.id, (keys = [...this.#bucket(def).keys()].sort()));
    return keys;
  }

  /** Create or replace; the store stamps resourceVersion and the written-at annotation. */
  put(def: ResourceDef, key: string, object: KubeObject): StoredEvent {
    const bucket = this.#bucket(def);
    const prev = bucket.get(key);
    const rv = this.#rv + 1;
    const stored = stamp(def, object, rv);
    bucket.set(key, stored);
    if (!prev) this.#sortedKeys.delete(def.id);
    return this.#commit(new StoredEvent(rv, prev ? "MODIFIED" : "ADDED", def, key, stored, prev));
  }

  /** Delete; the DELETED event carries the last state at the deletion RV. */
  remove(def: ResourceDef, key: string): StoredEvent | undefined {
    const bucket = this.#bucket(def);
    const last = bucket.get(key);
    if (!last) return undefined;
    bucket.delete(key);
    this.#sortedKeys.delete(def.id);
    const rv = this.#rv + 1;
    return this.#commit(new StoredEvent(rv, "DELETED", def, key, stamp(def, last, rv), last));
  }

  #commit(event: StoredEvent): StoredEvent {
    this.#rv = event.rv;
    this.#history.push(event);
    this.#trim();
    for (const listener of this.#listeners) listener(event);
    this.#waiters.reached(this.#rv);
    return event;
  }

  #trim(): void {
    const excess = this.historyLength - this.#historyLimit;
    if (excess > 0) this.#dropOldest(excess);
  }

  #dropOldest(count: number): void {
    const last = this.#history[this.#head + count - 1];
    if (!last) return;
    this.#startRV = last.rv;
    this.#head += count;
    // Re-pack now and then so the array does not keep dead entries forever.
    if (this.#head > 1024 && this.#head * 2 > this.#history.length) {
      this.#history = this.#history.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drop history up to and including `rv` (etcd compaction): resuming from older RVs gets 410. */
  compact(rv: number = this.#rv): void {
    const target = Math.min(rv, this.#rv);
    if (target <= this.#startRV) return;
    this.#dropOldest(target - this.#startRV);
  }

  setHistoryLimit(limit: number): void {
    this.#historyLimit = Math.max(1, limit);
    this.#trim();
  }

  /** Events with rv > `after`, oldest first; `undefined` when `after` is older than the history. */
  eventsAfter(after: number): StoredEvent[] | undefined {
    if (after < this.#startRV) return undefined;
    if (after >= this.#rv) return [];
    // Revisions are contiguous, so the event with rv `after + 1` sits at a computable index.
    return this.#history.slice(this.#head + (after - this.#startRV));
  }

  /**
   * The objects of one resource as they were at `rv` (by undoing later events), or `undefined`
   * if the history no longer reaches back that far (at the head, `objects(def)` itself). Used
   * for consistent paged lists.
   */
  snapshotAt(def: ResourceDef, rv: number): ReadonlyMap<string, KubeObject> | undefined {
    if (rv >= this.#rv) return this.#bucket(def);
    if (rv < this.#startRV) return undefined;
    const state = new Map(this.#bucket(def));
    for (let i = this.#history.length - 1; i >= this.#head; i--) {
      const event = this.#history[i];
      if (!event || event.rv <= rv) break;
      if (event.resource !== def) continue;
      if (event.type === "ADDED" || !event.prev) state.delete(event.key);
      else state.set(event.key, event.prev);
    }
    return state;
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves `true` once the store reaches `rv`, or `false` after `timeoutMs`. */
  waitFor(rv: number, timeoutMs: number): Promise<boolean> {
    return this.#waiters.wait(this.#rv, rv, timeoutMs);
  }

  /** Release pending waiters (they see `false`), for shutdown. */
  close(): void {
    this.#waiters.cancel();
    this.#listeners.clear();
  }
}

function stamp(def: ResourceDef, object: KubeObject, rv: number): KubeObject {
  const metadata = { ...object.metadata, resourceVersion: String(rv), annotations: { ...object.metadata?.annotations, [WRITTEN_AT]: String(Date.now()) } };
  return canonicalObject({ ...object, metadata }, def.custom);
}
