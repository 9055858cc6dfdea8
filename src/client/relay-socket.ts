/**
 * @module
 * `relaySocket()`: one WebSocket to the relay (`/_relay/socket`) that carries every watch of a
 * client instance, across collections and clusters. It is a `Transport`, so `watch()` and
 * `informer()` run over it unchanged — each watch still lists, resumes from its own
 * resourceVersion, relists after a 410 and acknowledges as it takes — with three differences:
 * a watch is a message on the shared socket instead of a socket of its own; a watch's failure
 * arrives as its Kubernetes Status (a browser cannot read a refused upgrade's); and a list is a
 * watch-list (`sendInitialEvents`) over the socket, in messages of at most `pageSize` objects,
 * so a large collection never arrives as one huge response to parse. Where the runtime can
 * decompress, it offers the socket's gzip framing and reads its binary messages in order with the
 * text ones, acknowledging each as the text it held, as the relay counts it.
 *
 * The socket opens when the first watch needs it and again after it closes (a relay restart, a
 * lost network): each watch sees its own close and resumes as it would from its own socket.
 */
import { Acknowledger } from "./ack.ts";
import { Channel } from "./channel.ts";
import { canDecompress, INVALID_DATA, SocketReader } from "./socket.ts";
import { protocolError, socketFailed, statusError, unreachable, WatchError } from "./errors.ts";
import { informer, type Informer, type InformerOptions } from "./informer.ts";
import { transportOf } from "./transport.ts";
import type { KubeResource, Transport, WatchOptions, WatchSocket, WatchUpdate } from "./types.ts";
import { view, type View, type ViewOptions } from "./view.ts";
import { watch } from "./watch.ts";
import { lineId, lineType, MUX_PATH, opMessage, opOfQuery, viewOpOfQuery, type Closed, type LogParameters, type ViewOp, type WatchOp } from "../k8s/mux.ts";
import { parseApiPath } from "../k8s/path.ts";
import { parseEventLine } from "../k8s/event.ts";
import { INITIAL_EVENTS_END, type KubeList, type Status } from "../k8s/types.ts";
import { ackMessage, CLOSE, watchProtocols } from "../k8s/websocket.ts";

/** How a followed log ended: its CLOSED's code (1000: the container stopped, or limitBytes was reached) and reason. */
export interface LogEnd {
  code: number;
  reason: string;
}

export interface RelaySocketOptions {
  /** Bearer token for the socket (and its lists): one per socket, as on the relay. */
  token?: string;
  /** Objects per message of a list's initial state (default 500). */
  pageSize?: number;
  /**
   * Offer the socket's compressed framing (default `true` where `DecompressionStream` exists):
   * its messages long enough to pay come gzipped, compressed once per message by the socket's
   * own object on the relay; a relay that does not know the framing sends text, read as well.
   */
  compressed?: boolean;
  /** Replace `fetch` or the WebSocket the socket is opened with (tests, runtimes without the globals). */
  transport?: Partial<Transport>;
}

const DEFAULT_PAGE_SIZE = 500;

export class RelaySocket implements Transport {
  readonly url: string;
  readonly #options: RelaySocketOptions;
  readonly #transport: Transport;
  readonly #channels = new Map<string, Channel>();
  #socket: Promise<WatchSocket> | undefined;
  #ack: Acknowledger | undefined;
  #nextId = 1;
  #closed = false;

  /** @param relay the relay's URL (any URL on its origin: a collection URL will do). */
  constructor(relay: string | URL, options: RelaySocketOptions = {}) {
    const base = new URL(relay, (globalThis as { location?: { href: string } }).location?.href);
    base.protocol = base.protocol === "https:" || base.protocol === "wss:" ? "wss:" : "ws:";
    this.url = new URL(MUX_PATH, base).href;
    this.#options = options;
    this.#transport = transportOf(options.transport);
  }

  /** `watch()` over this socket, with its token. */
  watch<T extends KubeResource>(url: string | URL, options: WatchOptions = {}): AsyncGenerator<WatchUpdate<T>, void, undefined> {
    return watch<T>(url, this.#over(options));
  }

  /** `informer()` over this socket, with its token. */
  informer<T extends KubeResource>(url: string | URL, options: InformerOptions<T> = {}): Informer<T> {
    return informer<T>(url, this.#over(options));
  }

  /** `view()` over this socket, with its token: a live view is an op beside the watches. */
  view<T extends KubeResource>(url: string | URL, options: ViewOptions<T> = {}): View<T> {
    return view<T>(url, this.#over(options));
  }

  /** Close the socket: every watch on it ends (their iterations see close 1000 and resume unless stopped). */
  close(): void {
    this.#closed = true;
    void this.#socket?.then(
      (socket) => socket.close(CLOSE.normal, "the client closed the relay socket"),
      () => undefined,
    );
  }

  fetch(url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<Response> {
    return this.#transport.fetch(url, init);
  }

  /** A watch URL (as `watch()` makes it), or a live view's (as `view()` makes it), as one stream of the socket. */
  async connect(url: string): Promise<WatchSocket> {
    const socket = await this.#open();
    const channel = this.#channel();
    socket.send(opMessage(openOp(channel.id, new URL(url))));
    return channel;
  }

  /** A list as a watch-list over the socket: the initial state in pages, up to its initial-events-end bookmark. */
  async list<T>(url: string, _token: string | undefined, signal?: AbortSignal): Promise<KubeList<T>> {
    let socket: WatchSocket;
    try {
      socket = await this.#open();
    } catch (e) {
      throw unreachable(url, e);
    }
    const channel = this.#channel();
    const collection = new URL(url);
    const op: WatchOp = { ...watchOp(channel.id, collection), sendInitialEvents: true, allowWatchBookmarks: true, limit: this.#options.pageSize ?? DEFAULT_PAGE_SIZE };
    delete op.resourceVersion;
    const items: T[] = [];
    const done = new Promise<KubeList<T>>((resolve, reject) => {
      const stop = () => channel.close(CLOSE.normal, "the client stopped listing");
      signal?.addEventListener("abort", stop);
      channel.addEventListener("message", (event) => {
        const text = event.data as string;
        for (const line of text.split("\n")) {
          if (!line) continue;
          const event = parseEventLine<T & KubeResource>(line);
          if (!event) return reject(protocolError(`GET ${url} (a watch-list over the relay socket) sent something that is not a watch event (${line.slice(0, 80)})`));
          const { type, object } = event;
          if (type === "ERROR") return reject(statusError(`GET ${url} (a watch-list over the relay socket)`, object as unknown as Status));
          if (type === "ADDED") items.push(object);
          if (type === "BOOKMARK" && object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true") {
            const resourceVersion = object.metadata.resourceVersion ?? "";
            resolve({ kind: "List", apiVersion: "v1", metadata: { resourceVersion }, items });
          }
        }
        // Taken as soon as read: the list is whole only at its end.
        channel.send(ackMessage(Number.MAX_SAFE_INTEGER));
      });
      channel.addEventListener("close", (event) => {
        signal?.removeEventListener("abort", stop);
        reject(new WatchError(`GET ${url} (a watch-list over the relay socket) ended before its initial state did (${event.code}${event.reason ? `: ${event.reason}` : ""})`, { retryable: true }));
      });
    });
    socket.send(opMessage(op));
    try {
      return await done;
    } finally {
      channel.close(CLOSE.normal, "listed");
    }
  }

  /**
   * A pod's log over this socket (`path`: `/api/v1/namespaces/{namespace}/pods/{name}/log`, or
   * under `/clusters/{name}`; options as the log request's, followed unless `follow: false`): its
   * text as it arrives, whole lines at a time, until it ends — the container stopped,
   * `limitBytes` was reached, or it was not followed — which is what the iteration returns; a
   * refusal or a failure is thrown as a `WatchError` with the relay's Status. It acknowledges what
   * the loop has taken, so a loop that falls behind is held, then cut off (4008). Leaving the loop
   * stops following.
   */
  async *logs(path: string, options: LogParameters = {}): AsyncGenerator<string, LogEnd, undefined> {
    let socket: WatchSocket;
    try {
      socket = await this.#open();
    } catch (e) {
      throw unreachable(path, e);
    }
    const channel = this.#channel();
    // Each chunk, with what of the socket's messages is taken once it is.
    const chunks: Array<{ text: string; units: number }> = [];
    let failure: WatchError | undefined;
    let ended: LogEnd | undefined;
    let wake: (() => void) | undefined;
    let taken = 0;
    channel.addEventListener("message", (event) => {
      const message = event.data as string;
      const before = chunks.length;
      for (const line of message.split("\n")) {
        if (!line) continue;
        const parsed = JSON.parse(line) as { type: string; text?: string; object?: Status };
        if (parsed.type === "LOG") chunks.push({ text: parsed.text ?? "", units: 0 });
        else if (parsed.type === "ERROR") failure ??= statusError(`GET ${path} (a log over the relay socket)`, parsed.object as Status);
      }
      const last = chunks.at(-1);
      if (chunks.length > before && last) last.units = message.length;
      else channel.send(ackMessage((taken += message.length)));
      wake?.();
    });
    channel.addEventListener("close", (event) => {
      ended = { code: event.code, reason: event.reason };
      wake?.();
    });
    socket.send(opMessage({ ...options, op: "logs", id: channel.id, path }));
    try {
      for (;;) {
        const chunk = chunks.shift();
        if (chunk) {
          yield chunk.text;
          if (chunk.units > 0) channel.send(ackMessage((taken += chunk.units)));
          continue;
        }
        if (failure) throw failure;
        if (ended) return ended;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      channel.close(CLOSE.normal, "the client stopped following the log");
    }
  }

  /** A watch's (or view's) options over this socket: its token, and no deltas (its hubs send it whole events). */
  #over<O extends Pick<WatchOptions, "token" | "transport">>(options: O): O {
    return { ...options, ...(this.#options.token === undefined ? {} : { token: this.#options.token }), deltas: false, transport: this };
  }

  #channel(): Channel {
    const id = String(this.#nextId++);
    const channel = new Channel(id, {
      unwatch: (gone) => {
        this.#channels.delete(gone);
        void this.#socket?.then(
          (socket) => socket.send(opMessage({ op: "unwatch", id: gone })),
          () => undefined,
        );
      },
      taken: (units) => this.#ack?.taken(units),
    });
    this.#channels.set(id, channel);
    return channel;
  }

  /** The socket, opened (again) if need be. */
  #open(): Promise<WatchSocket> {
    if (this.#closed) return Promise.reject(new WatchError("the relay socket was closed by the client", { retryable: false }));
    this.#socket ??= this.#connect();
    return this.#socket;
  }

  async #connect(): Promise<WatchSocket> {
    let socket: WatchSocket;
    try {
      // The relay socket carries whole events (no deltas), compressed where this runtime can read them.
      const compressed = this.#options.compressed !== false && canDecompress();
      socket = await this.#transport.connect(this.url, watchProtocols(this.#options.token, false, compressed));
    } catch (e) {
      this.#socket = undefined;
      throw socketFailed(this.url, e);
    }
    const ack = (this.#ack = new Acknowledger((text) => socket.send(text)));
    void this.#read(new SocketReader(socket), ack);
    return socket;
  }

  /** The socket's messages (a compressed one as the text it holds) routed in arrival order, then its close. */
  async #read(reader: SocketReader, ack: Acknowledger): Promise<void> {
    for (;;) {
      const item = await reader.next();
      if (item.kind === "message") {
        try {
          this.#route(item.text);
        } catch (e) {
          // Not the relay socket's lines: its close (next) ends every watch, and each resumes.
          reader.close(INVALID_DATA, `a message that is not the relay socket's lines (${String(e)})`.slice(0, 120));
        }
        continue;
      }
      if (this.#ack !== ack) return;
      ack.stop();
      this.#ack = undefined;
      this.#socket = undefined;
      const channels = [...this.#channels.values()];
      this.#channels.clear();
      for (const channel of channels) channel.end(item.code, item.reason);
      return;
    }
  }

  /**
   * A message holds lines of one watch or several, in order: each run of one watch's lines goes
   * to its channel, as a slice of the message (not split and joined again).
   */
  #route(text: string): void {
    let id: string | undefined;
    let run = 0;
    const deliver = (end: number) => {
      if (end <= run) return;
      const body = text.slice(run, end);
      const channel = id === undefined ? undefined : this.#channels.get(id);
      if (channel) channel.deliver(body);
      else this.#ack?.taken(body.length);
    };
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; start = end + 1, end = text.indexOf("\n", start)) {
      const line = text.slice(start, end);
      if (lineType(line) === "CLOSED") {
        deliver(start);
        run = end + 1;
        this.#ack?.taken(line.length + 1);
        const closed = JSON.parse(line) as Closed;
        const channel = this.#channels.get(closed.id);
        this.#channels.delete(closed.id);
        channel?.end(closed.code, closed.reason);
        continue;
      }
      const owner = lineId(line);
      if (owner !== id) {
        deliver(start);
        run = start;
        id = owner;
      }
    }
    deliver(start);
  }
}

/** The op for a watch URL (`watch()`'s, or a collection's for a list). */
function watchOp(id: string, url: URL): WatchOp {
  if (parseApiPath(url.pathname).kind !== "resource") throw new TypeError(`${url.href} is not a collection URL`);
  return opOfQuery(id, url.pathname, url.searchParams);
}

/** The op for a watch URL or a live view's (`view=1`). */
function openOp(id: string, url: URL): WatchOp | ViewOp {
  if (url.searchParams.get("view") !== "1") return watchOp(id, url);
  if (parseApiPath(url.pathname).kind !== "resource") throw new TypeError(`${url.href} is not a collection URL`);
  return viewOpOfQuery(id, url.pathname, url.searchParams);
}

/**
 * One WebSocket to the relay for every watch of this client instance:
 * `const relay = relaySocket("https://relay.example", { token })`, then `relay.informer(url)`,
 * `relay.watch(url)`, or `watch(url, { transport: relay })`.
 */
export function relaySocket(relay: string | URL, options: RelaySocketOptions = {}): RelaySocket {
  return new RelaySocket(relay, options);
}
