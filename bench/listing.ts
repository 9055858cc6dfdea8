/**
 * @module
 * Lists as a client reads them, timed: one GET (to its first byte and to its last), or a paged
 * list followed through its continue tokens. A list of 200,000 pods is about 700 MB, more than
 * a JavaScript string can hold, so a whole list is never kept or parsed: its items are counted
 * as the bytes arrive (`ItemCounter`); a page, being small, is parsed for its continue token.
 */
import { get } from "node:http";
import { createGunzip } from "node:zlib";

export interface TimedList {
  /** From the request to the first byte of the body, and to the last. */
  firstByteMs: number;
  ms: number;
  bytes: number;
  items: number;
  /** The list's `metadata` (a page's continue token, the resourceVersion); only when parsed. */
  metadata?: { resourceVersion?: string; continue?: string };
  /** It came gzip-coded (`bytes` are then the coded bytes on the wire). */
  coded?: boolean;
}

/**
 * Counts a list of pods' items in its bytes as they arrive, by the one `"metadata":{"name":` each
 * item has (a pod holds no other object metadata, and a list's own metadata has no name):
 * a native search, so counting costs the reader next to nothing.
 */
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

/**
 * GET `url`, timed to its first and last byte; its items counted, or with `parse` its body parsed
 * (for its metadata). Uncompressed, or with `gzip` asking for gzip (`bytes` are what came on the
 * wire; items are counted in what it decodes to). Rejects on any status but 200.
 */
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

export interface PagedList extends TimedList {
  pages: number;
  /** The slowest page, to its last byte. */
  maxPageMs: number;
}

/** The whole collection at `url` in pages of `limit`, following continue tokens; `firstByteMs` is the first page's. */
export async function pagedList(url: string, limit: number, { gzip = false } = {}): Promise<PagedList> {
  const started = performance.now();
  const join = url.includes("?") ? "&" : "?";
  let token: string | undefined;
  let first: number | undefined;
  let bytes = 0;
  let items = 0;
  let pages = 0;
  let maxPageMs = 0;
  let metadata: TimedList["metadata"];
  let coded = true;
  do {
    const page = await timedList(`${url}${join}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ""}`, { parse: true, gzip });
    first ??= page.firstByteMs;
    bytes += page.bytes;
    items += page.items;
    pages++;
    maxPageMs = Math.max(maxPageMs, page.ms);
    metadata = page.metadata;
    coded &&= page.coded === true;
    token = page.metadata?.continue || undefined;
  } while (token);
  return { firstByteMs: first ?? 0, ms: performance.now() - started, bytes, items, pages, maxPageMs, metadata, coded };
}
