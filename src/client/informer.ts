/**
 * @module
 * `informer()`: a live `Map` of a collection's objects, kept equal to the cluster's by one
 * resumable watch, with callbacks for each change. After a relist (410) the map is replaced
 * by the new list and the difference is reported: objects that went away while the watch was
 * disconnected are deleted, changed ones updated, so the map never keeps a stale object.
 */
import { objectKey } from "./keys.ts";
import type { KubeObject } from "../k8s/types.ts";
import { WatchError } from "./errors.ts";
import type { KubeResource, WatchOptions, WatchStatus, WatchUpdate } from "./types.ts";
import { watch } from "./watch.ts";

export interface InformerOptions<T> extends Omit<WatchOptions, "resourceVersion"> {
  /** An object appeared (also called for each object of the first list). */
  onAdd?(object: T): void;
  /** An object changed: its new and previous state. */
  onUpdate?(object: T, previous: T): void;
  /** An object went away, with its last known state. */
  onDelete?(object: T): void;
  /** The watch's lifecycle: listed, relisted, connected, resumed, closed, error. */
  onStatus?(status: WatchStatus<T>): void;
}

const versionOf = (object: KubeResource): string | undefined => object.metadata?.resourceVersion;

export class Informer<T extends KubeResource> {
  readonly #objects = new Map<string, T>();
  readonly #handlers: Pick<InformerOptions<T>, "onAdd" | "onUpdate" | "onDelete" | "onStatus">;
  readonly #stop = new AbortController();
  #resourceVersion: string | undefined;
  #markSynced!: () => void;
  #failSync!: (error: Error) => void;

  /** Resolves once the first list is in `objects`; rejects if the informer fails or stops first. */
  readonly synced: Promise<void>;
  /** Resolves when stopped; rejects with the `WatchError` (or a callback's error) that ended it. */
  readonly done: Promise<void>;

  constructor(url: string | URL, options: InformerOptions<T> = {}) {
    const { onAdd, onUpdate, onDelete, onStatus, ...watchOptions } = options;
    this.#handlers = { onAdd, onUpdate, onDelete, onStatus };
    this.synced = new Promise<void>((resolve, reject) => {
      this.#markSynced = resolve;
      this.#failSync = reject;
    });
    // `done` carries the failure; an unawaited `synced` must not report it a second time.
    this.synced.catch(() => undefined);
    const signal = watchOptions.signal ? AbortSignal.any([watchOptions.signal, this.#stop.signal]) : this.#stop.signal;
    const updates = watch<T>(url, { ...watchOptions, signal });
    this.done = this.#run(updates).then(
      () => this.#failSync(new WatchError("the informer stopped before its first list", { retryable: false })),
      (error: unknown) => {
        this.#failSync(error as Error);
        throw error;
      },
    );
  }

  /** The objects now, by `objectKey`. Read it; the informer is its only writer. */
  get objects(): ReadonlyMap<string, T> {
    return this.#objects;
  }

  /** The resourceVersion the map reflects (the last list, change or bookmark). */
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /** Close the watch. `done` resolves. */
  stop(): void {
    this.#stop.abort();
  }

  async #run(updates: AsyncGenerator<WatchUpdate<T>, void, undefined>): Promise<void> {
    for await (const update of updates) {
      switch (update.type) {
        case "ADDED":
        case "MODIFIED":
          this.#put(update.object);
          this.#resourceVersion = versionOf(update.object) ?? this.#resourceVersion;
          break;
        case "DELETED":
          this.#remove(update.object);
          this.#resourceVersion = versionOf(update.object) ?? this.#resourceVersion;
          break;
        case "BOOKMARK":
          this.#resourceVersion = update.resourceVersion;
          break;
        case "listed":
        case "relisted":
          this.#replace(update.items);
          this.#resourceVersion = update.resourceVersion;
          if (update.type === "listed") this.#markSynced();
          this.#handlers.onStatus?.(update);
          break;
        default:
          this.#handlers.onStatus?.(update);
      }
    }
  }

  #put(object: T): void {
    const key = objectKey(object);
    const previous = this.#objects.get(key);
    this.#objects.set(key, object);
    if (previous === undefined) this.#handlers.onAdd?.(object);
    else this.#handlers.onUpdate?.(object, previous);
  }

  #remove(object: T): void {
    const key = objectKey(object);
    if (!this.#objects.delete(key)) return;
    this.#handlers.onDelete?.(object);
  }

  /** Make the map equal to a list, reporting the difference (all adds, the first time). */
  #replace(items: readonly T[]): void {
    const listed = new Map(items.map((item) => [objectKey(item), item]));
    for (const [key, previous] of this.#objects) {
      if (listed.has(key)) continue;
      this.#objects.delete(key);
      this.#handlers.onDelete?.(previous);
    }
    for (const [key, object] of listed) {
      const previous = this.#objects.get(key);
      this.#objects.set(key, object);
      if (previous === undefined) this.#handlers.onAdd?.(object);
      else if (versionOf(previous) !== versionOf(object)) this.#handlers.onUpdate?.(object, previous);
    }
  }
}

/**
 * Keep a live map of a collection: `const pods = informer<Pod>(url, { onAdd, onUpdate, onDelete })`,
 * then `await pods.synced` and read `pods.objects`. Stop it with `pods.stop()`.
 * @throws TypeError at once if `url` is not a collection URL.
 */
export function informer<T extends KubeResource = KubeObject>(url: string | URL, options: InformerOptions<T> = {}): Informer<T> {
  return new Informer<T>(url, options);
}
