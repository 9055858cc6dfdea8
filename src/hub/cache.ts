/**
 * @module
 * The hub's current objects, keyed by uid and serialised once, and the diff of a relist
 * against them. The diff is how an upstream 410 stays invisible to subscribers: instead of
 * making every subscriber relist, the hub emits the difference as ordinary events.
 */
import { metaNamespaceKey } from "../k8s/key.ts";
import { objectVersion } from "../k8s/rv.ts";
import type { KubeObject } from "../k8s/types.ts";

export interface CachedObject {
  readonly uid: string;
  /** `namespace/name` (or `name`): the order the API server lists and replays in. */
  readonly key: string;
  readonly rv: number;
  /** The object's JSON, with kind and apiVersion, exactly as sent to subscribers. */
  readonly json: string;
}

export interface ObjectEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: CachedObject;
}

export class ObjectCache {
  readonly #byUid = new Map<string, CachedObject>();
  /** The resourceVersion each object (last) entered the collection at: created, or moved into the selector. */
  readonly #since = new Map<string, number>();
  #sorted: CachedObject[] | undefined;

  get size(): number {
    return this.#byUid.size;
  }

  get(uid: string): CachedObject | undefined {
    return this.#byUid.get(uid);
  }

  values(): IterableIterator<CachedObject> {
    return this.#byUid.values();
  }

  /** When `uid` entered the collection (see `#since`); `undefined` if it is not in it. */
  sinceOf(uid: string): number | undefined {
    return this.#since.get(uid);
  }

  apply(event: ObjectEvent): void {
    const { uid } = event.object;
    if (event.type === "DELETED") {
      this.#byUid.delete(uid);
      this.#since.delete(uid);
    } else {
      this.#byUid.set(uid, event.object);
      if (event.type === "ADDED" || !this.#since.has(uid)) this.#since.set(uid, event.object.rv);
    }
    this.#sorted = undefined;
  }

  /** Every object anew: from a list (all in the collection since `since`), or restored with their own. */
  replace(objects: Iterable<CachedObject>, since: number | ((object: CachedObject) => number)): void {
    this.#byUid.clear();
    this.#since.clear();
    for (const o of objects) {
      this.#byUid.set(o.uid, o);
      this.#since.set(o.uid, typeof since === "number" ? since : since(o));
    }
    this.#sorted = undefined;
  }

  /** Every object in key order; shared until the next change, so callers must not mutate it. */
  snapshot(): readonly CachedObject[] {
    this.#sorted ??= [...this.#byUid.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return this.#sorted;
  }
}

/** An object as the cache holds it, or `undefined` when it lacks a uid, a name or a resourceVersion. */
export function toCachedObject(object: KubeObject): CachedObject | undefined {
  const metadata = object.metadata;
  const rv = objectVersion(object);
  if (!metadata?.uid || !metadata.name || rv === undefined) return undefined;
  return { uid: metadata.uid, key: metaNamespaceKey(metadata.namespace, metadata.name), rv, json: JSON.stringify(object) };
}

/** The change a window line records (`{"type":...,"object":...}`), to replay it onto a cache. */
export function objectEventOf(line: string): ObjectEvent | undefined {
  const event = JSON.parse(line) as { type: string; object: KubeObject };
  const object = toCachedObject(event.object);
  if (!object || (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED")) return undefined;
  return { type: event.type, object };
}

/** Copy of an object with a new resourceVersion (a DELETED carries the deletion's RV). */
export function withVersion(object: CachedObject, rv: number): CachedObject {
  const parsed = JSON.parse(object.json) as KubeObject;
  parsed.metadata = { ...parsed.metadata, resourceVersion: String(rv) };
  return { ...object, rv, json: JSON.stringify(parsed) };
}

/**
 * The events that turn `current` (the cache at RV `from`) into `listed` (a list at RV `to`),
 * each at its own RV in `(from, to]`, in RV order, so a resume from any of them stays exact.
 *
 * Added and modified objects keep their own RVs: they were written in the gap, so those RVs
 * lie in `(from, to]` and are distinct. Deleted objects get the latest RVs left free ("gone by
 * then" is the claim that is always true). Every change in the gap consumed at least one
 * revision, so there are enough free RVs unless upstream history is inconsistent (a restore
 * from backup, a different cluster); then this returns `undefined` and the caller must reset
 * the window, turning the gap into an explicit 410 instead of a silent one.
 */
export function relistDiff(current: Iterable<CachedObject>, listed: readonly CachedObject[], from: number, to: number): ObjectEvent[] | undefined {
  if (to < from) return undefined;
  const before = new Map<string, CachedObject>();
  for (const o of current) before.set(o.uid, o);
  const used = new Set<number>();
  const events: ObjectEvent[] = [];
  for (const object of listed) {
    const old = before.get(object.uid);
    before.delete(object.uid);
    if (old !== undefined && old.rv === object.rv) continue;
    if (object.rv <= from || object.rv > to || used.has(object.rv)) return undefined;
    used.add(object.rv);
    events.push({ type: old === undefined ? "ADDED" : "MODIFIED", object });
  }
  let free = to;
  for (const old of [...before.values()].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    while (used.has(free)) free--;
    if (free <= from) return undefined;
    used.add(free);
    events.push({ type: "DELETED", object: withVersion(old, free) });
  }
  return events.sort((a, b) => a.object.rv - b.object.rv);
}
