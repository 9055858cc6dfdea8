/**
 * @module
 * A WebSocket as a pull stream: its messages as text in arrival order, then exactly one close.
 * The watch takes the next item only when its consumer asks for the next update, so what is
 * queued here is what the application has not processed yet, which is what the ACKs report.
 * A binary message is one of the compressed framings' (`src/k8s/websocket.ts`): a whole gzip
 * member of the text the batch framing would have sent, decompressed here and delivered in its
 * place, in order with the text messages around it.
 */
import { CLOSE } from "../k8s/websocket.ts";
import type { WatchSocket } from "./types.ts";

/** RFC 6455's close code for a message whose data is not what the protocol says. */
export const INVALID_DATA = 1007;

export type SocketItem = { kind: "message"; text: string } | { kind: "close"; code: number; reason: string };

/** A message as queued: a binary one's text is on its way from the decompressor. */
type Queued = { kind: "message"; text: string | Promise<string> } | Extract<SocketItem, { kind: "close" }>;

/** Whether this runtime can read the compressed framings (browsers, Node 18 and later). */
export const canDecompress = (): boolean => typeof DecompressionStream === "function";

export class SocketReader {
  readonly #socket: WatchSocket;
  #queue: Queued[] = [];
  #head = 0;
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(socket: WatchSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      // The relay and the API server send JSON watch events as text frames, the relay's compressed framings as gzip in binary ones.
      const data = event.data;
      if (typeof data === "string") this.#push({ kind: "message", text: data });
      else if (isBinary(data)) this.#push({ kind: "message", text: gunzip(data) });
    });
    socket.addEventListener("close", (event) => this.#end(event.code, event.reason));
    socket.addEventListener("error", () => this.#end(CLOSE.abnormal, "the connection failed"));
  }

  /** The next item; a binary message that is not gzip closes the socket (1007), and is its close. */
  async next(): Promise<SocketItem> {
    while (this.#head === this.#queue.length) await new Promise<void>((resolve) => (this.#wake = resolve));
    const item = this.#queue[this.#head++] as Queued;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
    if (item.kind === "close" || typeof item.text === "string") return item as SocketItem;
    try {
      return { kind: "message", text: await item.text };
    } catch (e) {
      const reason = `a binary message that is not gzip (${String(e)})`.slice(0, 120);
      this.close(INVALID_DATA, reason);
      return { kind: "close", code: INVALID_DATA, reason };
    }
  }

  /** Close from this side: the stream ends here, without waiting for the peer's close frame. */
  close(code: number, reason: string): void {
    if (this.#ended) return;
    try {
      this.#socket.close(code, reason);
    } catch {
      // already closing
    }
    this.#end(code, reason);
  }

  #end(code: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#push({ kind: "close", code, reason });
  }

  #push(item: Queued): void {
    if (this.#ended && item.kind === "message") return;
    // Settled here, read in order by `next`: a failure is not an unhandled rejection meanwhile.
    if (item.kind === "message" && typeof item.text !== "string") item.text.catch(() => undefined);
    this.#queue.push(item);
    this.#wake?.();
    this.#wake = undefined;
  }
}

const isBinary = (data: unknown): data is Blob | ArrayBuffer | ArrayBufferView => data instanceof ArrayBuffer || ArrayBuffer.isView(data) || (typeof Blob === "function" && data instanceof Blob);

/** One gzip member's text: a browser's WebSocket gives a Blob, Node's and others an ArrayBuffer or a view of one. */
function gunzip(data: Blob | ArrayBuffer | ArrayBufferView): Promise<string> {
  const blob = data instanceof Blob ? data : new Blob([data as ArrayBuffer]);
  return new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).text();
}
