/**
 * @module
 * The views scenario's clients and churn, in a process of their own so that their cost is apart.
 * Latency is from a write to the frame (or page) whose newer resourceVersion carries its row.
 */
import { get, request, type ClientRequest } from "node:http";
import WebSocket from "ws";
import { MUX_PATH } from "../src/k8s/mux.ts";
import { BATCH_PROTOCOL } from "../src/k8s/websocket.ts";
import type { RowChange } from "../src/k8s/view.ts";
import { Random } from "../src/sim/random.ts";
import { WRITTEN_AT } from "../src/sim/store.ts";
import { methodsOf, serveParent } from "./children.ts";
import { ByteLines, eventVersion } from "./lines.ts";
import { Histogram, type HistogramEntries } from "./stats.ts";
import { viewQuery, type ViewQuery } from "./view-query.ts";

interface Row {
  key: string;
  resourceVersion: string;
}
type Frame = { type: "VIEW"; resourceVersion: string; rows: Row[] } | { type: "ROWS"; resourceVersion: string; changes: Array<RowChange<Row>> } | { type: "ERROR" } | { type: "CLOSED" };

/** Live views on one relay socket: a page's panels. */
const VIEWS_PER_SOCKET = 5;
/** As the bench's other relay clients acknowledge. */
const ACK_EVERY = 256 * 1024;

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
  writes: number;
  writeErrors: number;
  views: Received;
  socketViews: Received;
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

/** A 5xx: the request is asked again. */
class ServerError extends Error {}

/** A notify-then-refetch client: `dirty` once told of a change since it last asked. */
interface Refetcher {
  url: string;
  dirty: boolean;
  busy: boolean;
  head: number;
}

/** Reads one frame of a view, given the resourceVersion of its last, into the new one; `served` at a window whole. */
type FrameReader = (line: Buffer, head: number, served: () => void) => number;

/** One relay socket carrying live views as ops, each view's frames tagged with its id. */
class SocketViews {
  readonly socket: WebSocket;
  readonly #read: FrameReader;
  /** Each view's last frame's resourceVersion, and its first frame's waiter. */
  readonly #views = new Map<string, { head: number; served?: (() => void) | undefined; failed?: ((e: Error) => void) | undefined }>();
  #nextId = 1;
  #received = 0;
  #acked = 0;

  private constructor(socket: WebSocket, read: FrameReader, bytes: (n: number) => void) {
    this.socket = socket;
    this.#read = read;
    const lines = new ByteLines();
    socket.on("message", (wire: Buffer) => {
      bytes(wire.length);
      lines.push(wire, (line) => this.#line(line));
      // The relay counts UTF-16 units of the text; frames are ASCII, so bytes are the same number.
      this.#received += wire.length;
      if (this.#received - this.#acked >= ACK_EVERY) {
        this.#acked = this.#received;
        socket.send(`{"type":"ACK","received":${this.#received}}`);
      }
    });
    socket.on("close", () => {
      for (const view of this.#views.values()) view.failed?.(new Error("the relay socket closed before the view's first frame"));
    });
  }

  static open(wsBase: string, read: FrameReader, bytes: (n: number) => void): Promise<SocketViews> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${wsBase}${MUX_PATH}`, [BATCH_PROTOCOL], { perMessageDeflate: false, skipUTF8Validation: true, maxPayload: 1 << 30 });
      socket.once("open", () => resolve(new SocketViews(socket, read, bytes)));
      socket.once("error", reject);
    });
  }

  /** Its id, once its first frame has come. */
  view(path: string, q: ViewQuery): Promise<string> {
    const id = `v${this.#nextId++}`;
    return new Promise((resolve, reject) => {
      this.#views.set(id, { head: 0, served: () => resolve(id), failed: reject });
      this.socket.send(JSON.stringify({ op: "view", id, path, sort: q.sort, ...(q.filter ? { filter: q.filter } : {}), offset: q.offset, limit: q.limit }));
    });
  }

  unwatch(id: string): void {
    this.#views.delete(id);
    this.socket.send(JSON.stringify({ op: "unwatch", id }));
  }

  /** A tagged line: `{"id":"v1",…}`; the socket's own lines are no view's. */
  #line(line: Buffer): void {
    const end = line.indexOf(34, 7);
    const view = end < 0 ? undefined : this.#views.get(line.subarray(7, end).toString());
    if (!view) return;
    // Refused or ended before its first frame: the relay's Status (or CLOSED) says why.
    if (view.failed && (line.includes('"type":"ERROR"') || line.includes('"type":"CLOSED"'))) return view.failed(new Error(`view ${line.toString().slice(0, 300)}`));
    view.head = this.#read(line, view.head, () => {
      view.served?.();
      view.served = view.failed = undefined;
    });
  }
}

class Viewgen {
  #measuring = false;
  #started = 0;
  #views = new Tally();
  #socketViews = new Tally();
  #watch = new Tally();
  #refetch = new Tally();
  #writes = 0;
  #writeErrors = 0;
  readonly #written = new Map<number, number>();
  readonly #viewStreams: ClientRequest[] = [];
  readonly #viewSockets: Array<{ socket: WebSocket; views: number }> = [];
  /** The socket the first frames over a relay socket are timed on. */
  #openSocket: SocketViews | undefined;
  #watchStream: ClientRequest | undefined;
  readonly #refetchers: Refetcher[] = [];
  #churn: ReturnType<typeof setInterval> | undefined;
  #created: string[] = [];
  #count = 0;

  /** Open live views, each once its first frame has come; how many 5xx answers were asked again. */
  async openViews({ base, path, queries }: { base: string; path: string; queries: ViewQuery[] }): Promise<number> {
    let refused = 0;
    const open = (url: string, tries: number): Promise<void> =>
      this.#view(url).catch(async (e: unknown) => {
        if (!(e instanceof ServerError) || tries === 5) throw e;
        refused++;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return open(url, tries + 1);
      });
    await Promise.all(queries.map((q) => open(`${base}${path}?${viewQuery(q)}&watch=1`, 1)));
    return refused;
  }

  #view(url: string): Promise<void> {
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
        const read = this.#frames(() => this.#views);
        response.on("data", (chunk: Buffer) => {
          if (this.#measuring) this.#views.bytes += chunk.length;
          lines.push(chunk, (line) => {
            head = read(line, head, resolve);
          });
        });
        response.on("close", () => {
          if (!req.destroyed && this.#measuring) this.#views.errors++;
        });
      });
      req.on("error", (e) => (head === 0 ? reject(e) : undefined));
    });
  }

  /** Reads a view's frames into the current window's tally of its kind: a row newer than `head` is a change. */
  #frames(tallyOf: () => Tally): FrameReader {
    return (line, head, served) => {
      const now = Date.now();
      const tally = tallyOf();
      // A frame that only moves the count has nothing to parse.
      const countOnly = line.includes('"changes":[]');
      const frame = countOnly ? undefined : (JSON.parse(line.toString()) as Frame);
      if (frame?.type === "VIEW") {
        if (this.#measuring) tally.messages++;
        served();
        return Number(frame.resourceVersion);
      }
      if (this.#measuring) {
        tally.messages++;
        if (frame?.type === "ROWS") tally.withChanges++;
      }
      if (frame?.type === "ROWS") {
        for (const change of frame.changes) {
          if (change.op !== "insert" && change.op !== "update") continue;
          const rv = Number(change.row.resourceVersion);
          if (rv > head && this.#measuring) tally.receipts.push([rv, now]);
        }
        return Number(frame.resourceVersion);
      }
      if ((frame?.type === "ERROR" || frame?.type === "CLOSED") && this.#measuring) tally.errors++;
      return head;
    };
  }

  /** The same views as ops on relay sockets, `VIEWS_PER_SOCKET` a socket. */
  async openSocketViews({ wsBase, path, queries }: { wsBase: string; path: string; queries: ViewQuery[] }): Promise<void> {
    const opening: Array<Promise<unknown>> = [];
    const read = this.#frames(() => this.#socketViews);
    for (let i = 0; i < queries.length; i += VIEWS_PER_SOCKET) {
      const socket = await SocketViews.open(wsBase, read, (bytes) => this.#measuring && (this.#socketViews.bytes += bytes));
      const views = queries.slice(i, i + VIEWS_PER_SOCKET);
      this.#viewSockets.push({ socket: socket.socket, views: views.length });
      opening.push(...views.map((q) => socket.view(path, q)));
    }
    await Promise.all(opening);
  }

  /** A view's first frame as an op on a relay socket already open, in ms; then the view is ended. */
  async socketFirstFrame({ wsBase, path, query }: { wsBase: string; path: string; query: ViewQuery }): Promise<number> {
    const read = this.#frames(() => new Tally());
    this.#openSocket ??= await SocketViews.open(wsBase, read, () => undefined);
    const started = performance.now();
    const id = await this.#openSocket.view(path, query);
    const ms = performance.now() - started;
    this.#openSocket.unwatch(id);
    return ms;
  }

  closeSocketViews(): void {
    for (const { socket } of this.#viewSockets.splice(0)) socket.terminate();
    this.#openSocket?.socket.terminate();
    this.#openSocket = undefined;
  }

  /** A full watch of the collection from its head (no initial state). */
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

  /** Notify-then-refetch clients, one per query. */
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

  /** Creates (copies of `template`), deletes of those, label patches of `visible` pods: a size-keeping mix. */
  startChurn({ simUrl, namespace, rate, template, visible, seed }: { simUrl: string; namespace: string; rate: number; template: unknown; visible: string[]; seed: number }): void {
    // Seeded, so every run makes the same churn.
    const random = new Random(seed);
    const next = () => random.next();
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
    this.#socketViews = new Tally();
    this.#watch = new Tally();
    this.#refetch = new Tally();
    this.#writes = 0;
    this.#writeErrors = 0;
    this.#started = performance.now();
    this.#measuring = true;
  }

  report(): ViewgenReport {
    this.#measuring = false;
    const socketViews = this.#viewSockets.reduce((n, s) => n + s.views, 0);
    return {
      elapsedMs: performance.now() - this.#started,
      writes: this.#writes,
      writeErrors: this.#writeErrors,
      views: this.#views.received(this.#viewStreams.length, this.#written),
      socketViews: this.#socketViews.received(socketViews, this.#written),
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
    this.closeViews();
    this.closeSocketViews();
    this.closeRefetchers();
    this.#watchStream?.destroy();
    this.#watchStream = undefined;
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
