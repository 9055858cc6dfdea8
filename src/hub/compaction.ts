/**
 * @module
 * Net changes for a resume (`compact=true`): instead of every event after resourceVersion `N`,
 * each object that changed after `N` once, at its current state — `ADDED` if it entered the
 * collection after `N` (created, or moved into the selector), else `MODIFIED` — and a `DELETED`,
 * with its last state, for each object that was in the collection at `N` and has left it
 * (deleted, or moved out of the selector). Applied to the collection as it was at `N`, they give
 * the collection as it is now. In resourceVersion order, so a stream cut off halfway can resume
 * for net changes from the last resourceVersion it delivered; a delete always comes before the
 * creation of another object with the same name.
 */
import type { CachedObject, ObjectCache } from "./cache.ts";
import type { Tombstone } from "./storage.ts";

export interface NetChange {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: CachedObject;
}

/**
 * `tombstones`: the deletions after `rv` of objects that were in the collection at `rv` (the
 * caller has checked that none before `rv` are missing: the hub's horizon).
 */
export function netChanges(current: Pick<ObjectCache, "values" | "sinceOf">, tombstones: Iterable<Tombstone>, rv: number): NetChange[] {
  const changes: NetChange[] = [];
  const present = new Set<string>();
  for (const object of current.values()) {
    present.add(object.uid);
    if (object.rv <= rv) continue;
    changes.push({ type: (current.sinceOf(object.uid) ?? object.rv) > rv ? "ADDED" : "MODIFIED", object });
  }
  for (const { object, since } of tombstones) {
    // Left and came back: its current state says it all.
    if (object.rv > rv && since <= rv && !present.has(object.uid)) changes.push({ type: "DELETED", object });
  }
  return changes.sort((a, b) => a.object.rv - b.object.rv);
}
