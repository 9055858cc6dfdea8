/**
 * @module
 * The open watch streams of one simulator: listed in stats, and the target of control actions
 * that act on every open stream at once (faults, bookmark interval changes, shutdown).
 */
import type { WatchStream } from "./watch.ts";

export interface ActiveWatch {
  id: number;
  path: string;
  labelSelector: string;
  fieldSelector: string;
  resourceVersion: string;
  /** When the stream started (ISO 8601). */
  since: string;
  /** Written but not yet taken by the client's connection: how far behind its reader is. */
  bufferedBytes: number;
}

export class Watchers {
  readonly #open = new Set<WatchStream>();
  #nextId = 1;

  nextId(): number {
    return this.#nextId++;
  }

  add(stream: WatchStream): void {
    if (!stream.closed) this.#open.add(stream);
  }

  remove(stream: WatchStream): void {
    this.#open.delete(stream);
  }

  list(): ActiveWatch[] {
    return [...this.#open].map((w) => ({
      id: w.id,
      path: w.path,
      labelSelector: w.labelSelector,
      fieldSelector: w.fieldSelector,
      resourceVersion: w.resourceVersion,
      since: w.since,
      bufferedBytes: w.bufferedBytes,
    }));
  }

  /** Run `action` on every stream open now (a copy, since actions may close streams). */
  forEach(action: (stream: WatchStream) => void): void {
    for (const stream of [...this.#open]) action(stream);
  }

  reset(): void {
    this.forEach((w) => w.end());
    this.#nextId = 1;
  }
}
