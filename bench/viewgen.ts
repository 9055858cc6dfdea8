/**
 * @module
 * The views scenario's clients and churn, in a process of its own so that their cost is measured
 * apart: live views (`?view=1&watch=1`), a full watch of the collection, notify-then-refetch
 * clients (each GETs its page again on every change it is told of, one request at a time), and
 * the churn (creates, deletes of what it created, label patches of shown pods), each write's
 * resourceVersion and written-at stamp kept. Latency is from a write to the frame (or page) whose
 * newer resourceVersion carries the row it changed; bytes are counted as received, keep-alives
 * included.
 */
import { get, request, type ClientRequest } from "node:http";
import type { RowChange } from "../src/k8s/view.ts";
import { WRITTEN_AT } from "../src/sim/store.ts";
import { methodsOf, serveParent } from "./children.ts";
import { ByteLines, eventVersion } from "./lines.ts";
import { Histogram, type HistogramEntries } from "./stats.ts";
import { viewQuery, type ViewQuery } from "./view-query.ts";

interface Row {
  key: string;
  resourceVersion: string;
}
type Frame = { type: "VIEW"; resourceVersion: string; rows: Row[] } | { type: "ROWS"; resourceVersion: string; changes: Array<RowChange<Row>> } | { type: "ERROR" };

/** What one kind of client received over the window. */
export interface Received {
  clients: number;
  /** Frames (views), events (the watch) or pages (refetch). */
  messages: number;
  bytes: number;
  /** Messages that carried a row change (not only the count). */
  withChanges: number;
  latency: HistogramEntries;
  errors: number;
}

export interface ViewgenReport {
  elapsedMs: number;
  /** Writes made (and answered) over the window. */
  writes: number;
  writeErrors: number;
  views: Received;
  watch: Received;
  refetch: Received;
}

class Tally {
  messages = 0;
  bytes = 0;
  withChanges = 0;
  errors = 0;
  /** [resourceVersion, received at]: matched with the writes at the report. */
  receipts: Array<[number, number]> = [];
  received(clients: number, written: ReadonlyMap<number, number>): Received {
    const latency = new Histogram();
    for (const [rv, at] of this.receipts) {
      const writtenAt = written.get(rv);
      if (writtenAt !== undefined) latency.add(at - writtenAt);
    }
    return { clients, messages: this.messages, bytes: this.bytes, withChanges: this.withChanges, latency: latency.entries(), errors: this.errors };
  }
}

/** A server error (5xx) answering a request: it is asked again. */
class ServerError extends Error {}

/** A notify-then-refetch client: its page's URL, whether it was told of a change since it last asked, and the page's resourceVersion. */
interface Refetcher {
  url: string;
  dirty: boolean;
  busy: boolean;
  head: number;
}

/** A seeded generator (mulberry32), so every run makes the same churn. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Viewgen {
  #measuring = false;
  #started = 0;
  #views = new Tally();
  #watch = new Tally();
  #refetch = new Tally();
  #writes = 0;
  #writeErrors = 0;
  /** Every write's resourceVersion → its written-at stamp (ms). */
  readonly #written = new Map<number, number>();
  readonly #viewStreams: ClientRequest[] = [];
  #watchStream: ClientRequest | undefined;
  readonly #refetchers: Refetcher[] = [];
  #churn: ReturnType<typeof setInterval> | undefined;
  #created: string[] = [];
  #count = 0;

  /** Open live views of `path`, each once its first frame (the window whole) has come. A view the relay answers with a server error is asked for again; how many were is returned. */
  async openViews({ base, path, queries }: { base: string; path: string; queries: ViewQuery[] }): Promise<number> {
    let refused = 0;
    await Promise.all(
      queries.map(async (q) => {
        for (let tries = 1; ; tries++) {
          try {
            return await this.#view(`${base}${path}?${viewQuery(q)}&watch=1`);
          } catch (e) {
            if (!(e instanceof ServerError) || tries === 5) throw e;
            refused++;
            await new Promise((resolve) => setTimeout(resolve, 300));
          }
        }
      }),
    );
    return refused;
  }

  #view(url: string): Promise<void> {
    /** The resourceVersion of the last frame: a row newer than it is a change the next frame carries. */
    let head = 0;
    return new Promise((resolve, reject) => {
      const req = get(url, { agent: false }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          const message = `view ${url}: HTTP ${response.statusCode}`;
          return reject((response.statusCode ?? 0) >= 500 ? new ServerError(message) : new Error(message));
        }
        this.#viewStreams.push(req);
        const lines = new ByteLines();
        response.on("data", (chunk: Buffer) => {
          if (this.#measuring) this.#views.bytes += chunk.length;
          lines.push(chunk, (line) => {
            const now = Date.now();
            // A frame that only moves the count has nothing to parse.
            const countOnly = line.includes('"changes":[]');
            const frame = countOnly ? undefined : (JSON.parse(line.toString()) as Frame);
            // The window whole: first, and again after a client fell behind or a new history.
            if (frame?.type === "VIEW") {
              head = Number(frame.resourceVersion);
              if (this.#measuring) this.#views.messages++;
              return resolve();
            }
            if (this.#measuring) {
              this.#views.messages++;
              if (frame?.type === "ROWS") this.#views.withChanges++;
            }
            if (frame?.type === "ROWS") {
              for (const change of frame.changes) {
                if (change.op !== "insert" && change.op !== "update") continue;
                const rv = Number(change.row.resourceVersion);
                if (rv > head && this.#measuring) this.#views.receipts.push([rv, now]);
              }
              head = Number(frame.resourceVersion);
            } else if (frame?.type === "ERROR" && this.#measuring) this.#views.errors++;
          });
        });
        response.on("close", () => {
          if (!req.destroyed && this.#measuring) this.#views.errors++;
        });
      });
      req.on("error", (e) => (head === 0 ? reject(e) : undefined));
    });
  }

  /** A full watch of the collection from `resourceVersion` (no initial state): its bytes and each event's latency. */
  openWatch({ url }: { url: string }): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = get(url, { agent: false }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`watch ${url}: HTTP ${response.statusCode}`));
        resolve();
        const lines = new ByteLines();
        response.on("data", (chunk: Buffer) => {
          if (!this.#measuring) return;
          this.#watch.bytes += chunk.length;
          lines.push(chunk, (line) => {
            this.#watch.messages++;
            this.#watch.withChanges++;
            const rv = eventVersion(line);
            if (rv > 0) this.#watch.receipts.push([rv, Date.now()]);
          });
        });
      });
      req.on("error", reject);
      this.#watchStream = req;
    });
  }

  /** Notify-then-refetch clients of `path`, one per query: each GETs its page again after every change it is told of. */
  refetchers({ base, path, queries }: { base: string; path: string; queries: ViewQuery[] }): void {
    for (const q of queries) this.#refetchers.push({ url: `${base}${path}?${viewQuery(q)}`, dirty: false, busy: false, head: 0 });
  }

  #refetchPage(client: Refetcher): void {
    if (client.busy || !client.dirty) return;
    client.dirty = false;
    client.busy = true;
    const done = () => {
      client.busy = false;
      this.#refetchPage(client);
    };
    get(client.url, { agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => {
        const now = Date.now();
        const body = Buffer.concat(chunks);
        if (response.statusCode !== 200) {
          if (this.#measuring) this.#refetch.errors++;
          return done();
        }
        const page = JSON.parse(body.toString()) as Extract<Frame, { type: "VIEW" }>;
        const head = Number(page.resourceVersion);
        if (this.#measuring) {
          this.#refetch.messages++;
          this.#refetch.bytes += body.length;
          let changed = false;
          for (const row of page.rows) {
            const rv = Number(row.resourceVersion);
            if (rv > client.head) {
              this.#refetch.receipts.push([rv, now]);
              changed = true;
            }
          }
          if (changed) this.#refetch.withChanges++;
        }
        client.head = head;
        done();
      });
    }).on("error", () => {
      if (this.#measuring) this.#refetch.errors++;
      done();
    });
  }

  /**
   * Churn at `rate` writes a second on `namespace`: creates (a copy of `template` under a new
   * name), deletes of the pods it created, and label patches of `visible` pods, in a mix that
   * keeps the collection's size.
   */
  startChurn({ simUrl, namespace, rate, template, visible, seed }: { simUrl: string; namespace: string; rate: number; template: unknown; visible: string[]; seed: number }): void {
    const next = random(seed);
    const pods = `${simUrl}/api/v1/namespaces/${namespace}/pods`;
    let last = performance.now();
    let budget = 0;
    const op = () => {
      const r = next();
      if (r < 0.3 || (r < 0.6 && this.#created.length === 0)) {
        const name = `churn-${this.#count++}`;
        this.#created.push(name);
        const t = template as { metadata: Record<string, unknown> };
        return this.#write("POST", pods, { ...t, metadata: { name, labels: t.metadata.labels } });
      }
      if (r < 0.6) return this.#write("DELETE", `${pods}/${this.#created.shift()}`);
      const name = visible[Math.floor(next() * visible.length)] as string;
      return this.#write("PATCH", `${pods}/${name.slice(name.indexOf("/") + 1)}`, { metadata: { labels: { "bench-tick": String(this.#count++) } } });
    };
    this.#churn = setInterval(() => {
      const now = performance.now();
      budget = Math.min(budget + (rate * (now - last)) / 1000, Math.max(1, rate));
      last = now;
      for (; budget >= 1; budget--) op();
    }, 10);
  }

  stopChurn(): void {
    clearInterval(this.#churn);
    this.#churn = undefined;
  }

  #write(method: "POST" | "PATCH" | "DELETE", url: string, body?: unknown): void {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
    const req = request(url, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => {
        if ((response.statusCode ?? 0) >= 300) {
          if (this.#measuring) this.#writeErrors++;
          return;
        }
        const object = JSON.parse(Buffer.concat(chunks).toString()) as { metadata?: { resourceVersion?: string; annotations?: Record<string, string> } };
        const rv = Number(object.metadata?.resourceVersion ?? 0);
        const at = Number(object.metadata?.annotations?.[WRITTEN_AT] ?? 0);
        if (method !== "DELETE" && rv > 0 && at > 0) this.#written.set(rv, at);
        if (this.#measuring) this.#writes++;
        // The refetching clients are told of the change (what telling them costs is not counted).
        for (const client of this.#refetchers) {
          client.dirty = true;
          this.#refetchPage(client);
        }
      });
    });
    req.on("error", () => {
      if (this.#measuring) this.#writeErrors++;
    });
    req.end(payload);
  }

  measure(): void {
    this.#views = new Tally();
    this.#watch = new Tally();
    this.#refetch = new Tally();
    this.#writes = 0;
    this.#writeErrors = 0;
    this.#started = performance.now();
    this.#measuring = true;
  }

  report(): ViewgenReport {
    this.#measuring = false;
    return {
      elapsedMs: performance.now() - this.#started,
      writes: this.#writes,
      writeErrors: this.#writeErrors,
      views: this.#views.received(this.#viewStreams.length, this.#written),
      watch: this.#watch.received(this.#watchStream ? 1 : 0, this.#written),
      refetch: this.#refetch.received(this.#refetchers.length, this.#written),
    };
  }

  closeViews(): void {
    for (const req of this.#viewStreams.splice(0)) req.destroy();
  }

  closeRefetchers(): void {
    this.#refetchers.splice(0);
  }

  /** End every client (the churn goes on until `stopChurn`). */
  close(): void {
    for (const req of this.#viewStreams.splice(0)) req.destroy();
    this.#watchStream?.destroy();
    this.#watchStream = undefined;
    this.#refetchers.splice(0);
    this.#measuring = false;
  }
}

serveParent(async () => {
  const viewgen = new Viewgen();
  return {
    info: { pid: process.pid },
    ops: methodsOf(viewgen),
    stop: async () => {
      viewgen.stopChurn();
      viewgen.close();
    },
  };
});
