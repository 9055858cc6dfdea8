/**
 * @module
 * A minimal DevTools Protocol client for a Worker's isolate: workerd services it only while the
 * isolate handles an event, so a pending call keeps sending the Worker a trivial request.
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";

const NUDGE_EVERY_MS = 100;
const ignore = () => undefined;

export class Inspector {
  readonly #socket: WebSocket;
  readonly #nudgeUrl: string;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #listeners = new Map<string, (params: unknown) => void>();
  #nextId = 1;
  #nudging = false;

  private constructor(socket: WebSocket, nudgeUrl: string) {
    this.#socket = socket;
    this.#nudgeUrl = nudgeUrl;
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } };
      if (message.method !== undefined) this.#listeners.get(message.method)?.(message.params);
      const waiter = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!waiter || message.id === undefined) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
    socket.on("close", () => {
      for (const waiter of this.#pending.values()) waiter.reject(new Error("the inspector connection closed"));
      this.#pending.clear();
    });
  }

  /** `nudgeUrl`: a request the Worker answers by itself. */
  static connect(url: string, nudgeUrl: string): Promise<Inspector> {
    // wrangler's inspector proxy only admits local DevTools origins.
    const socket = new WebSocket(url, { origin: "http://127.0.0.1", maxPayload: 1 << 30 });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new Inspector(socket, nudgeUrl)));
      socket.once("error", reject);
    });
  }

  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#nextId++;
    const answer = new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
    void this.#nudge();
    return answer;
  }

  /** One listener per method. */
  on(method: string, listener: (params: unknown) => void): void {
    this.#listeners.set(method, listener);
  }

  close(): void {
    this.#socket.close();
  }

  async #nudge(): Promise<void> {
    if (this.#nudging) return;
    this.#nudging = true;
    try {
      while (this.#pending.size > 0) {
        await fetch(this.#nudgeUrl).then((r) => r.arrayBuffer(), ignore);
        await sleep(NUDGE_EVERY_MS);
      }
    } finally {
      this.#nudging = false;
    }
  }
}
