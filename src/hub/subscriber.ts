/**
 * @module
 * One subscriber: where it is (the resourceVersion it has been sent up to), what it asked for
 * (bookmarks, the initial state, a timeout), and the sink its events go to. Two sinks share one
 * interface: a WebSocket (one text frame per event, or per batch) and an HTTP chunked stream
 * (one write per batch). Each tracks its backlog — what was sent but not yet taken by the
 * client — which is what the send budget bounds (invariant 5).
 */
import type { Grant } from "../auth/access.ts";
import type { Framing } from "../k8s/websocket.ts";
import { gzipFrame, MIN_COMPRESSED } from "./gzip-frame.ts";
import type { InitialEvents } from "./initial.ts";

export interface CloseReason {
  code: number;
  reason: string;
}

const encoder = new TextEncoder();
const NEWLINE = encoder.encode("\n");

/**
 * Event lines to send together. A per-event WebSocket sends the lines one by one; a batched
 * WebSocket sends them joined, a compressed one gzipped, and an HTTP stream as bytes. The join,
 * the encoding and the compression are made once, when first needed, for every subscriber the
 * batch goes to.
 */
export class LineBatch {
  readonly lines: readonly string[];
  #joined: string | undefined;
  #bytes: Uint8Array | undefined;
  #gzip: Uint8Array | undefined;
  #size: number | undefined;

  constructor(lines: readonly string[], joined?: string) {
    this.lines = lines;
    this.#joined = joined;
  }

  static of(line: string): LineBatch {
    return new LineBatch([line], line);
  }

  get joined(): string {
    return (this.#joined ??= this.lines.join(""));
  }

  /** The lines' summed length (UTF-16 units, about bytes for JSON), without joining them. */
  get size(): number {
    if (this.#size === undefined) {
      let size = 0;
      for (const line of this.lines) size += line.length;
      this.#size = size;
    }
    return this.#size;
  }

  /** The joined lines as UTF-8; shared by every stream it is written to, so never modified. */
  get bytes(): Uint8Array {
    return (this.#bytes ??= encoder.encode(this.joined));
  }

  /** Whether the batch goes compressed to a compressed framing's socket: long enough for it to pay. */
  get compressible(): boolean {
    return this.size >= MIN_COMPRESSED;
  }

  /**
   * The joined lines as one gzip member (the compressed framings); made once, and shared as
   * `bytes` is. The UTF-8 it is made from is kept only if an HTTP stream asked for it: a slice
   * kept for the subscribers that start together holds its text and its gzip, not a third copy.
   */
  get gzip(): Uint8Array {
    return (this.#gzip ??= gzipFrame(this.#bytes ?? encoder.encode(this.joined)));
  }

  /** Whether `gzip` has been made (how the fan-out counts compressions against sends). */
  get gzipped(): boolean {
    return this.#gzip !== undefined;
  }
}

export interface Sink {
  readonly transport: "websocket" | "http";
  /** Send the lines; returns the messages (or HTTP chunks) it cost the runtime. */
  send(batch: LineBatch): number;
  /** Still connected, as far as the runtime knows (costs a look at the socket: not for every event). */
  alive(): boolean;
  /** Sent but not yet known to be taken by the client (UTF-16 units). */
  backlog(): number;
  close(reason: CloseReason): void;
  readonly closed: boolean;
  /** A write that carries nothing, when nothing else was written since the last call (HTTP streams only). */
  keepAlive?(): void;
}

/**
 * A WebSocket subscriber. Workers do not always report a socket's buffered amount
 * (workerd#988), so the backlog is `bufferedAmount` where the runtime has it and what the
 * client's acknowledgements (`{"type":"ACK","received":n}`, which this project's client sends)
 * leave untaken once it has sent one, the larger of the two: a reader that relays what it
 * takes (the relay socket's mux object) has nothing buffered while its own reader is behind,
 * and only its acknowledgements say so. A client that never acknowledges is limited only by
 * what the runtime reports buffered, where it does.
 *
 * A batched socket (the client offered the batch subprotocol) gets each batch as one message
 * of newline-separated events; every other socket gets one event per message, as the API
 * server sends them. Messages, not bytes, are what a runtime's WebSocket pays for. A compressed
 * one (a `gzip.` subprotocol) gets a batch long enough to pay as its one gzip, the same bytes
 * for every subscriber, in a binary message, which counts as the text it holds in the backlog
 * and the client's acknowledgements: what the budget bounds is the window's text either way.
 */
export class WebSocketSink implements Sink {
  readonly transport = "websocket" as const;
  readonly socket: WebSocket;
  readonly #framing: Pick<Framing, "batched" | "compressed">;
  // Checked once: probing a host object for a property it lacks, on every send, is not free.
  readonly #reportsBuffer: boolean;
  #sent = 0;
  #acked: number | undefined;
  #closed = false;

  constructor(socket: WebSocket, framing: Pick<Framing, "batched" | "compressed">) {
    this.socket = socket;
    this.#framing = framing;
    this.#reportsBuffer = typeof (socket as { bufferedAmount?: unknown }).bufferedAmount === "number";
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One message as given: text, or bytes as a binary message (a pod's log). */
  sendMessage(data: string | Uint8Array): number {
    try {
      this.socket.send(data);
      this.#sent += typeof data === "string" ? data.length : data.byteLength;
      return 1;
    } catch {
      this.#closed = true;
      return 0;
    }
  }

  send(batch: LineBatch): number {
    try {
      if (this.#framing.compressed && batch.compressible) {
        this.socket.send(batch.gzip);
        this.#sent += batch.size;
        return 1;
      }
      if (this.#framing.batched) {
        this.socket.send(batch.joined);
        this.#sent += batch.joined.length;
        return 1;
      }
      for (const line of batch.lines) {
        this.socket.send(line);
        this.#sent += line.length;
      }
      return batch.lines.length;
    } catch {
      // The peer is gone and its close event not yet delivered: stop sending; the fan-out detaches it.
      this.#closed = true;
      return 0;
    }
  }

  alive(): boolean {
    return !this.#closed && this.socket.readyState === WebSocket.OPEN;
  }

  acknowledge(received: number): void {
    if (received <= this.#sent) this.#acked = Math.max(this.#acked ?? 0, received);
  }

  backlog(): number {
    const unacknowledged = this.#acked === undefined ? 0 : this.#sent - this.#acked;
    if (!this.#reportsBuffer) return unacknowledged;
    return Math.max((this.socket as unknown as { bufferedAmount: number }).bufferedAmount, unacknowledged);
  }

  close({ code, reason }: CloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.socket.close(code, reason.slice(0, 120));
    } catch {
      // already closed by the peer
    }
  }

  /** The peer closed: nothing more can be sent. */
  markClosed(): void {
    this.#closed = true;
  }
}

/**
 * An HTTP watch: a chunked response body the runtime pulls from. Batches sent while it has not
 * asked for more wait here and go out together in its next chunk, so a busy hub or a slow
 * client gets fewer, larger writes instead of a queue of small ones; what waits is the backlog.
 */
export class HttpSink implements Sink {
  readonly transport = "http" as const;
  readonly body: ReadableStream<Uint8Array>;
  #queued: Uint8Array[] = [];
  #backlog = 0;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** The runtime asked for a chunk and nothing was there: the next send goes out at once. */
  #wanted = false;
  /** Closed by us: what is queued still goes out, then the stream ends. */
  #ending = false;
  /** Something was sent since the last keep-alive. */
  #sent = false;
  #closed = false;
  readonly #onGone: () => void;
  readonly #onDrained: () => void;

  /** `onGone`: the stream ended, by us or the client; `onDrained`: the runtime took what was queued. */
  constructor(onGone: () => void, onDrained: () => void) {
    this.#onGone = onGone;
    this.#onDrained = onDrained;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          if (this.#queued.length > 0) this.#deliver();
          else if (this.#ending) this.#end();
          else this.#wanted = true;
        },
        cancel: () => {
          this.#queued = [];
          this.#backlog = 0;
          this.#gone();
        },
      },
      { highWaterMark: 0 },
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(batch: LineBatch): number {
    return this.write(batch.bytes);
  }

  /** Bytes as they are (a pod's log): one chunk, or part of the next. */
  write(bytes: Uint8Array): number {
    if (this.#closed) return 0;
    this.#sent = true;
    this.#queue(bytes);
    return 1;
  }

  /**
   * The runtime learns that an HTTP client has gone only when it writes to it, so a quiet stream
   * whose client left would hold its subscription (and its quota, and its hub) for as long as
   * nothing happens. A newline between events is whitespace to every JSON stream reader
   * (client-go's decoder; line readers skip blank lines), so a stream sent nothing since the
   * last call gets one.
   */
  keepAlive(): void {
    if (!this.#sent && !this.#closed && this.#queued.length === 0) this.#queue(NEWLINE);
    this.#sent = false;
  }

  #queue(bytes: Uint8Array): void {
    this.#queued.push(bytes);
    this.#backlog += bytes.length;
    if (this.#wanted) this.#deliver();
  }

  backlog(): number {
    return this.#backlog;
  }

  alive(): boolean {
    return !this.#closed;
  }

  /** End the stream cleanly, as the API server does (no ERROR event), after what was sent: the client re-watches. */
  close(_reason: CloseReason): void {
    if (this.#closed) return;
    this.#ending = true;
    if (this.#wanted) this.#end();
    this.#gone();
  }

  #deliver(): void {
    this.#wanted = false;
    const queued = this.#queued;
    this.#queued = [];
    this.#backlog = 0;
    this.#controller?.enqueue(queued.length === 1 ? (queued[0] as Uint8Array) : concat(queued));
    this.#onDrained();
  }

  #end(): void {
    this.#wanted = false;
    try {
      this.#controller?.close();
    } catch {
      // already cancelled by the client
    }
  }

  /** Closed by us or by the client: report it once. */
  #gone(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onGone();
  }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const chunk of chunks) size += chunk.length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** Which event lines go to a subscriber (a shard's, KEP-5866); `key` is the same for subscribers filtered alike, who share what is built for them. */
export interface LineFilter {
  readonly key: string;
  admits(line: string): boolean;
}

export interface SubscriberOptions {
  /** `allowWatchBookmarks=true`. */
  bookmarks: boolean;
  /**
   * The subscriber takes deltas (it offered the delta subprotocol) for events after this
   * resourceVersion: where it was brought by its first events. A replay before it goes whole.
   */
  deltasAfter?: number | undefined;
  /** How long the stream runs from when it is attached (`timeoutSeconds`), ms. */
  timeoutMs: number | undefined;
  /** Who subscribed and on what grant (absent when the relay runs without auth). */
  grant?: Grant | undefined;
  /** The subscriber is a replica hub of this one, by name (DESIGN.md, "Hot keys"). */
  replica?: string | undefined;
  /** Only the events this lets through; absent: every event. */
  filter?: LineFilter | undefined;
  /** A live view's subscriber: it is sent row changes by the hub's views, not events by the fan-out. */
  view?: boolean | undefined;
  /**
   * Sent its live events at most once per this many ms (the paced subprotocol: a relay socket's
   * link to this hub), what came meanwhile together in the next message.
   */
  paceMs?: number | undefined;
}

let nextId = 1;

export class Subscriber {
  readonly id = nextId++;
  readonly sink: Sink;
  readonly options: SubscriberOptions;
  /** The resourceVersion this subscriber has been sent everything up to. */
  position: number;
  /** What is still to be sent before the window's events, and how far it has got. */
  initial: InitialEvents | undefined;
  /** Where the next slice of `initial` starts (`""`: its start). */
  initialCursor = "";
  /** Started from a resourceVersion it was given (a resume), and not yet caught up: owed a BOOKMARK when it is. */
  resumeBookmarkDue: boolean;
  /** A paced subscriber is sent nothing more before this (the clock's ms). */
  pausedUntil = 0;

  constructor(sink: Sink, position: number, options: SubscriberOptions, initial?: InitialEvents) {
    this.sink = sink;
    this.position = position;
    this.options = options;
    this.initial = initial;
    this.resumeBookmarkDue = initial === undefined;
  }
}
