/**
 * @module
 * List bodies gzip-compressed once for every client that asks for the same one. A page of a
 * snapshot is the same bytes whoever reads it (its key names the hub's history, the snapshot's
 * resourceVersion, where the page starts and what it holds), so its compression is too: the
 * first read compresses it (one gzip member, which every gzip reader takes), the reads that
 * come while it is being made or held read the same compressed chunks. Compression is pulled
 * by whichever reader is ahead; nothing is compressed that no one reads.
 *
 * Bounded: a body is held for later reads while its compressed bytes are at most `entryMax`,
 * and bodies held for the isolate at most `budget` (the least recently read go first). A body
 * that grows past `entryMax` is shared only by the reads already on it, each chunk dropped once
 * the slowest of them has it; the one ahead waits while it is more than `entryMax` ahead of the
 * slowest (list readers that start together move together; each list's snapshot ends within
 * its lease, so no wait outlasts it).
 */

/** What the cache holds and how its bodies were served: read by the hub's metrics. */
export interface GzipCounts {
  /** Bodies compressed (each once, however many read it). */
  compressed: number;
  /** Reads served a body another read compressed. */
  shared: number;
}

interface Reader {
  /** The index of the next chunk it takes. */
  at: number;
}

class Entry {
  readonly key: string;
  /** Compressed chunks from `base` on (the ones before were dropped: every reader had them). */
  chunks: Uint8Array[] = [];
  base = 0;
  /** Bytes of `chunks`. */
  held = 0;
  /** Bytes compressed so far. */
  made = 0;
  done = false;
  failure: unknown;
  joinable = true;
  readonly readers = new Set<Reader>();
  readonly #source: ReadableStreamDefaultReader<Uint8Array>;
  #reading: Promise<void> | undefined;
  /** Told when the slowest reader moves on (a reader ahead may be waiting for it). */
  #moved: Array<() => void> = [];

  constructor(key: string, body: ReadableStream<Uint8Array>) {
    this.key = key;
    this.#source = body.pipeThrough(new CompressionStream("gzip")).getReader();
  }

  /** The next compressed chunk, once there is one (or the end, or the failure). */
  more(entryMax: number): Promise<void> {
    if (this.#reading) return this.#reading;
    const reading = (async () => {
      // Shared no more and too far ahead of its slowest reader: wait for it.
      while (!this.joinable && this.held > entryMax && this.readers.size > 1) await new Promise<void>((resolve) => this.#moved.push(resolve));
      try {
        const { value, done } = await this.#source.read();
        if (done) this.done = true;
        else if (value.length > 0) {
          this.chunks.push(value);
          this.held += value.length;
          this.made += value.length;
        }
      } catch (e) {
        this.failure = e ?? new Error("the list's compression failed");
      }
    })();
    this.#reading = reading.finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** Drop the chunks every reader has, once no later read can join. */
  trim(): void {
    if (this.joinable) return;
    let slowest = this.base + this.chunks.length;
    for (const reader of this.readers) slowest = Math.min(slowest, reader.at);
    while (this.base < slowest) {
      this.held -= (this.chunks.shift() as Uint8Array).length;
      this.base++;
    }
    for (const resolve of this.#moved.splice(0)) resolve();
  }

  cancel(reason: unknown): void {
    this.#source.cancel(reason).catch(() => undefined);
  }
}

export class SharedGzip {
  readonly #budget: number;
  readonly #entryMax: number;
  /** Bodies a read may join: being compressed, or whole and held; least recently read first. */
  readonly #entries = new Map<string, Entry>();
  readonly counts: GzipCounts = { compressed: 0, shared: 0 };

  constructor(budget: number, entryMax: number) {
    this.#budget = budget;
    this.#entryMax = Math.min(entryMax, budget);
  }

  /** Bytes of compressed chunks held for bodies a read may join. */
  get heldBytes(): number {
    let held = 0;
    for (const entry of this.#entries.values()) held += entry.held;
    return held;
  }

  /**
   * The gzip of the body `make` gives, the same for every read of `key`: shared with the reads
   * of it under way or held, else compressed for this one (and held for the next). `shared`
   * says which.
   */
  open(key: string, make: () => ReadableStream<Uint8Array>): { body: ReadableStream<Uint8Array>; shared: boolean } {
    let entry = this.#entries.get(key);
    const shared = entry !== undefined && entry.failure === undefined;
    if (entry && shared) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.counts.shared++;
    } else {
      entry = new Entry(key, make());
      this.#entries.set(key, entry);
      this.counts.compressed++;
    }
    return { body: this.#read(entry), shared };
  }

  /** Forget every body of which `prefix` starts the key (a hub's new history). */
  forget(prefix: string): void {
    for (const [key, entry] of this.#entries) if (key.startsWith(prefix)) this.#drop(entry);
  }

  #read(entry: Entry): ReadableStream<Uint8Array> {
    const reader: Reader = { at: 0 };
    entry.readers.add(reader);
    const leave = () => {
      entry.readers.delete(reader);
      entry.trim();
      if (entry.readers.size === 0 && (!entry.done || entry.failure !== undefined)) {
        // Left unfinished by its last reader: no one is compressing it any more.
        this.#drop(entry);
        entry.cancel("no reader left");
      }
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (;;) {
          if (reader.at < entry.base + entry.chunks.length) {
            const chunk = entry.chunks[reader.at - entry.base] as Uint8Array;
            reader.at++;
            entry.trim();
            // A copy: the runtime takes (detaches) the buffer of what a response's body gives it.
            controller.enqueue(chunk.slice());
            return;
          }
          if (entry.failure !== undefined) {
            leave();
            controller.error(entry.failure);
            return;
          }
          if (entry.done) {
            leave();
            controller.close();
            return;
          }
          await entry.more(this.#entryMax);
          this.#bound(entry);
        }
      },
      cancel: () => leave(),
    });
  }

  /** Hold the isolate's bodies to the budget, and a body past `entryMax` to the reads already on it. */
  #bound(entry: Entry): void {
    if (entry.failure !== undefined) this.#drop(entry);
    else if (entry.joinable && entry.made > this.#entryMax) {
      this.#drop(entry);
      entry.trim();
    }
    let held = this.heldBytes;
    for (const other of this.#entries.values()) {
      if (held <= this.#budget) break;
      if (other === entry) continue;
      held -= other.held;
      this.#drop(other);
      other.trim();
    }
  }

  #drop(entry: Entry): void {
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    entry.joinable = false;
  }
}

/**
 * Compressed list pages held for the isolate's hubs and list caches (an isolate has 128 MB, which
 * the window's lines and initial-state slices share): 8 MiB, a page held while its gzip is at
 * most 4 MiB (a page of 500 pods is about 30 KiB of it, a list of 10,000 under 1 MiB).
 */
export const LIST_GZIP = new SharedGzip(8 * 1024 * 1024, 4 * 1024 * 1024);
