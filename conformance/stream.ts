/**
 * @module
 * A watch as the checks read it, whatever carried it (an HTTP chunked stream, a WebSocket): the
 * next item, or a timeout, where an item is an event, something that is not a watch event, or
 * the end. A read that times out leaves nothing behind: the item it was waiting for is the next
 * read's.
 */
import { parseEventLine } from "../src/k8s/event.ts";
import type { KubeObject, WatchEvent } from "../src/k8s/types.ts";

export type StreamItem =
  | { kind: "event"; event: WatchEvent<KubeObject> }
  /** A line or message that is not one watch event. */
  | { kind: "garbage"; text: string }
  /** The stream ended: `code` and `reason` are a WebSocket's close, `error` a connection that failed. */
  | { kind: "end"; code?: number; reason?: string; error?: string };

export type Read = StreamItem | { kind: "timeout" };

/** One line (or message) as the item it is. */
export function itemOf(text: string): StreamItem {
  const event = parseEventLine<KubeObject>(text);
  return event ? { kind: "event", event } : { kind: "garbage", text: text.length > 120 ? `${text.slice(0, 120)}…` : text };
}

export class EventStream {
  readonly #items: AsyncIterator<StreamItem>;
  readonly #close: () => void;
  #pending: Promise<IteratorResult<StreamItem>> | undefined;
  #ended = false;

  constructor(items: AsyncIterator<StreamItem>, close: () => void) {
    this.#items = items;
    this.#close = close;
  }

  /** The next item, or `timeout` after `ms`; once ended, `end` again. */
  async next(ms: number): Promise<Read> {
    if (this.#ended) return { kind: "end" };
    this.#pending ??= this.#items.next();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
    try {
      const result = await Promise.race([this.#pending, late]);
      if (result === "timeout") return { kind: "timeout" };
      this.#pending = undefined;
      if (result.done || result.value.kind === "end") {
        this.#ended = true;
        return result.done ? { kind: "end" } : result.value;
      }
      return result.value;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.#close();
  }
}
