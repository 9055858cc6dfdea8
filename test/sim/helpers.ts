/**
 * @module
 * Test helpers for the simulator: JSON requests and a watch-stream reader that hands out
 * events as they arrive (await the next event; no sleeping).
 */
import { LineSplitter } from "../../src/k8s/ndjson.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export async function request<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

export const sendJson = (url: string, method: string, body: unknown, contentType = "application/json") =>
  request(url, { method, headers: { "Content-Type": contentType }, body: JSON.stringify(body) });

/** A watch stream being read: `next()` resolves with the next line, `ended` when the body ends. */
export class WatchReader {
  readonly status: number;
  readonly headers: Headers;
  /** Every line received so far, raw. */
  readonly lines: string[] = [];
  readonly #splitter = new LineSplitter();
  readonly #controller: AbortController;
  #cursor = 0;
  #done = false;
  #waiters: Array<() => void> = [];
  /** Resolves when the body ends: `error` is set if it ended abruptly. */
  readonly ended: Promise<{ error?: unknown; pending: number }>;

  constructor(res: Response, controller: AbortController) {
    this.status = res.status;
    this.headers = res.headers;
    this.#controller = controller;
    this.ended = this.#pump(res);
  }

  async #pump(res: Response): Promise<{ error?: unknown; pending: number }> {
    let error: unknown;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        this.lines.push(...this.#splitter.push(chunk));
        this.#wake();
      }
    } catch (e) {
      error = e;
    }
    this.#done = true;
    this.#wake();
    return { error, pending: this.#splitter.pending };
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The next raw line; rejects if the stream ends first. */
  async nextLine(timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.#cursor >= this.lines.length) {
      if (this.#done) throw new Error(`watch stream ended; lines so far:\n${this.lines.join("\n").slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`no watch line within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lines[this.#cursor++]!;
  }

  async next(timeoutMs?: number): Promise<WatchEvent<any>> {
    return JSON.parse(await this.nextLine(timeoutMs));
  }

  /** Read events until `predicate` holds; returns all events read, the matching one last. */
  async until(predicate: (e: WatchEvent<any>) => boolean, timeoutMs?: number): Promise<WatchEvent<any>[]> {
    const seen: WatchEvent<any>[] = [];
    for (;;) {
      const event = await this.next(timeoutMs);
      seen.push(event);
      if (predicate(event)) return seen;
    }
  }

  /** How many lines arrived that `next()` has not returned yet. */
  get unread(): number {
    return this.lines.length - this.#cursor;
  }

  close(): void {
    this.#controller.abort();
  }
}

export async function openWatch(url: string, headers: Record<string, string> = {}): Promise<WatchReader> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  return new WatchReader(res, controller);
}

export const podNames = (objects: KubeObject[]): string[] => objects.map((o) => o.metadata?.name ?? "");

/** A minimal pod manifest for writes. */
export function podManifest(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: "main", image: "busybox:1.36" }] },
  };
}
