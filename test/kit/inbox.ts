/**
 * An awaitable queue: whatever a test receives in the background (WebSocket messages, lines of
 * a response body, a client's updates) is pushed in, and the test awaits it item by item. Every
 * wait has a deadline, and a failed wait says what was awaited and what arrived instead. Works in
 * Node and in workerd.
 */
import { SAFETY_TIMEOUT_MS } from "./wait.ts";

/** How a stream ended: a WebSocket's close code and reason, or the error a body ended with. */
export interface Ending {
  code?: number;
  reason?: string;
  error?: unknown;
}

/** How many of the latest items a failure quotes. */
const QUOTED = 5;

export class Inbox<T> {
  readonly #items: T[] = [];
  /** The latest items pushed, taken or not, for failure messages. */
  readonly #recent: T[] = [];
  #received = 0;
  #ended: Ending | undefined;
  readonly #waiters = new Set<() => void>();

  push(item: T): void {
    this.#items.push(item);
    this.#received++;
    this.#recent.push(item);
    if (this.#recent.length > QUOTED) this.#recent.shift();
    this.#wake();
  }

  /** The stream ended: waits for more than is there fail at once. The first ending counts. */
  end(ending: Ending = {}): void {
    this.#ended ??= ending;
    this.#wake();
  }

  /** How the stream ended, once it has. */
  get ended(): Ending | undefined {
    return this.#ended;
  }

  /** Items received and not taken yet. */
  get size(): number {
    return this.#items.length;
  }

  /** Everything received so far, without waiting. */
  drain(): T[] {
    return this.#items.splice(0);
  }

  async next(what = "an item", ms = SAFETY_TIMEOUT_MS): Promise<T> {
    return (await this.take(1, what, ms))[0]!;
  }

  async take(n: number, what = `${n} items`, ms = SAFETY_TIMEOUT_MS): Promise<T[]> {
    await this.#wait(
      () => this.#items.length >= n,
      what,
      ms,
      () => `${this.#items.length} of ${n} here`,
    );
    return this.#items.splice(0, n);
  }

  /** Items up to and including the first that matches, all within `ms`. */
  async until(match: (item: T) => boolean, what: string, ms = SAFETY_TIMEOUT_MS): Promise<T[]> {
    const taken: T[] = [];
    const found = () => {
      const index = this.#items.findIndex(match);
      for (const item of this.#items.splice(0, index < 0 ? this.#items.length : index + 1)) taken.push(item);
      return index >= 0;
    };
    await this.#wait(found, what, ms, () => `${taken.length} taken, none matching`);
    return taken;
  }

  /** Wait until the stream ends. */
  async closed(what = "the stream to end", ms = SAFETY_TIMEOUT_MS): Promise<Ending> {
    await this.#wait(
      () => this.#ended !== undefined,
      what,
      ms,
      () => `${this.#items.length} items not taken`,
    );
    return this.#ended!;
  }

  /** Wait until `ready()` holds; the stream's end fails the wait unless it is what `ready()` awaits. */
  async #wait(ready: () => boolean, what: string, ms: number, progress: () => string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (this.#ended) throw new Error(`the stream ended (${describeEnding(this.#ended)}) while waiting for ${what}: ${progress()}${this.#quote()}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${progress()}${this.#quote()}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, remaining);
        this.#waiters.add(wake);
      });
    }
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  #quote(): string {
    if (this.#received === 0) return "; nothing arrived";
    const latest = this.#recent.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join("\n");
    return `; ${this.#received} arrived in all, the latest:\n${latest.slice(-2000)}`;
  }
}

function describeEnding(ending: Ending): string {
  const parts: string[] = [];
  if (ending.code !== undefined) parts.push(`code ${ending.code}`);
  if (ending.reason) parts.push(`reason ${JSON.stringify(ending.reason)}`);
  if (ending.error !== undefined) parts.push(`error: ${String(ending.error)}`);
  return parts.join(", ") || "cleanly";
}
