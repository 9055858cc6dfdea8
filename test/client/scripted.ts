/**
 * A relay the client tests script: every WebSocket the client opens is a socket the test drives
 * (messages, closes) and reads (what the client sent, whether it closed it), and every fetch
 * takes the next answer the test queued. The relay itself is exercised in test/worker.
 */
import type { Transport, WatchSocket } from "../../src/client/index.ts";

type Listener = (event: never) => void;

export class ScriptedSocket implements WatchSocket {
  readonly #listeners = new Map<string, Listener[]>();
  readonly url: string;
  /** What the client sent (its ACKs). */
  readonly sent: string[] = [];
  /** The client closed it, with this code. */
  closedWith: number | undefined;

  constructor(url: string) {
    this.url = url;
  }
  send(message: string): void {
    this.sent.push(message);
  }
  close(code = 1000): void {
    this.closedWith ??= code;
  }
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
  addEventListener(type: string, listener: Listener): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  event(type: string, object: unknown): void {
    this.#emit("message", { data: `${JSON.stringify({ type, object })}\n` });
  }
  /** One line as the relay writes it (a delta, a view's frame). */
  line(text: string): void {
    this.#emit("message", { data: `${text}\n` });
  }
  /** A binary message, as the compressed framings send (gzip of their text), or anything else. */
  binary(data: ArrayBuffer | Uint8Array | Blob): void {
    this.#emit("message", { data });
  }
  modified(rv: number): void {
    this.event("MODIFIED", { kind: "Pod", metadata: { name: "p", namespace: "n", resourceVersion: String(rv) } });
  }
  serverClose(code: number, reason = ""): void {
    this.#emit("close", { code, reason });
  }
  #emit(type: string, event: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) (listener as (e: unknown) => void)(event);
  }
}

/** Each connect takes the next scripted outcome: a socket the test drives, or a failure. */
export class ScriptedRelay implements Transport {
  readonly sockets: ScriptedSocket[] = [];
  /** The answers to the client's fetches (its lists), in order. */
  readonly lists: Array<() => Response> = [];
  /** The URLs fetched. */
  readonly fetched: string[] = [];
  failNextConnect = false;
  /** Called as each socket opens (before the client sees it). */
  onConnect: (socket: ScriptedSocket) => void = () => undefined;

  /** When each list was asked for (performance.now()). */
  readonly listedAt: number[] = [];

  async fetch(url: string): Promise<Response> {
    this.listedAt.push(performance.now());
    this.fetched.push(url);
    const next = this.lists.shift();
    if (!next) throw new Error("unexpected list");
    return next();
  }

  /** The subprotocols each connect offered. */
  readonly offered: string[][] = [];

  async connect(url: string, protocols: string[] = []): Promise<WatchSocket> {
    this.offered.push(protocols);
    if (this.failNextConnect) {
      this.failNextConnect = false;
      throw new Error("connection refused");
    }
    const socket = new ScriptedSocket(url);
    this.sockets.push(socket);
    this.onConnect(socket);
    return socket;
  }
}
