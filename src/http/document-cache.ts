/**
 * @module
 * The upstream's discovery and OpenAPI documents, cached in the isolate. Every resource request
 * is resolved through discovery and kubectl asks for it on every invocation, and OpenAPI
 * documents are megabytes that kubectl fetches before `explain` and any write: without a cache
 * each of them would cost the API server a request. An answer is fresh for a TTL; concurrent
 * misses share one upstream request; when the upstream fails, the last good answer is served for
 * a while longer (a brief outage must not take every path down with it). Only answers that
 * describe the cluster are kept: `200` and `404` (a group/version it does not serve). A document
 * larger than the whole bound is not read past it: the upstream is then reported as unable to
 * answer, as no isolate can hold what it would take.
 */
import { readAtMost } from "../bounded-read.ts";
import { join } from "./shared-work.ts";

/** One upstream answer, as the upstream gave it. */
export interface UpstreamDocument {
  status: 200 | 404;
  contentType: string;
  body: Uint8Array;
  /** The validators and caching headers the upstream sent, lower-case (`etag`, `cache-control`, ...). */
  headers: Record<string, string>;
}

/** Fetches a path upstream with the given Accept; rejects when the upstream is unreachable. */
export type DocumentFetch = (path: string, accept: string) => Promise<Response>;

/** The upstream cannot answer and no answer recent enough is cached; the message names the cause. */
export class DocumentUnavailable extends Error {}

export interface DocumentCacheOptions {
  /** What the documents are, for messages: `discovery`, `OpenAPI`. */
  what: string;
  /** How long an answer is served without asking the upstream again. */
  ttlMs: number;
  /** How old an answer may be and still stand in for an upstream that fails. */
  staleMs: number;
  /** Bound on the cached bodies' total length; the least recently fetched go first. */
  maxBytes: number;
  now: () => number;
  /** How long a request waits on another's fetch before fetching anew (`shared-work.ts`; `JOIN_WAIT_MS` by default). */
  joinWaitMs?: number;
}

interface Entry {
  document: UpstreamDocument;
  fetchedAt: number;
}

/** Headers worth keeping with a document: how clients may cache it and revalidate it. */
const KEPT_HEADERS = ["etag", "last-modified", "cache-control", "expires", "vary"];

export class DocumentCache {
  readonly #options: DocumentCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<UpstreamDocument>>();
  #bytes = 0;

  constructor(options: DocumentCacheOptions) {
    this.#options = options;
  }

  /** The document at `path` of `cluster` in the representation `accept` asks for. Throws `DocumentUnavailable`. */
  get(cluster: string, path: string, accept: string, fetch: DocumentFetch): Promise<UpstreamDocument> {
    const key = JSON.stringify([cluster, path, accept]);
    const entry = this.#entries.get(key);
    if (entry && this.#options.now() - entry.fetchedAt < this.#options.ttlMs) return Promise.resolve(entry.document);
    const pending = this.#inflight.get(key);
    if (pending)
      return join(
        pending,
        () => {
          // Not settled in time: the request that started it may be gone (`shared-work.ts`); start anew, or join whoever did.
          if (this.#inflight.get(key) === pending) this.#inflight.delete(key);
          return this.get(cluster, path, accept, fetch);
        },
        this.#options.joinWaitMs,
      );
    const started = this.#refresh(key, path, accept, fetch).finally(() => {
      if (this.#inflight.get(key) === started) this.#inflight.delete(key);
    });
    this.#inflight.set(key, started);
    return started;
  }

  async #refresh(key: string, path: string, accept: string, fetch: DocumentFetch): Promise<UpstreamDocument> {
    let cause: string;
    try {
      const response = await fetch(path, accept);
      if (response.status === 200 || response.status === 404) {
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = response.headers.get(name);
          if (value !== null) headers[name] = value;
        }
        const document: UpstreamDocument = {
          status: response.status,
          contentType: response.headers.get("content-type") ?? "application/json",
          body: await readBounded(response, this.#options.maxBytes),
          headers,
        };
        this.#store(key, document);
        return document;
      }
      cause = await describeFailure(response);
    } catch (e) {
      cause = (e as Error).message;
    }
    const last = this.#entries.get(key);
    if (last && this.#options.now() - last.fetchedAt < this.#options.staleMs) return last.document;
    throw new DocumentUnavailable(`the upstream API server did not answer ${this.#options.what} for ${path}: ${cause}`);
  }

  #store(key: string, document: UpstreamDocument): void {
    this.#forget(key);
    this.#entries.set(key, { document, fetchedAt: this.#options.now() });
    this.#bytes += document.body.byteLength;
    // Map order is insertion order, and a refreshed entry is re-inserted: the first is the oldest.
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#options.maxBytes || oldest === key) break;
      this.#forget(oldest);
    }
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.document.body.byteLength;
    this.#entries.delete(key);
  }
}

/** The body, or an error once it grows past `max` bytes (the rest is not read). */
async function readBounded(response: Response, max: number): Promise<Uint8Array> {
  const tooLarge = () => new Error(`the document is larger than the ${max} bytes the relay keeps`);
  if (Number(response.headers.get("content-length") ?? 0) > max) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const head = await readAtMost(response.body, max);
  if (!head.whole) throw tooLarge();
  return head.bytes;
}

/** What went wrong upstream, in words an operator can act on. */
async function describeFailure(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  let message = text.slice(0, 200);
  try {
    const status = JSON.parse(text) as { kind?: string; message?: string };
    if (status.kind === "Status" && status.message) message = status.message;
  } catch {
    // not a Status body; keep the text
  }
  const hint = response.status === 401 || response.status === 403 ? " (check the relay's upstream token and its RBAC)" : "";
  return `HTTP ${response.status}${message ? `: ${message}` : ""}${hint}`;
}
