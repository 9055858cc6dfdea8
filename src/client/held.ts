/**
 * @module
 * The objects a watch has delivered, as deltas need them: a delta names the version it patches
 * by its resourceVersion alone, so the watch finds its copy by version, and keeps one version
 * of each object (found by key when a whole event replaces it).
 */
import { objectKey } from "./keys.ts";
import type { KubeResource } from "./types.ts";

export class HeldObjects<T extends KubeResource> {
  readonly #byKey = new Map<string, T>();
  /** resourceVersion → key, for the version held of each object. */
  readonly #keyOf = new Map<string, string>();

  /** Hold exactly `items` (a list). */
  replace(items: readonly T[]): void {
    this.#byKey.clear();
    this.#keyOf.clear();
    for (const item of items) this.put(item);
  }

  /** Hold `object` in place of the version held of it, if any. */
  put(object: T): void {
    const key = objectKey(object);
    this.#forget(key);
    this.#byKey.set(key, object);
    const rv = object.metadata?.resourceVersion;
    if (rv) this.#keyOf.set(rv, key);
  }

  /** Stop holding the object (its deletion). */
  remove(object: T): void {
    this.#forget(objectKey(object));
  }

  /** The object held at resourceVersion `rv`, if one is. */
  at(rv: string): T | undefined {
    const key = this.#keyOf.get(rv);
    return key === undefined ? undefined : this.#byKey.get(key);
  }

  #forget(key: string): void {
    const held = this.#byKey.get(key);
    if (held === undefined) return;
    this.#byKey.delete(key);
    const rv = held.metadata?.resourceVersion;
    if (rv && this.#keyOf.get(rv) === key) this.#keyOf.delete(rv);
  }
}
