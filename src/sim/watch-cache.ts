/**
 * @module
 * The watch cache between etcd (the store) and the watches, as the API server's cacher is: it
 * takes every change in order, `watchDelayMs` after it was made (a cache behind etcd; 0: at
 * once), and hands it to every watch as it takes it. Its resourceVersion is the last change it
 * has taken: bookmarks carry it, and a watch-list waits for it to reach the revision it needs
 * (etcd's current one, without a resourceVersion) before its initial events, so its
 * initial-events-end bookmark comes once every watch has been handed what came before. Lists
 * and gets read the store, as the API server's consistent reads are as new as etcd. With
 * `chunkPerEvent` it takes one change a turn of the event loop: each watch writes that event
 * alone, and Node sends it (its own chunk) before the next is taken, as the API server flushes
 * every event of a burst as it dispatches it; otherwise changes made in one turn are written in
 * that turn, and leave together.
 */
import { VersionWaiters } from "../k8s/waiters.ts";
import type { Listener, Store, StoredEvent } from "./store.ts";

export class WatchCache {
  #rv: number;
  readonly #delayMs: () => number;
  readonly #chunkPerEvent: () => boolean;
  readonly #listeners = new Set<Listener>();
  readonly #waiters = new VersionWaiters();
  /** Changes made and not yet taken, in order, each with when it is due (ms since the epoch). */
  readonly #held: Array<{ due: number; event: StoredEvent }> = [];
  /** Cancels the next take of what is held (a timer, or the next turn). */
  #next: (() => void) | undefined;
  readonly #unsubscribe: () => void;

  /** Over `store` as it is now: its later changes reach the cache `delayMs()` after each is made, one a turn while `chunkPerEvent()`. */
  constructor(store: Store, delayMs: () => number, chunkPerEvent: () => boolean = () => false) {
    this.#rv = store.resourceVersion;
    this.#delayMs = delayMs;
    this.#chunkPerEvent = chunkPerEvent;
    this.#unsubscribe = store.subscribe((event) => this.#made(event));
  }

  /** The last change the cache has taken (and handed to every watch). */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** `listener` is handed each change as the cache takes it. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves `true` once the cache has taken `rv`, or `false` after `timeoutMs`. */
  waitFor(rv: number, timeoutMs: number): Promise<boolean> {
    return this.#waiters.wait(this.#rv, rv, timeoutMs);
  }

  close(): void {
    this.#unsubscribe();
    this.#next?.();
    this.#held.length = 0;
    this.#listeners.clear();
    this.#waiters.cancel();
  }

  #made(event: StoredEvent): void {
    const ms = this.#delayMs();
    if (ms <= 0 && this.#held.length === 0 && !this.#chunkPerEvent()) return this.#take(event);
    this.#held.push({ due: Date.now() + ms, event });
    if (!this.#next) this.#takeLater(ms);
  }

  /** Take what is due `ms` from now: in the next turn when that is now and changes go one a turn. */
  #takeLater(ms: number): void {
    if (ms <= 0 && this.#chunkPerEvent()) {
      const turn = setImmediate(() => this.#takeDue());
      this.#next = () => clearImmediate(turn);
    } else {
      const timer = setTimeout(() => this.#takeDue(), ms);
      this.#next = () => clearTimeout(timer);
    }
  }

  #takeDue(): void {
    this.#next = undefined;
    const one = this.#chunkPerEvent();
    while (this.#held.length > 0 && (this.#held[0] as { due: number }).due <= Date.now()) {
      this.#take((this.#held.shift() as { event: StoredEvent }).event);
      if (one) break;
    }
    const next = this.#held[0];
    if (next) this.#takeLater(Math.max(0, next.due - Date.now()));
  }

  /** Every watch is handed the change before anyone waiting for its revision goes on (the waiters resume in a later microtask). */
  #take(event: StoredEvent): void {
    this.#rv = event.rv;
    for (const listener of this.#listeners) listener(event);
    this.#waiters.reached(event.rv);
  }
}
