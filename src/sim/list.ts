/**
 * @module
 * LIST: snapshot choice by resourceVersion / resourceVersionMatch / continue (the watch
 * cache's and etcd's rules, see `ListOptions` validation and `ShouldDelegateList`), selector
 * filtering, and `limit`/`continue` paging over a consistent snapshot in key order.
 */
import { parseListOptions } from "../k8s/options.ts";
import { badRequest, continueExpired, expired, tooLargeResourceVersion } from "../k8s/status.ts";
import type { KubeList, KubeObject } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import type { ObjectFilter } from "./filter.ts";
import { apiVersionOfResource, type ResourceDef } from "./resources.ts";
import type { Store } from "./store.ts";

/** How long a request for a resourceVersion ahead of the store waits before 504 (cacher `blockTimeout`). */
export const FRESHNESS_WAIT_MS = 3000;

export interface ListResult {
  items: KubeObject[];
  metadata: KubeList["metadata"];
}

interface ContinueToken {
  /** Snapshot RV; -1 (any negative) means "continue at the latest state" (inconsistent). */
  rv: number;
  /** First key to return (the last returned key plus `\0`). */
  start: string;
}

/** Opaque to clients: base64url of `{"v":"meta.k8s.io/v1","rv":N,"start":"key\0"}` (apiserver `storage/continue.go`). */
const encodeContinue = (token: ContinueToken): string => Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })).toString("base64url");

function decodeContinue(value: string): ContinueToken {
  const invalid = (why: string) => new ApiError(badRequest(`continue key is not valid: ${why}`));
  let parsed: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
  } catch {
    throw invalid("the token is not base64url-encoded JSON");
  }
  if (parsed.v !== "meta.k8s.io/v1") throw invalid("server does not recognize this encoded version");
  if (!Number.isSafeInteger(parsed.rv) || parsed.rv === 0) throw invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  if (typeof parsed.start !== "string" || parsed.start === "") throw invalid("encoded start key empty");
  return { rv: Math.max(parsed.rv as number, -1), start: parsed.start };
}

/** Wait (up to 3 s) for the store to reach `rv`, else the cacher's 504 TooLarge. */
async function waitUntilFresh(store: Store, rv: number): Promise<void> {
  if (await store.waitFor(rv, FRESHNESS_WAIT_MS)) return;
  throw new ApiError(tooLargeResourceVersion(rv, store.resourceVersion));
}

function snapshotOrExpired(store: Store, def: ResourceDef, rv: number, error: () => ApiError): ReadonlyMap<string, KubeObject> {
  const snapshot = store.snapshotAt(def, rv);
  if (!snapshot) throw error();
  return snapshot;
}

export async function listObjects(store: Store, def: ResourceDef, filter: ObjectFilter, query: URLSearchParams): Promise<ListResult> {
  const parsed = parseListOptions(query);
  if (!parsed.ok) throw new ApiError(parsed.status);
  const options = parsed.value;
  let limit = options.limit;
  let start = "";
  let snapshotRV = store.resourceVersion;
  let snapshot: ReadonlyMap<string, KubeObject> = store.objects(def);

  if (options.continue) {
    const token = decodeContinue(options.continue);
    start = token.start;
    if (token.rv !== -1) {
      snapshotRV = token.rv;
      snapshot = snapshotOrExpired(store, def, token.rv, () => new ApiError(continueExpired(encodeContinue({ rv: -1, start }))));
    }
  } else if (options.resourceVersion.kind === "zero") {
    // The watch cache ignores limit for resourceVersion=0 (cacher `computeListLimit`).
    limit = undefined;
  } else if (options.resourceVersion.kind === "exact") {
    const rv = options.resourceVersion.rv;
    await waitUntilFresh(store, rv);
    const exact = options.resourceVersionMatch === "Exact" || (options.resourceVersionMatch === undefined && limit !== undefined);
    if (exact) {
      snapshotRV = rv;
      snapshot = snapshotOrExpired(store, def, rv, () => new ApiError(expired("The resourceVersion for the provided list is too old.")));
    } else {
      snapshotRV = store.resourceVersion;
      snapshot = store.objects(def);
    }
  }

  // The current objects' keys are kept sorted; an older snapshot's are sorted here.
  const keys = snapshot === store.objects(def) ? store.sortedKeys(def) : [...snapshot.keys()].sort();
  // A namespace's objects are one range of keys, as in etcd: a page reads only that range.
  const scope = filter.namespace;
  const end = scope === undefined ? keys.length : firstAtOrAfter(keys, `${scope}${NAMESPACE_END}`);
  const items: KubeObject[] = [];
  const first = scope === undefined ? "" : `${scope}/`;
  let i = firstAtOrAfter(keys, start > first ? start : first);
  for (; i < end && (limit === undefined || items.length < limit); i++) {
    const object = snapshot.get(keys[i] ?? "");
    if (object && filter.matches(object)) items.push(object);
  }
  const metadata: KubeList["metadata"] = { resourceVersion: String(snapshotRV) };
  if (limit !== undefined && i < end) {
    // Without selectors every key left in the range is an item; with them, one more match is
    // enough to say there is a next page (and no count is given). Never a pass over the rest of
    // the collection for each page: a paged list of a million objects reads each key once.
    let remaining = 0;
    if (!filter.selective) remaining = end - i;
    else for (let j = i; j < end && remaining === 0; j++) if (filter.matches(snapshot.get(keys[j] ?? "") ?? {})) remaining = 1;
    if (remaining > 0) {
      // The loop stopped right after the limit-th match, so keys[i - 1] is the last item's key.
      metadata.continue = encodeContinue({ rv: snapshotRV, start: `${keys[i - 1] ?? ""}\u0000` });
      if (!filter.selective) metadata.remainingItemCount = remaining;
    }
  }
  return { items, metadata };
}

/** The character after `/`: a namespace's keys (`<namespace>/<name>`) all sort before `<namespace>` followed by it. */
const NAMESPACE_END = String.fromCharCode("/".charCodeAt(0) + 1);

/** The index of the first of sorted `keys` at or after `start` (binary search). */
function firstAtOrAfter(keys: readonly string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The list object: built-in items lose kind/apiVersion (kubernetes/kubernetes#63676); custom ones keep them. */
export function listBody(def: ResourceDef, result: ListResult): KubeList {
  const items = def.custom ? result.items : result.items.map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest as KubeObject);
  return { kind: def.listKind, apiVersion: apiVersionOfResource(def), metadata: result.metadata, items };
}
