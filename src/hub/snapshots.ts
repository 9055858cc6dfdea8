/**
 * @module
 * The snapshots open on a hub's collection: each is the collection as it was at one
 * resourceVersion, read while it goes on changing (`collection.ts` keeps the versions an open
 * snapshot may see). Two kinds of holder: a reader that streams one (a list's body, a
 * subscriber's initial state or net changes) holds it until done, and paged lists keep the
 * newest few for their continue tokens, each for a while (410 once gone, as after an etcd
 * compaction). Both are bounded in time, so no reader, however slow, makes the hub keep versions
 * for ever: a snapshot past its time is gone, and a reader of it ends.
 *
 * Continue tokens have the API server's shape (apiserver `pkg/storage/continue.go`): base64url
 * of `{"v":"meta.k8s.io/v1","rv":R,"start":"<key>\u0000"}`, and the relay's count of items
 * already sent (`n`), for `remainingItemCount`, the hub that holds its snapshot (`h`), where
 * the Worker sends the next page of a hot key's list, and whether it was given out by the hub's
 * first list while that was being staged (`s`: `first-list.ts`). A negative `rv` (`LATEST`, what the 410 for
 * an expired token offers) reads on at the state of the moment: an inconsistent list.
 */
import { decodeBase64Url, encodeBase64Url } from "../k8s/base64url.ts";

export interface Cursor {
  /** The snapshot's resourceVersion; `LATEST`: the current state, whatever it is. */
  rv: number;
  /** The key the next page starts after. */
  start: string;
  /** Items sent in the pages before. */
  sent: number;
  /** The hub that holds its snapshot (of a hot key's tree, the one that served the page). */
  hub?: string | undefined;
  /** Given out by the hub's first list while it was being staged. */
  staged?: boolean | undefined;
}

const VERSION = "meta.k8s.io/v1";

/** A token's `rv` for "continue at the latest state", as the API server writes it (any negative reads so). */
export const LATEST = -1;

export function encodeContinue(cursor: Cursor): string {
  return encodeBase64Url(
    JSON.stringify({ v: VERSION, rv: cursor.rv, start: `${cursor.start}\u0000`, n: cursor.sent, ...(cursor.hub === undefined ? {} : { h: cursor.hub }), ...(cursor.staged ? { s: 1 } : {}) }),
  );
}

/** The cursor in a continue token, or `undefined` if it is not one of ours. */
export function decodeContinue(token: string): Cursor | undefined {
  try {
    const parsed = JSON.parse(decodeBase64Url(token) ?? "") as { v?: unknown; rv?: unknown; start?: unknown; n?: unknown; h?: unknown; s?: unknown };
    // 0 is no version at all, as the API server's decoder says; a negative one is the latest state.
    if (parsed.v !== VERSION || !Number.isSafeInteger(parsed.rv) || parsed.rv === 0 || typeof parsed.start !== "string") return undefined;
    return {
      rv: Math.max(parsed.rv as number, LATEST),
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL a continue token's start ends with, on purpose
      start: parsed.start.replace(/\u0000$/, ""),
      sent: typeof parsed.n === "number" && parsed.n >= 0 ? parsed.n : 0,
      hub: typeof parsed.h === "string" ? parsed.h : undefined,
      staged: parsed.s === 1 || undefined,
    };
  } catch {
    return undefined;
  }
}

/** A reader's hold on a snapshot. */
export interface Lease {
  readonly rv: number;
  /** The snapshot can still be read (not expired, nor ended by a new history). */
  readonly alive: boolean;
  release(): void;
}

export interface SnapshotLimits {
  /** Snapshots kept for continue tokens. */
  kept: number;
  /** How long a snapshot is kept for continue tokens, and the longest a reader may hold one. */
  ttlMs: number;
}

interface Held {
  readonly rv: number;
  readonly until: number;
  alive: boolean;
}

let histories = 0;

export class SnapshotRegistry {
  /** Which history of the collection its snapshots are of: another after a `reset`, so a resourceVersion names one state under it. */
  history = `${++histories}`;
  readonly #limits: SnapshotLimits;
  readonly #now: () => number;
  /** Snapshots kept for continue tokens, oldest first, by resourceVersion. */
  readonly #kept = new Map<number, number>();
  /** Readers' holds. */
  readonly #held = new Set<Held>();
  /** Told when the oldest snapshot open may have moved on (the collection drops what none can see). */
  onChange: (oldest: number | undefined) => void = () => undefined;

  constructor(limits: SnapshotLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** A reader takes the snapshot at `rv`, which must be the current state or one kept. */
  hold(rv: number): Lease {
    const held: Held = { rv, until: this.#now() + this.#limits.ttlMs, alive: true };
    this.#held.add(held);
    const expire = () => this.#expire();
    const changed = () => this.onChange(this.oldest());
    const holds = this.#held;
    return {
      rv,
      get alive() {
        expire();
        return held.alive;
      },
      release() {
        if (!holds.delete(held)) return;
        held.alive = false;
        changed();
      },
    };
  }

  /** Keep the snapshot at `rv` for continue tokens. */
  keep(rv: number): void {
    this.#kept.delete(rv);
    this.#kept.set(rv, this.#now() + this.#limits.ttlMs);
    while (this.#kept.size > this.#limits.kept) this.#kept.delete(this.#kept.keys().next().value as number);
    this.onChange(this.oldest());
  }

  /** Whether the snapshot at `rv` is kept for continue tokens. */
  kept(rv: number): boolean {
    this.#expire();
    return this.#kept.has(rv);
  }

  /** Whether a version made at `rv` and replaced now may be seen by an open snapshot (one at or after `rv`). */
  sees(rv: number): boolean {
    this.#expire();
    for (const kept of this.#kept.keys()) if (kept >= rv) return true;
    for (const held of this.#held) if (held.rv >= rv) return true;
    return false;
  }

  /** The oldest snapshot open, if any. */
  oldest(): number | undefined {
    let oldest: number | undefined;
    for (const rv of this.#kept.keys()) oldest = Math.min(oldest ?? rv, rv);
    for (const held of this.#held) oldest = Math.min(oldest ?? held.rv, held.rv);
    return oldest;
  }

  /** A new history: every snapshot of the old one is gone, and its readers end. */
  reset(): void {
    this.history = `${++histories}`;
    for (const held of this.#held) held.alive = false;
    this.#held.clear();
    this.#kept.clear();
    this.onChange(undefined);
  }

  #expire(): void {
    const now = this.#now();
    let changed = false;
    for (const [rv, until] of this.#kept) {
      if (until > now) continue;
      this.#kept.delete(rv);
      changed = true;
    }
    for (const held of this.#held) {
      if (held.until > now) continue;
      held.alive = false;
      this.#held.delete(held);
      changed = true;
    }
    if (changed) this.onChange(this.oldest());
  }
}
