/**
 * @module
 * Paged lists (`limit` / `continue`) over the hub's snapshots. A snapshot is the cache's
 * key-ordered array at one resourceVersion, immutable once taken, so a page sequence is
 * consistent for as long as its snapshot is retained. Continue tokens have the API server's
 * shape (apiserver `pkg/storage/continue.go`): base64url of `{"v":"meta.k8s.io/v1","rv":R,"start":"<key>\u0000"}`.
 * When a snapshot is no longer retained the token has expired, and the answer is 410, as
 * after an etcd compaction.
 */
import { decodeBase64Url, encodeBase64Url } from "../k8s/base64url.ts";
import type { CachedObject } from "./cache.ts";

export interface Snapshot {
  readonly rv: number;
  readonly objects: readonly CachedObject[];
}

export interface Page {
  rv: number;
  objects: readonly CachedObject[];
  /** Token for the next page; absent on the last page. */
  continue: string | undefined;
  /** Items after this page (only when there is a next page). */
  remaining: number | undefined;
}

export interface Cursor {
  rv: number;
  /** The key the next page starts at or after. */
  start: string;
}

const VERSION = "meta.k8s.io/v1";

export function encodeContinue(cursor: Cursor): string {
  return encodeBase64Url(JSON.stringify({ v: VERSION, rv: cursor.rv, start: `${cursor.start}\u0000` }));
}

/** The cursor in a continue token, or `undefined` if it is not one of ours. */
export function decodeContinue(token: string): Cursor | undefined {
  try {
    const parsed = JSON.parse(decodeBase64Url(token) ?? "") as { v?: unknown; rv?: unknown; start?: unknown };
    if (parsed.v !== VERSION || typeof parsed.rv !== "number" || typeof parsed.start !== "string") return undefined;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL a continue token's start ends with, on purpose
    return { rv: parsed.rv, start: parsed.start.replace(/\u0000$/, "") };
  } catch {
    return undefined;
  }
}

/** One page of `snapshot`: up to `limit` objects whose key is after `after` (or all of them). */
export function page(snapshot: Snapshot, limit: number | undefined, after?: string): Page {
  const objects = snapshot.objects;
  let from = 0;
  if (after !== undefined) {
    let hi = objects.length;
    while (from < hi) {
      const mid = (from + hi) >>> 1;
      if ((objects[mid] as CachedObject).key <= after) from = mid + 1;
      else hi = mid;
    }
  }
  const to = limit === undefined ? objects.length : Math.min(objects.length, from + limit);
  const items = objects.slice(from, to);
  const more = to < objects.length;
  return {
    rv: snapshot.rv,
    objects: items,
    continue: more ? encodeContinue({ rv: snapshot.rv, start: (items.at(-1) as CachedObject).key }) : undefined,
    remaining: more ? objects.length - to : undefined,
  };
}

/**
 * Snapshots kept for continue tokens: the newest few, each for a limited time. Retaining one
 * costs an array of references, but it also keeps superseded object versions alive, hence
 * the bounds.
 */
export class SnapshotStore {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #kept = new Map<number, { snapshot: Snapshot; at: number }>();

  constructor(max: number, ttlMs: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
  }

  keep(snapshot: Snapshot, now: number): void {
    this.#kept.delete(snapshot.rv);
    this.#kept.set(snapshot.rv, { snapshot, at: now });
    while (this.#kept.size > this.#max) this.#kept.delete(this.#kept.keys().next().value as number);
  }

  /** Forget every snapshot: the state they were taken of is gone. */
  clear(): void {
    this.#kept.clear();
  }

  get(rv: number, now: number): Snapshot | undefined {
    const kept = this.#kept.get(rv);
    if (!kept) return undefined;
    if (now - kept.at > this.#ttlMs) {
      this.#kept.delete(rv);
      return undefined;
    }
    return kept.snapshot;
  }
}
