/**
 * @module
 * Which snapshot a list request gets, by the watch cache's rules (apiserver
 * `pkg/storage/cacher/delegator/interface.go`, `watch_cache.go`; see `options.ts` for the
 * validation that came first):
 * - `resourceVersion` unset or `0`: the hub's current state;
 * - `N`, or `N` with `resourceVersionMatch=NotOlderThan`: current, once the hub has reached `N`
 *   (waiting up to 3 s, then 504 Too large resource version);
 * - `N` with `limit` and no match, or `resourceVersionMatch=Exact`: the state at exactly `N`, if
 *   it is current or retained, else 410;
 * - `continue`: the next page of the token's snapshot, or 410 once it is gone.
 */
import type { ListOptions, Parsed } from "../k8s/options.ts";
import { badRequest, expired, tooLargeResourceVersion } from "../k8s/status.ts";
import { decodeContinue, page, type Page, type Snapshot, type SnapshotStore } from "./pages.ts";

/** How long a request for a resourceVersion ahead of the hub waits for it (`blockTimeout`). */
export const AHEAD_WAIT_MS = 3000;

export interface ListSource {
  /** The hub's current state. */
  current(): Snapshot;
  /** Resolves `true` once the hub has reached `rv`, `false` after `ms`. */
  waitFor(rv: number, ms: number): Promise<boolean>;
  readonly snapshots: SnapshotStore;
}

const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";

export async function listPage(source: ListSource, options: ListOptions, now: number): Promise<Parsed<Page>> {
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
