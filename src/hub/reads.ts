/**
 * @module
 * Reads from the hub's collection: lists and gets. Which snapshot a list gets follows the watch
 * cache's rules (apiserver `pkg/storage/cacher/delegator/interface.go`, `watch_cache.go`; see
 * `options.ts` for the validation that came first):
 * - `resourceVersion` unset or `0`: the hub's current state (unset is a consistent read: the
 *   hub has made sure of it before a read gets here, see `Feed.synced`);
 * - `N`, or `N` with `resourceVersionMatch=NotOlderThan`: current, once the hub has reached `N`
 *   (waiting up to 3 s, then 504 Too large resource version);
 * - `N` with `limit` and no match, or `resourceVersionMatch=Exact`: the state at exactly `N`, if
 *   it is current or kept for continue tokens, else 410;
 * - `continue`: the next page of the token's snapshot, or, once it is gone, 410 with a token
 *   that goes on from the same key at the latest state; such a token (`rv` -1) reads the current
 *   state from its key on, as a consistent read (the cacher's `ShouldDelegateContinue`).
 * Responses are the API server's shapes, streamed from storage a few rows at a time in the
 * snapshot's key order, so a list of any size is never held in memory, and its first bytes go
 * out as soon as the first rows are read. A list still being staged (the hub's first, read as it
 * fills: `first-list.ts`) is read the same way, waiting for rows when a read comes up short.
 */
import { metaNamespaceKey, type WatchKey } from "../k8s/key.ts";
import type { ListOptions } from "../k8s/options.ts";
import { admitsObject } from "../k8s/shard.ts";
import { badRequest, continueExpired, expired, notFound, serviceUnavailable, statusResponse, tooLargeResourceVersion, type Result } from "../k8s/status.ts";
import type { Collection, StoredObject } from "./collection.ts";
import { LIST_GZIP } from "./shared-gzip.ts";
import { type Cursor, decodeContinue, encodeContinue, LATEST, type Lease, type SnapshotRegistry } from "./snapshots.ts";

/** How long a request for a resourceVersion ahead of the hub waits for it (`blockTimeout`). */
export const AHEAD_WAIT_MS = 3000;

export interface ListSource {
  /** The current state's resourceVersion. */
  head(): number;
  /** Resolves `true` once the hub has reached `rv`, `false` after `ms`. */
  waitFor(rv: number, ms: number): Promise<boolean>;
  /** `sizeAt`: `undefined` when not known yet (a list still being staged that the upstream gave no count of). */
  readonly collection: Pick<Collection, "page" | "keyAfter"> & { sizeAt(at: number): number | undefined };
  readonly snapshots: SnapshotRegistry;
  /** A list still being staged: what its reads wait on when they come up short. Absent for the collection. */
  readonly growing?: Growing | undefined;
  /** A continue token that must not be read on from (its earlier pages missed an object: `first-list.ts`). */
  refuses?(cursor: Cursor): boolean;
}

/** A list still being staged, read as it fills: rows are added after the last one in key order until it is whole. */
export interface Growing {
  /** Rows may still be added: a read that came up short may read more later. */
  readonly open: boolean;
  /** Resolves once rows were added, or the list is whole, or it failed. */
  grown(): Promise<void>;
  /** A reader's place in it. */
  place(): Place;
}

/** Where a reader of a list still being staged has got to, and whether it can go on. */
export interface Place {
  /** It has sent (or promised, by a continue token) everything up to `position`. */
  moved(position: string): void;
  /** Why it cannot go on (the list failed, or an object came in behind where it had got), if it cannot. */
  stopped(): Error | undefined;
}

/** A page to send: the snapshot it is read from (held), where in it the page starts, and how many it holds. */
export interface PagePlan {
  lease: Lease;
  /** The key the page starts after (`""`: the first). */
  after: string;
  limit: number | undefined;
  /** Items sent in the pages before. */
  sent: number;
}

/** Which snapshot, and where in it, a list reads; the snapshot is held from the moment it is chosen. */
export async function listPlan(source: ListSource, options: ListOptions): Promise<Result<PagePlan>> {
  if (options.continue) {
    const cursor = decodeContinue(options.continue);
    if (!cursor) return { ok: false, status: badRequest("continue key is not valid: it was not issued by this relay") };
    // The count sent before stays an estimate at another state: remainingItemCount is one.
    if (cursor.rv === LATEST) return { ok: true, value: { lease: source.snapshots.hold(source.head()), after: cursor.start, limit: options.limit, sent: cursor.sent } };
    if (!exactly(source, cursor.rv) || source.refuses?.(cursor)) return { ok: false, status: continueExpired(encodeContinue({ ...cursor, rv: LATEST, staged: undefined })) };
    return { ok: true, value: { lease: source.snapshots.hold(cursor.rv), after: cursor.start, limit: options.limit, sent: cursor.sent } };
  }
  let rv = source.head();
  if (options.resourceVersion.kind === "exact") {
    const requested = options.resourceVersion.rv;
    const exact = readsExactly(options);
    if (!(await source.waitFor(requested, AHEAD_WAIT_MS))) return { ok: false, status: tooLargeResourceVersion(requested, source.head()) };
    if (exact && !exactly(source, requested)) return { ok: false, status: expired("The resourceVersion for the provided list is too old.") };
    rv = exact ? requested : source.head();
  }
  // Held at once, in the turn it was chosen in: a change committed before would not keep what it sees.
  return { ok: true, value: { lease: source.snapshots.hold(rv), after: "", limit: options.limit, sent: 0 } };
}

function exactly(source: Pick<ListSource, "head" | "snapshots">, rv: number): boolean {
  return source.head() === rv || source.snapshots.kept(rv);
}

/** A list of the state at exactly its resourceVersion (`Exact`, or a `limit` without a match), not of one at least as new. */
const readsExactly = (options: ListOptions): boolean => options.resourceVersionMatch === "Exact" || (options.resourceVersionMatch === undefined && options.limit !== undefined);

/**
 * Whether the snapshot a list asks for is one this hub can read: a continue token's, or an exact
 * resourceVersion's at or behind its head, it holds (current, or kept); any other list reads the
 * current state (or waits for one ahead). A hot key's replica sends a list it cannot read to its root.
 */
export function holdsSnapshot(source: Pick<ListSource, "head" | "snapshots">, options: ListOptions): boolean {
  if (options.continue) {
    const cursor = decodeContinue(options.continue);
    return cursor === undefined || exactly(source, cursor.rv);
  }
  if (options.resourceVersion.kind !== "exact" || !readsExactly(options)) return true;
  const requested = options.resourceVersion.rv;
  return requested > source.head() || exactly(source, requested);
}

/** What the hub reads lists from: its identity's kinds, its state, and how to wait for a resourceVersion; its own name, for its continue tokens. */
export interface ListReader extends ListSource {
  readonly hub: string;
  readonly listKind: string;
  readonly apiVersion: string;
  readonly collection: ListSource["collection"] & Pick<Collection, "joinedPage">;
}

/** What the hub reads lists and gets from: its collection. */
export interface Reader extends ListReader {
  readonly collection: ListReader["collection"] & Pick<Collection, "get">;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

/** How a list is to be written: gzip-coded when the client takes it, and who counts how its compression went. */
export interface ListCoding {
  gzip: boolean;
  /** The list went gzip-coded: compressed for it, or `shared` from another request's compression of the same page. */
  compressed?(shared: boolean): void;
}

/** A list request's response: a page of the snapshot its options select, or their Status. */
export async function serveList(reader: ListReader, key: WatchKey, options: ListOptions, coding?: ListCoding): Promise<Response> {
  const planned = await listPlan(reader, options);
  if (!planned.ok) return statusResponse(planned.status);
  const { lease, after, limit, sent } = planned.value;
  const shard = options.shardSelector;
  const admits = shard && ((json: string) => admitsObject(shard, json));
  const place = reader.growing?.place();
  let next: string | undefined;
  let remaining: number | undefined;
  if (limit !== undefined) {
    try {
      const last = await pageEnd(reader, place, lease.rv, after, limit, admits);
      if (last !== undefined && (await pageEnd(reader, place, lease.rv, last, 1, admits)) !== undefined) {
        next = encodeContinue({ rv: lease.rv, start: last, sent: sent + limit, hub: reader.hub, staged: reader.growing?.open });
        // The page is promised up to its last key: what comes in behind it later, it lacks.
        place?.moved(last);
        reader.snapshots.keep(lease.rv);
        // As the API server: an estimate of what is left, only when nothing is filtered out.
        // At least the next page's first: after a token for the latest state, the count sent is of another state.
        const size = reader.collection.sizeAt(lease.rv);
        if (!key.labelSelector && !key.fieldSelector && !shard && size !== undefined) remaining = Math.max(1, size - (sent + limit));
      }
    } catch (e) {
      lease.release();
      if (!(e instanceof ListStopped)) throw e;
      return statusResponse(serviceUnavailable(`${e.message}; ask again`, 1));
    }
  }
  const head: ListHead = {
    listKind: reader.listKind,
    apiVersion: reader.apiVersion,
    resourceVersion: lease.rv,
    continue: next,
    remainingItemCount: remaining,
    shardInfo: shard && { selector: shard.selector },
  };
  const body = () => listBody(head, reader, lease, after, limit, place && { place, promised: next !== undefined }, admits);
  // A list still being staged is read as it fills, at its own pace: written as it goes, not shared.
  if (!coding?.gzip || reader.growing) return new Response(body(), { headers: { ...JSON_HEADERS, vary: "accept-encoding" } });
  const page = `${reader.hub}\u0000${reader.snapshots.history}\u0000${after}\u0000${limit ?? ""}\u0000${JSON.stringify(head)}`;
  const compressed = LIST_GZIP.open(page, body);
  // Read from another request's compression: this one's hold on the snapshot is not needed.
  if (compressed.shared) lease.release();
  coding.compressed?.(compressed.shared);
  return new Response(compressed.body, { headers: { ...JSON_HEADERS, vary: "accept-encoding", "content-encoding": "gzip" }, encodeBody: "manual" });
}

/** A list still being staged stopped what was reading it (`Growing.stops`). */
class ListStopped extends Error {}

/** Wait for `growing` to grow; a reader at `place` it stops is stopped here. */
async function grown(growing: Growing, place: Place | undefined): Promise<void> {
  await growing.grown();
  const stop = place?.stopped();
  if (stop) throw new ListStopped(stop.message);
}

/**
 * The key of the `count`-th object after `after` in the snapshot (of those `admits` lets
 * through, a shard's), or `undefined` if there are fewer: where a page ends, found before the
 * page is written, since its continue token comes first. A list still being staged is waited
 * for until it has that many, or is whole.
 */
async function pageEnd(source: ListSource, place: Place | undefined, rv: number, after: string, count: number, admits: ((json: string) => boolean) | undefined): Promise<string | undefined> {
  const { collection, growing } = source;
  let from = after;
  let left = count;
  for (;;) {
    const open = growing?.open === true;
    if (!admits) {
      const key = collection.keyAfter(rv, after, count);
      if (key !== undefined) return key;
    } else {
      for (;;) {
        const { rows, more } = collection.page(rv, from, ROWS);
        for (const row of rows) if (admits(row.json) && --left === 0) return row.key;
        if (rows.length > 0) from = (rows.at(-1) as StoredObject).key;
        if (!more || rows.length === 0) break;
      }
    }
    if (!open || !growing) return undefined;
    await grown(growing, place);
  }
}

/** A get: the named object (of `namespace`, which a hub of every namespace serves too) of the current state, or 404. */
export function serveGet(reader: Reader, key: WatchKey, namespace: string | undefined, name: string): Response {
  const found = reader.collection.get(metaNamespaceKey(namespace, name));
  if (!found) return statusResponse(notFound(key.resource, name, key.group));
  return new Response(`${found.json}\n`, { headers: JSON_HEADERS });
}

const encoder = new TextEncoder();

/** What a list body reads its items from. */
type ListRows = Pick<Collection, "page" | "joinedPage">;

/** A pull of the body reads storage until it holds this much, or the list ends (a read may hold more: up to `READ_BYTES`, or one object). */
const CHUNK = 256 * 1024;
/** Rows read from storage at a time, at most (and at most `READ_BYTES` of them, `collection.ts`). */
const ROWS = 256;

interface ListHead {
  listKind: string;
  apiVersion: string;
  resourceVersion: number;
  /** Token for the next page, when there is one. */
  continue?: string | undefined;
  /** Items after this page; the API server gives it only for unfiltered lists. */
  remainingItemCount?: number | undefined;
  /** The shard selector the list was filtered by (KEP-5866), echoed. */
  shardInfo?: { selector: string } | undefined;
}

/**
 * A list body as a stream, read from the held snapshot as the runtime pulls it; the hold ends
 * with the body (read to the end, or cancelled by the client). A snapshot lost meanwhile (a
 * reader slower than snapshots are kept, or a new history) ends the body with an error, as a
 * broken connection: a list cannot say so once its items have begun. So does a list still
 * being staged that fails, or that stops the body at its place (`staged`: moved as it reads,
 * unless the page was promised, by its continue token, up to its last key); a read of one that
 * comes up short sends what it has and waits for more.
 */
function listBody(
  head: ListHead,
  source: { collection: ListRows; growing?: Growing | undefined },
  lease: Lease,
  start: string,
  limit: number | undefined,
  staged: { place: Place; promised: boolean } | undefined,
  admits?: (json: string) => boolean,
): ReadableStream<Uint8Array> {
  const { collection, growing } = source;
  let after = start;
  let left = limit ?? Number.POSITIVE_INFINITY;
  let opened = false;
  let written = 0;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: Error) => {
    lease.release();
    controller.error(error);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const parts: Uint8Array[] = [];
      let size = 0;
      const put = (bytes: Uint8Array) => {
        parts.push(bytes);
        size += bytes.length;
      };
      if (!opened) put(encoder.encode(`{"kind":"${head.listKind}","apiVersion":"${head.apiVersion}","metadata":${JSON.stringify(listMeta(head))},"items":[`));
      opened = true;
      let done = false;
      while (size < CHUNK) {
        const stop = staged?.place.stopped();
        if (stop) return fail(controller, stop);
        if (!lease.alive) return fail(controller, new Error("the list's snapshot is gone (a reader slower than snapshots are kept, or a new history of the collection)"));
        const open = growing?.open === true;
        const items = left > 0 ? nextItems(collection, lease.rv, after, left, admits) : undefined;
        if (items && items.count > 0) {
          if (written > 0) put(encoder.encode(","));
          put(items.bytes);
          written += items.count;
          left -= items.count;
        }
        if (items && items.last !== after) {
          after = items.last;
          if (!staged?.promised) staged?.place.moved(after);
        }
        if (left <= 0 || (!items?.more && !open)) {
          done = true;
          break;
        }
        // Caught up with a list still being staged: what was read goes now, and the next pull waits for more.
        if (!items?.more && growing) {
          if (size > 0) break;
          await growing.grown();
        }
      }
      if (done) {
        lease.release();
        put(encoder.encode("]}\n"));
      }
      for (const part of parts) controller.enqueue(part);
      if (done) controller.close();
    },
    cancel() {
      lease.release();
    },
  });
}

/**
 * The next of a list's items after `after`, up to `left` (and a read of storage), as their JSON joined
 * by commas, in UTF-8: `last` is the last key read, `more` whether rows may follow it.
 */
function nextItems(collection: ListRows, rv: number, after: string, left: number, admits: ((json: string) => boolean) | undefined): { bytes: Uint8Array; count: number; last: string; more: boolean } {
  if (!admits) {
    const page = collection.joinedPage(rv, after, Math.min(ROWS, left));
    return { ...page, more: page.more && page.count > 0 };
  }
  // Filtered, a page of rows may hold fewer of the page's objects than are left to send.
  const read = collection.page(rv, after, ROWS);
  const rows = read.rows;
  const json: string[] = [];
  let last = after;
  let more = read.more && rows.length > 0;
  for (const row of rows) {
    if (json.length >= left) {
      more = true;
      break;
    }
    last = row.key;
    if (admits(row.json)) json.push(row.json);
  }
  return { bytes: encoder.encode(json.join(",")), count: json.length, last, more };
}

function listMeta(head: ListHead): Record<string, string | number | { selector: string }> {
  const meta: Record<string, string | number | { selector: string }> = { resourceVersion: String(head.resourceVersion) };
  if (head.continue) meta.continue = head.continue;
  if (head.remainingItemCount !== undefined) meta.remainingItemCount = head.remainingItemCount;
  if (head.shardInfo) meta.shardInfo = head.shardInfo;
  return meta;
}
