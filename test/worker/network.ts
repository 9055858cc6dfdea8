/**
 * The client's "network" in the Workers tests: the relay, reached through the client's
 * transport seam, behind sockets the test can drop as a failing network would (1006, in-flight
 * messages lost) and connections it can hold while the cluster moves; and iterators run in
 * the background into inboxes.
 */
import { gunzipSync } from "node:zlib";
import type { Transport, WatchSocket } from "../../src/client/index.ts";
import { GZIP_PREFIX } from "../../src/k8s/websocket.ts";
import { Inbox } from "../kit/inbox.ts";
import { relay } from "./helpers.ts";

type Listener = (event: never) => void;

/** A relay WebSocket the test can drop as a failing network would: 1006, later messages lost. */
export class DroppableSocket implements WatchSocket {
  readonly #socket: WebSocket;
  readonly #listeners = new Map<string, Listener[]>();
  #dropped = false;
  /** Lengths of the text messages delivered (a compressed message's: the text it holds), in order. */
  readonly received: number[] = [];
  /** The text messages delivered (a compressed message: the text it holds), in order. */
  readonly messages: string[] = [];
  /** How many of them came compressed (binary). */
  binary = 0;
  /** What the client sent (its ACKs). */
  readonly sent = new Inbox<string>();

  /** `compressed`: the relay agreed to a compressed framing, whose binary messages are gzip. */
  constructor(socket: WebSocket, compressed = false) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      if (this.#dropped) return;
      const data = event.data as string | ArrayBuffer;
      if (typeof data !== "string") this.binary++;
      const text = typeof data === "string" || !compressed ? (data as string) : new TextDecoder().decode(gunzipSync(new Uint8Array(data)));
      this.received.push(text.length);
      this.messages.push(text);
      this.#emit("message", { data: event.data });
    });
    socket.addEventListener("close", (event) => {
      if (!this.#dropped) this.#emit("close", { code: event.code, reason: event.reason });
    });
  }

  send(message: string): void {
    this.sent.push(message);
    this.#socket.send(message);
  }

  close(code?: number, reason?: string): void {
    this.#socket.close(code, reason);
  }

  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
  addEventListener(type: string, listener: Listener): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  drop(): void {
    if (this.#dropped) return;
    this.#dropped = true;
    try {
      this.#socket.close(1000, "dropped by the test");
    } catch {
      // already closed
    }
    this.#emit("close", { code: 1006, reason: "" });
  }

  #emit(type: string, event: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) (listener as (event: unknown) => void)(event);
  }
}

/** The client's transport: the relay, behind a network the test controls. */
export class TestNetwork implements Transport {
  lists = 0;
  readonly listHeaders: Array<Record<string, string>> = [];
  readonly sockets: DroppableSocket[] = [];
  readonly offered: string[][] = [];
  readonly accepted: Array<string | null> = [];
  /** The WebSocket URLs connected to. */
  readonly urls: string[] = [];
  #gate: Promise<void> | undefined;

  fetch(url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<Response> {
    this.lists++;
    this.listHeaders.push(init.headers);
    const { pathname, search } = new URL(url);
    return relay(pathname + search, init);
  }

  async connect(url: string, protocols: string[]): Promise<WatchSocket> {
    await this.#gate;
    this.offered.push(protocols);
    this.urls.push(url);
    const { pathname, search } = new URL(url);
    const response = await relay(pathname + search, {
      headers: { upgrade: "websocket", ...(protocols.length > 0 ? { "sec-websocket-protocol": protocols.join(", ") } : {}) },
    });
    if (!response.webSocket) throw new Error(`no WebSocket upgrade: ${response.status} ${await response.text()}`);
    const accepted = response.headers.get("sec-websocket-protocol");
    const compressed = accepted?.startsWith(GZIP_PREFIX) === true;
    // The compressed framings' binary messages as a browser's WebSocket gives them when asked, read at once here.
    if (compressed) response.webSocket.binaryType = "arraybuffer";
    response.webSocket.accept();
    this.accepted.push(accepted);
    const socket = new DroppableSocket(response.webSocket, compressed);
    this.sockets.push(socket);
    return socket;
  }

  /** Hold every new connection until the returned function is called. */
  hold(): () => void {
    let release = () => undefined as void;
    this.#gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.#gate = undefined;
      release();
    };
  }

  /** Drop the current socket. */
  drop(): void {
    this.sockets.at(-1)?.drop();
  }
}

/** Run an iterator in the background; its updates (bookmarks aside) land in an inbox. */
export function collect<U extends { type: string }>(updates: AsyncGenerator<U>): Inbox<U> & { failure?: unknown } {
  const inbox: Inbox<U> & { failure?: unknown } = new Inbox<U>();
  void (async () => {
    try {
      for await (const update of updates) if (update.type !== "BOOKMARK") inbox.push(update);
      inbox.end();
    } catch (e) {
      inbox.failure = e;
      inbox.end({ reason: String(e) });
    }
  })();
  return inbox;
}
