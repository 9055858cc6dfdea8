/**
 * @module
 * The upstream's discovery documents, cached in the isolate. Every resource request is resolved
 * through discovery and kubectl asks for it on every invocation, so without a cache each of
 * them would cost the API server a request. An answer is fresh for a TTL; concurrent misses
 * share one upstream request; when the upstream fails, the last good answer is served for a
 * while longer (a brief outage must not take every path down with it). Only answers that
 * describe the cluster are kept: `200` and `404` (a group/version it does not serve).
 */

/** One discovery answer as the upstream gave it. */
export interface DiscoveryDocument {
  status: 200 | 404;
  contentType: string;
  body: string;
}

/** Fetches a discovery path upstream with the given Accept; rejects when the upstream is unreachable. */
export type DiscoveryFetch = (path: string, accept: string) => Promise<Response>;

/** The upstream cannot answer and no answer recent enough is cached; the message names the cause. */
export class DiscoveryUnavailable extends Error {}

export interface DiscoveryCacheOptions {
  /** How long an answer is served without asking the upstream again. */
  ttlMs: number;
  /** How old an answer may be and still stand in for an upstream that fails. */
  staleMs: number;
  /** Bound on the cached bodies' total length; the least recently fetched go first. */
  maxBytes: number;
  now: () => number;
}

interface Entry {
  document: DiscoveryDocument;
  fetchedAt: number;
}

export class DiscoveryCache {
  readonly #options: DiscoveryCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<DiscoveryDocument>>();
  #bytes = 0;

  constructor(options: DiscoveryCacheOptions) {
    this.#options = options;
  }

  /** The document at `path` of `cluster` in the representation `accept` asks for. Throws `DiscoveryUnavailable`. */
  get(cluster: string, path: string, accept: string, fetch: DiscoveryFetch): Promise<DiscoveryDocument> {
    const key = JSON.stringify([cluster, path, accept]);
    const entry = this.#entries.get(key);
    if (entry && this.#options.now() - entry.fetchedAt < this.#options.ttlMs) return Promise.resolve(entry.document);
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#refresh(key, path, accept, fetch).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    return pending;
  }

  async #refresh(key: string, path: string, accept: string, fetch: DiscoveryFetch): Promise<DiscoveryDocument> {
    let cause: string;
    try {
      const response = await fetch(path, accept);
      if (response.status === 200 || response.status === 404) {
        const document: DiscoveryDocument = {
          status: response.status,
          contentType: response.headers.get("content-type") ?? "application/json",
          body: await response.text(),
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
    throw new DiscoveryUnavailable(`the upstream API server did not answer discovery for ${path}: ${cause}`);
  }

  #store(key: string, document: DiscoveryDocument): void {
    this.#forget(key);
    this.#entries.set(key, { document, fetchedAt: this.#options.now() });
    this.#bytes += document.body.length;
    // Map order is insertion order, and a refreshed entry is re-inserted: the first is the oldest.
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#options.maxBytes || oldest === key) break;
      this.#forget(oldest);
    }
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.document.body.length;
    this.#entries.delete(key);
  }
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
