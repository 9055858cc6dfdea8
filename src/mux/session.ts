/**
 * @module
 * One relay socket (`/_relay/socket`): the client's ops open and end watches, each a standalone
 * watch of its own hub, and followed logs, each a standalone log WebSocket of its log hub; their
 * events (and lines) go to the client tagged with the watch's id. A watch that
 * fails (refused, forbidden, expired, cut off) ends alone with an ERROR and its CLOSED; the
 * socket and the other watches go on, unless the socket's token is what was refused. The
 * client's acknowledgements reach each hub as that hub's own (`AckLedger`), so a hub measures
 * the reader, not this hop; each hub counts from the start, as if the client had acknowledged
 * nothing yet. The socket ends when the client closes it, its token expires or is refused, it
 * sends a message longer than any op, or it leaves more unacknowledged than its hubs hold for it
 * and a subscriber's budget beside.
 */
import { MAX_URL_BYTES } from "../http/limits.ts";
import { inFlightAllowance } from "../hub/fanout.ts";
import { gzipFrame, MIN_COMPRESSED } from "../hub/gzip-frame.ts";
import { AckLedger } from "../k8s/ack-ledger.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import { closedLine, failureLine, pages, parseClientMessage, tooManyWatches, type StreamOp } from "../k8s/mux.ts";
import { parseApiPath } from "../k8s/path.ts";
import { failure, internalError, unauthorized } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { ackMessage, CLOSE } from "../k8s/websocket.ts";
import type { Log } from "../log.ts";
import { Link } from "./link.ts";
import { Outbox } from "./outbox.ts";

export interface SessionSettings {
  /** Several events in one message (the batch subprotocol); otherwise one event per message. */
  batched: boolean;
  /**
   * Messages of at least `MIN_COMPRESSED` characters as gzip, in binary messages (the batch
   * subprotocol's gzip form). Compressed here, once per message: what a socket sends mixes its
   * client's watches, so no hub's compression fits it.
   */
  compressed: boolean;
  /** Watches one socket may hold at once. */
  maxWatches: number;
  /** jwt: when the socket's token expires (epoch ms). */
  expiresAt: number | undefined;
  /** A subscriber's budget (`SUBSCRIBER_BUDGET_BYTES`): what the client may leave unacknowledged beyond what its hubs hold. */
  budget: number;
}

/**
 * The longest message a client may send (UTF-16 units). An op is the watch URL it becomes (at
 * most `MAX_URL_BYTES`, or that watch is refused with 431) spelled as JSON, in which no value is
 * longer than percent-encoded; twice the URL leaves room for the field names, the id, escapes
 * and whitespace, so an op over the URL's limit still gets its watch's 431. ACKs are a few dozen.
 */
export const MAX_CLIENT_MESSAGE = 2 * MAX_URL_BYTES;

const encoder = new TextEncoder();

/** The relay's answer to a watch, view or logs op's standalone request: a 101 with the hub's socket, or a Status. */
export type OpenWatch = (op: StreamOp) => Promise<Response>;

export class Session {
  readonly #client: WebSocket;
  readonly #settings: SessionSettings;
  readonly #open: OpenWatch;
  readonly #log: Log;
  readonly #watches = new Map<string, Link>();
  readonly #ledger = new AckLedger<Link>();
  readonly #outbox: Outbox;
  #expiry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Ending the socket: its last lines go out unmeasured. */
  #ending = false;

  constructor(client: WebSocket, settings: SessionSettings, open: OpenWatch, log: Log) {
    this.#client = client;
    this.#settings = settings;
    this.#open = open;
    this.#log = log;
    this.#outbox = new Outbox((text) => this.#write(text), settings.batched);
    if (settings.expiresAt !== undefined) this.#expiry = setTimeout(() => this.#expire(), Math.max(0, settings.expiresAt - Date.now()));
  }

  /** A message from the client: an op, an acknowledgement, or something refused with a Status. */
  message(data: string | ArrayBuffer): void {
    if (this.#closed) return;
    // The runtime has taken the message in whole already; one longer than any op is not parsed.
    const size = typeof data === "string" ? data.length : data.byteLength;
    if (size > MAX_CLIENT_MESSAGE) return this.#end(CLOSE.tooBig, `relay socket messages are ops and ACKs, at most ${MAX_CLIENT_MESSAGE} characters`);
    const message = parseClientMessage(data);
    if ("ack" in message) return this.#acknowledge(message.ack);
    if ("refused" in message) return this.#sendOwn(failureLine(message.refused));
    const { op } = message;
    const link = this.#watches.get(op.id);
    if (op.op === "unwatch") {
      if (!link) return this.#sendOwn(failureLine(failure(404, "NotFound", `no watch ${op.id} on this socket`, { name: op.id })));
      link.end(CLOSE.normal, "unwatched");
      return this.#finish(link, CLOSE.normal, "unwatched");
    }
    if (link) return this.#sendOwn(failureLine(failure(409, "AlreadyExists", `watch ${op.id} is already open on this socket: unwatch it first, or use another id`, { name: op.id })));
    const watch = new Link(op);
    if (this.#watches.size >= this.#settings.maxWatches) return this.#fail(watch, tooManyWatches(op.id, this.#settings.maxWatches), CLOSE.normal);
    this.#watches.set(op.id, watch);
    void this.#connect(watch);
  }

  /** The client is gone: every watch ends, quietly. */
  clientClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#expiry !== undefined) clearTimeout(this.#expiry);
    for (const link of this.#watches.values()) link.end(CLOSE.normal, "the client closed the relay socket");
    this.#watches.clear();
  }

  async #connect(link: Link): Promise<void> {
    let response: Response;
    try {
      response = await this.#open(link.op);
    } catch (e) {
      this.#log("watch failed to open", { id: link.id, error: String(e) });
      this.#fail(link, internalError("the relay failed to open the watch"), CLOSE.normal);
      return;
    }
    const socket = response.webSocket;
    if (response.status !== 101 || !socket) {
      const status = await statusOf(response);
      // The cluster that admitted the socket no longer takes its token: every later op would be
      // refused too, each after a review of its own.
      if (status.code === 401 && clusterOf(link.op) === DEFAULT_CLUSTER) {
        this.#log("socket closed: token refused", { id: link.id, watches: this.#watches.size });
        this.#end(CLOSE.unauthorized, "the bearer token is not accepted; reconnect with a valid one", status);
        return;
      }
      this.#fail(link, status, CLOSE.normal);
      return;
    }
    // A log hub's messages are binary: as ArrayBuffers, not the Blobs they would be by default.
    socket.binaryType = "arraybuffer";
    socket.accept();
    if (link.ended) {
      socket.close(CLOSE.normal, "unwatched");
      return;
    }
    link.socket = socket;
    socket.addEventListener("message", (event) => {
      if (link.ended) return;
      const pieces = link.retag(event.data as string | ArrayBuffer);
      if (pieces.length > 0) this.#forward(link, pieces);
    });
    socket.addEventListener("close", (event) => this.#hubClosed(link, event.code, event.reason));
    socket.addEventListener("error", () => this.#hubClosed(link, CLOSE.abnormal, "the connection to the watch's hub failed"));
    // The hub counts what it sends from now on as not yet taken, as for a client that has
    // acknowledged nothing: it holds this watch, then cuts it off, while the client is behind.
    this.#ackHub(link, 0);
  }

  /**
   * A hub message's lines to the client: with what else is ready on a batch socket, in pages of
   * the watch's `limit` if it has one, else one per message.
   */
  #forward(link: Link, pieces: readonly string[]): void {
    const limit = link.op.op === "watch" ? link.op.limit : undefined;
    if (this.#settings.batched && limit === undefined) this.#send(pieces, link, link.received, false);
    else {
      const messages = pages(pieces.join(""), this.#settings.batched ? limit : 1);
      // The hub's message counts as taken once its last page is.
      const paged = limit !== undefined;
      messages.forEach((text, i) => this.#send([text], link, i === messages.length - 1 ? link.received : undefined, paged));
    }
    // Measured once the whole message is out: a CLOSED names the last event it delivered.
    this.#measure();
  }

  #hubClosed(link: Link, code: number, reason: string): void {
    if (link.ended) return;
    link.ended = true;
    this.#finish(link, code, reason);
  }

  /**
   * A watch that could not start, or was refused: its ERROR and CLOSED. Not for one already
   * ended (unwatched, or the client left, while it was opening): its CLOSED has gone out.
   */
  #fail(link: Link, status: Status, code: number): void {
    if (link.ended) return;
    link.end(code, status.message ?? "failed");
    this.#sendOwn(failureLine(status, link.id));
    this.#finish(link, code, status.message ?? "failed");
  }

  #finish(link: Link, code: number, reason: string): void {
    if (this.#watches.get(link.id) === link) this.#watches.delete(link.id);
    this.#sendOwn(closedLine(link.id, code, reason, link.resourceVersion));
  }

  /** The client took `received`: tell each hub what of its own that covers. */
  #acknowledge(received: number): void {
    for (const [link, taken] of this.#ledger.acknowledge(received)) this.#ackHub(link, taken);
  }

  #ackHub(link: Link, taken: number): void {
    if (link.ended || !link.socket) return;
    try {
      link.socket.send(ackMessage(taken));
    } catch {
      // closing; its close event ends the watch
    }
  }

  /** The socket's token expired: every watch fails with a 401, then the socket closes (4401). */
  #expire(): void {
    this.#log("socket closed: token expired", { watches: this.#watches.size });
    this.#end(CLOSE.unauthorized, "the bearer token has expired", unauthorized("Unauthorized: the bearer token has expired; reconnect with a fresh one"));
  }

  /**
   * What the client has not acknowledged, against what it may leave: what its hubs hold for its
   * watches (each stops sending past its in-flight bound, and cuts the watch off at its budget)
   * and one subscriber's budget for the rest (the relay's own lines, and the last of watches that
   * ended). Past that, nothing else bounds it, so the socket is cut off: it resumes each watch.
   */
  #measure(): void {
    if (this.#ending) return;
    const { budget } = this.#settings;
    const allowed = budget + this.#watches.size * inFlightAllowance(budget);
    const unacknowledged = this.#ledger.unacknowledged;
    if (unacknowledged <= allowed) return;
    this.#log("socket cut off: slow client", { unacknowledged, allowed, watches: this.#watches.size });
    this.#end(CLOSE.slow, `slow subscriber: more than ${allowed} bytes unacknowledged; resume each watch from its last resourceVersion`);
  }

  /**
   * End the socket: every watch ends with `code` (after an ERROR with `status`, if given), each
   * CLOSED naming its resume point, its hub's socket closed; then the client's socket closes.
   */
  #end(code: number, reason: string, status?: Status): void {
    if (this.#closed) return;
    this.#ending = true;
    for (const link of [...this.#watches.values()]) {
      if (status) {
        this.#fail(link, status, code);
        continue;
      }
      link.end(code, reason);
      this.#finish(link, code, reason);
    }
    this.#outbox.flush();
    this.clientClosed();
    try {
      this.#client.close(code, reason.slice(0, 120));
    } catch {
      // already closed
    }
  }

  /** A hub's lines for `link`, counted as its hub's `received` once taken (`undefined`: an earlier page of them). */
  #send(pieces: readonly string[], link: Link, received: number | undefined, alone: boolean): void {
    if (this.#closed) return;
    let size = 0;
    for (const piece of pieces) size += piece.length;
    if (received === undefined) this.#ledger.sentOwn(size);
    else this.#ledger.sent(size, link, received);
    this.#outbox.push(pieces, size, alone);
  }

  #sendOwn(text: string): void {
    if (this.#closed) return;
    this.#ledger.sentOwn(text.length);
    this.#outbox.push([text], text.length);
    this.#measure();
  }

  #write(text: string): void {
    if (this.#closed) return;
    try {
      // Counted (above) as its text, as the client acknowledges it once decompressed.
      this.#client.send(this.#settings.compressed && text.length >= MIN_COMPRESSED ? gzipFrame(encoder.encode(text)) : text);
    } catch {
      // The client is gone and its close not yet delivered.
      this.clientClosed();
    }
  }
}

/** The cluster a watch, view or logs op names (bare paths name the default one). */
function clusterOf(op: StreamOp): string {
  const path = parseApiPath(op.path);
  return (path.kind === "resource" ? path.cluster : undefined) ?? DEFAULT_CLUSTER;
}

/** The Status a refused watch request answered with (or one that says what it was). */
async function statusOf(response: Response): Promise<Status> {
  const text = await response.text();
  try {
    const status = JSON.parse(text) as Status;
    if (status.kind === "Status") return status;
  } catch {
    // not a Status
  }
  return failure(Math.max(response.status, 400), "BadRequest", `the path is not a watchable collection (the relay answered ${response.status})`);
}
