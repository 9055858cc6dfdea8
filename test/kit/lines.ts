/**
 * Lines of a byte stream as they arrive: a watch response's body (one JSON event per line), a
 * command's output. Split by the relay's own LineSplitter, so chunk boundaries fall anywhere;
 * read into an inbox, so each line is awaited with a deadline. Works in Node and in workerd.
 */
import { LineSplitter } from "../../src/k8s/ndjson.ts";
import type { WatchEvent } from "../../src/k8s/types.ts";
import { Inbox } from "./inbox.ts";

/** A response body, or a Node stream (a child's stdout). */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

/** How a body ended: `error` if it was cut or aborted, `pending` the bytes of an unfinished last line. */
export interface BodyEnd {
  error?: unknown;
  pending: number;
}

/**
 * Read `body` in the background, handing each line to `onLine`. `stop()` ends the reading: it
 * runs `stop` if given (an abort, a kill), else cancels the body.
 */
export function pumpLines(body: ByteSource, onLine: (line: string) => void, stop?: () => void): { ended: Promise<BodyEnd>; stop(): void } {
  const splitter = new LineSplitter();
  const chunks: { next(): Promise<IteratorResult<Uint8Array | string>>; cancel(): void } =
    "getReader" in body
      ? (() => {
          const reader = body.getReader();
          return { next: () => reader.read() as Promise<IteratorResult<Uint8Array>>, cancel: () => void reader.cancel().catch(() => undefined) };
        })()
      : (() => {
          const iterator = body[Symbol.asyncIterator]();
          return { next: () => iterator.next(), cancel: () => void iterator.return?.()?.catch(() => undefined) };
        })();
  const ended = (async (): Promise<BodyEnd> => {
    try {
      for (;;) {
        const { done, value } = await chunks.next();
        if (done) break;
        for (const line of splitter.push(value)) onLine(line);
      }
    } catch (error) {
      return { error, pending: splitter.pending };
    }
    return { pending: splitter.pending };
  })();
  return { ended, stop: stop ?? chunks.cancel };
}

/** A byte stream being read: `nextLine()` resolves with the next line, `ended` when the stream ends. */
export class LineReader {
  /** Every line received so far, raw. */
  readonly lines: string[] = [];
  readonly #unread = new Inbox<string>();
  /** Resolves when the stream ends: `error` is set if it ended abruptly. */
  readonly ended: Promise<BodyEnd>;
  readonly #stop: () => void;

  /** `stop`: how `close()` ends the stream (an abort, a kill); by default the body is cancelled. */
  constructor(body: ByteSource, stop?: () => void) {
    const pump = pumpLines(
      body,
      (line) => {
        this.lines.push(line);
        this.#unread.push(line);
      },
      stop,
    );
    this.ended = pump.ended;
    this.#stop = pump.stop;
    void this.ended.then((end) => this.#unread.end(end));
  }

  /** The next raw line; fails if the stream ends first, or after `ms`. */
  nextLine(what = "a line", ms?: number): Promise<string> {
    return this.#unread.next(what, ms);
  }

  /** Raw lines up to and including the first that matches, within `ms`. */
  untilLine(match: (line: string) => boolean, what: string, ms?: number): Promise<string[]> {
    return this.#unread.until(match, what, ms);
  }

  /** The next line, a watch event. */
  async next(what = "a watch event", ms?: number): Promise<WatchEvent<any>> {
    return JSON.parse(await this.nextLine(what, ms));
  }

  /** Read events until `predicate` holds; returns all events read, the matching one last. */
  async until(predicate: (e: WatchEvent<any>) => boolean, what = "a matching watch event", ms?: number): Promise<WatchEvent<any>[]> {
    const lines = await this.untilLine((line) => predicate(JSON.parse(line)), what, ms);
    return lines.map((line) => JSON.parse(line));
  }

  /** How many lines arrived that have not been read yet. */
  get unread(): number {
    return this.#unread.size;
  }

  close(): void {
    this.#stop();
  }
}

/** A watch response being read, line by line. */
export class WatchReader extends LineReader {
  readonly status: number;
  readonly headers: Headers;

  constructor(response: Response, stop?: () => void) {
    if (!response.body) throw new Error(`expected a response body, got ${response.status} without one`);
    super(response.body, stop);
    this.status = response.status;
    this.headers = response.headers;
  }
}

/** Fetch `url` and read its body; `close()` aborts the request. */
export async function openWatch(url: string, headers: Record<string, string> = {}): Promise<WatchReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  return new WatchReader(response, () => controller.abort());
}
