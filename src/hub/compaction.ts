/**
 * @module
 * Net changes for a resume (`compact=true`): instead of every event after resourceVersion `N`,
 * each object that changed after `N` once, at its state at the head `H` — `ADDED` if it entered
 * the collection after `N` (created, or moved into the selector), else `MODIFIED` — and a
 * `DELETED`, with its last state, for each object that was in the collection at `N` and had
 * left it by `H` (deleted, or moved out of the selector). Applied to the collection as it was at
 * `N`, they give the collection as it was at `H`. In resourceVersion order, so a stream cut off
 * halfway can resume for net changes from the last resourceVersion it delivered; a delete always
 * comes before the creation of another object with the same name. Read from the hub's storage a
 * page at a time: the changed objects by their resourceVersion, the tombstones by theirs.
 */
import type { Collection, StoredObject } from "./collection.ts";
import { READ_BYTES } from "./row-limit.ts";
import type { Tombstones } from "./tombstones.ts";

export interface NetChange {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: StoredObject;
}

/**
 * Up to `limit` net changes from `from` to `at` with a resourceVersion after `after`, in
 * resourceVersion order (the caller has checked that no tombstone after `from` is missing: the
 * hub's horizon), and about `maxBytes` of them (or one). `more`: whether changes may follow.
 */
export function netChangesPage(
  collection: Pick<Collection, "changed" | "presentAt">,
  tombstones: Pick<Tombstones, "page">,
  from: number,
  at: number,
  after: number,
  limit: number,
  maxBytes = READ_BYTES,
): { changes: NetChange[]; more: boolean } {
  const changes: NetChange[] = [];
  const changed = collection.changed(from, at, after, limit, maxBytes);
  for (const object of changed.rows) changes.push({ type: object.since > from ? "ADDED" : "MODIFIED", object });
  // Where a read stopped short, what lies past it is unread: the page ends there.
  let bound = changed.more && changed.rows.length > 0 ? (changed.rows.at(-1) as StoredObject).rv : Number.POSITIVE_INFINITY;
  let more = changed.more;
  // A page of the merged order needs no more than `limit` of each.
  for (let cursor = after, deleted = 0, bytes = 0; deleted < limit && cursor < bound; ) {
    const gone = tombstones.page(from, cursor, at, limit, maxBytes);
    for (const object of gone.rows) {
      cursor = object.rv;
      // Left and came back: its state at `at` says it all.
      if (collection.presentAt(object.key, object.uid, at)) continue;
      changes.push({ type: "DELETED", object });
      deleted++;
      bytes += object.json.length;
    }
    if (!gone.more || gone.rows.length === 0) break;
    if (deleted >= limit || bytes >= maxBytes) {
      bound = Math.min(bound, cursor);
      more = true;
      break;
    }
  }
  const page = changes.sort((a, b) => a.object.rv - b.object.rv).filter((change) => change.object.rv <= bound);
  return { changes: page.slice(0, limit), more: more || page.length > limit };
}
