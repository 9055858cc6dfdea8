/**
 * @module
 * Reads from the hub's cache: lists and gets. Which snapshot a list gets follows the watch
 * cache's rules (apiserver `pkg/storage/cacher/delegator/interface.go`, `watch_cache.go`; see
 * `options.ts` for the validation that came first):
 * - `resourceVersion` unset or `0`: the hub's current state (unset is a consistent read: the
 *   hub has made sure of it before a read gets here, see `Feed.synced`);
 * - `N`, or `N` with `resourceVersionMatch=NotOlderThan`: current, once the hub has reached `N`
 *   (waiting up to 3 s, then 504 Too large resource version);
 * - `N` with `limit` and no match, or `resourceVersionMatch=Exact`: the state at exactly `N`, if
 *   it is current or retained, else 410;
 * - `continue`: the next page of the token's snapshot, or 410 once it is gone.
 * Responses are the API server's shapes, streamed from the pre-serialised objects so a large
 * list is never built as one string.
 */
import { metaNamespaceKey, type WatchKey } from "../k8s/key.ts";
import type { ListOptions } from "../k8s/options.ts";
import { badRequest, expired, notFound, statusResponse, tooLargeResourceVersion, type Result } from "../k8s/status.ts";
import type { CachedObject } from "./cache.ts";
import { decodeContinue, page, type Page, type Snapshot, type SnapshotStore } from "./snapshots.ts";

/** How long a request for a resourceVersion ahead of the hub waits for it (`blockTimeout`). */
export const AHEAD_WAIT_MS = 3000;

export interface ListSource {
  /** The hub's current state. */
  current(): Snapshot;
  /** Resolves `true` once the hub has reached `rv`, `false` after `ms`. */
  waitFor(rv: number, ms: number): Promise<boolean>;
  readonly snapshots: SnapshotStore;
}

const CONTINUE_EXPIRED = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";

export async function listPage(source: ListSource, options: ListOptions, now: number): Promise<Result<Page>> {
  let snapshot: Snapshot | undefined;
  let after: string | undefined;
  if (options.continue) {
    const cursor = decodeContinue(options.continue);
    if (!cursor) return { ok: false, status: badRequest("continue key is not valid: it was not issued by this relay") };
    snapshot = exactly(source, cursor.rv, now);
    if (!snapshot) return { ok: false, status: expired(CONTINUE_EXPIRED) };
    after = cursor.start;
  } else if (options.resourceVersion.kind === "exact") {
    const rv = options.resourceVersion.rv;
    const exact = options.resourceVersionMatch === "Exact" || (options.resourceVersionMatch === undefined && options.limit !== undefined);
    if (!(await source.waitFor(rv, AHEAD_WAIT_MS))) return { ok: false, status: tooLargeResourceVersion(rv, source.current().rv) };
    snapshot = exact ? exactly(source, rv, now) : source.current();
    if (!snapshot) return { ok: false, status: expired("The resourceVersion for the provided list is too old.") };
  } else {
    snapshot = source.current();
  }
  const result = page(snapshot, options.limit, after);
  if (result.continue) source.snapshots.keep(snapshot, now);
  return { ok: true, value: result };
}

function exactly(source: ListSource, rv: number, now: number): Snapshot | undefined {
  const current = source.current();
  return current.rv === rv ? current : source.snapshots.get(rv, now);
}

/** What the hub reads from: its identity's kinds, its current state, and how to wait for a resourceVersion. */
export interface Reader extends ListSource {
  readonly listKind: string;
  readonly apiVersion: string;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

/** A list request's response: a page of the snapshot its options select, or their Status. */
export async function serveList(reader: Reader, key: WatchKey, options: ListOptions, now: number): Promise<Response> {
  const listed = await listPage(reader, options, now);
  if (!listed.ok) return statusResponse(listed.status);
  const result = listed.value;
  const body = listBody(
    {
      listKind: reader.listKind,
      apiVersion: reader.apiVersion,
      resourceVersion: result.rv,
      continue: result.continue,
      // As the API server: an estimate of what is left, only when nothing is filtered out.
      remainingItemCount: key.labelSelector || key.fieldSelector ? undefined : result.remaining,
    },
    result.objects,
  );
  return new Response(body, { headers: JSON_HEADERS });
}

/** A get: the named object of the current state, or 404. */
export function serveGet(reader: Reader, key: WatchKey, name: string): Response {
  const found = findByKey(reader.current().objects, metaNamespaceKey(key.namespace, name));
  if (!found) return statusResponse(notFound(key.resource, name, key.group));
  return new Response(`${found.json}\n`, { headers: JSON_HEADERS });
}

/** Binary search of a key-ordered snapshot. */
function findByKey(objects: readonly CachedObject[], key: string): CachedObject | undefined {
  let lo = 0;
  let hi = objects.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = (objects[mid] as CachedObject).key;
    if (k === key) return objects[mid];
    if (k < key) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}

const CHUNK = 64 * 1024;

interface ListHead {
  listKind: string;
  apiVersion: string;
  resourceVersion: number;
  /** Token for the next page, when there is one. */
  continue?: string | undefined;
  /** Items after this page; the API server gives it only for unfiltered lists. */
  remainingItemCount?: number | undefined;
}

/** A list body as a stream; `objects` must not change while it is read (snapshots never do). */
function listBody(head: ListHead, objects: readonly CachedObject[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let text = next === 0 ? `{"kind":"${head.listKind}","apiVersion":"${head.apiVersion}","metadata":${JSON.stringify(listMeta(head))},"items":[` : "";
      while (next < objects.length && text.length < CHUNK) {
        text += (next > 0 ? "," : "") + (objects[next] as CachedObject).json;
        next++;
      }
      if (next >= objects.length) {
        text += "]}\n";
        controller.enqueue(encoder.encode(text));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(text));
    },
  });
}

function listMeta(head: ListHead): Record<string, string | number> {
  const meta: Record<string, string | number> = { resourceVersion: String(head.resourceVersion) };
  if (head.continue) meta.continue = head.continue;
  if (head.remainingItemCount !== undefined) meta.remainingItemCount = head.remainingItemCount;
  return meta;
}
