/**
 * @module
 * Lists as a client reads them, timed, whole or paged. A list of 200,000 pods is more than a string
 * can hold, so a whole list's items are counted as the bytes arrive; a page is parsed.
 */
import { get } from "node:http";
import { createGunzip } from "node:zlib";

export interface TimedList {
  firstByteMs: number;
  ms: number;
  bytes: number;
  items: number;
  /** The list's `metadata` (a page's continue token, the resourceVersion); only when parsed. */
  metadata?: { resourceVersion?: string; continue?: string };
  /** It came gzip-coded (`bytes` are then the coded bytes on the wire). */
  coded?: boolean;
  /** Pages it took, for a paged list. */
  pages?: number;
}

/** Counts a pod list's items by the one `"metadata":{"name":` each has: a native search, next to free. */
export class ItemCounter {
  static readonly #MARKER = Buffer.from('"metadata":{"name":');
  items = 0;
  /** The end of the previous chunk, where a marker may have begun. */
  #tail: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const marker = ItemCounter.#MARKER;
    const text = this.#tail.length > 0 ? Buffer.concat([this.#tail, chunk]) : chunk;
    for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + marker.length)) this.items++;
    this.#tail = Buffer.from(text.subarray(Math.max(0, text.length - marker.length + 1)));
  }
}

/** GET `url`, timed; its items counted, or with `parse` its body parsed (for its metadata). */
export function timedList(url: string, { parse = false, gzip = false } = {}): Promise<TimedList> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { accept: "application/json", ...(gzip ? { "accept-encoding": "gzip" } : {}) } }, (response) => {
      if (response.statusCode !== 200) {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.length < 4 && chunks.push(c));
        response.on("end", () => reject(new Error(`${url}: HTTP ${response.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`)));
        return;
      }
      let firstByteMs: number | undefined;
      let bytes = 0;
      const counter = new ItemCounter();
      const chunks: Buffer[] = [];
      const coded = response.headers["content-encoding"] === "gzip";
      response.on("data", (c: Buffer) => {
        firstByteMs ??= performance.now() - started;
        bytes += c.length;
      });
      const body = coded ? response.pipe(createGunzip()) : response;
      body.on("data", (c: Buffer) => {
        if (parse) chunks.push(c);
        else counter.push(c);
      });
      body.on("end", () => {
        const ms = performance.now() - started;
        if (!parse) return resolve({ firstByteMs: firstByteMs ?? ms, ms, bytes, items: counter.items, coded });
        const list = JSON.parse(Buffer.concat(chunks).toString()) as { items: unknown[]; metadata?: TimedList["metadata"] };
        resolve({ firstByteMs: firstByteMs ?? ms, ms, bytes, items: list.items.length, metadata: list.metadata ?? {}, coded });
      });
      response.on("error", reject);
      body.on("error", reject);
    }).on("error", reject);
  });
}

/** The whole collection at `url` in pages of `limit`; `firstByteMs` is the first page's. */
export async function pagedList(url: string, limit: number, { gzip = false } = {}): Promise<TimedList> {
  const started = performance.now();
  const join = url.includes("?") ? "&" : "?";
  let token: string | undefined;
  let first: number | undefined;
  let bytes = 0;
  let items = 0;
  let pages = 0;
  let metadata: TimedList["metadata"];
  let coded = true;
  do {
    const page = await timedList(`${url}${join}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ""}`, { parse: true, gzip });
    first ??= page.firstByteMs;
    bytes += page.bytes;
    items += page.items;
    pages++;
    metadata = page.metadata;
    coded &&= page.coded === true;
    token = page.metadata?.continue || undefined;
  } while (token);
  return { firstByteMs: first ?? 0, ms: performance.now() - started, bytes, items, pages, metadata, coded };
}
