/**
 * @module
 * `workerd-floor`: what fan-out costs in workerd itself. One Durable Object per collection holds a
 * raw upstream watch and sends each line as it came to every hibernatable WebSocket: no parsing,
 * storage or acknowledgements. It keeps the last lines, as raw-ws does, so a subscriber that
 * comes back with its resourceVersion gets what it missed: the storm's floor. What the relay
 * spends beyond this is its own. `bench/` is type-checked against Node's types, so the few
 * Workers APIs used here are declared here.
 */

import { errorLine } from "../../src/k8s/event.ts";
import { tooOldResourceVersion } from "../../src/k8s/status.ts";

interface Env {
  FLOOR: { getByName(name: string): { fetch(request: Request): Promise<Response> } };
  UPSTREAM_URL: string;
}

interface State {
  acceptWebSocket(socket: WebSocket): void;
}

declare const WebSocketPair: new () => Record<0 | 1, WebSocket>;

/** How long to wait before watching again after the upstream stream ended. */
const REWATCH_MS = 100;
/** As many events as the relay's default window (and raw-ws's). */
const HISTORY = 10_000;
/** The first resourceVersion of an event line is its object's (metadata precedes spec). */
const RESOURCE_VERSION = /"resourceVersion":"(\d+)"/;

interface Line {
  rv: number;
  text: string;
}

export class Floor {
  readonly #state: State;
  readonly #env: Env;
  readonly #sockets = new Set<WebSocket>();
  readonly #history: Line[] = [];
  /** The last resourceVersion followed (0: none, or the upstream's window expired). */
  #head = 0;
  #following = false;

  constructor(state: State, env: Env) {
    this.#state = state;
    this.#env = env;
  }

  fetch(request: Request): Response {
    const url = new URL(request.url);
    if (url.pathname === HEAD_PATH) return new Response(String(this.#head));
    const { 0: client, 1: server } = new WebSocketPair();
    this.#state.acceptWebSocket(server);
    if (!this.#following) void this.#follow(url);
    if (this.#replay(server, Number(url.searchParams.get("resourceVersion") ?? 0))) this.#sockets.add(server);
    const init: ResponseInit & { webSocket: WebSocket } = { status: 101, webSocket: client };
    return new Response(null, init);
  }

  /** What a subscriber from `from` missed, or a 410 if the history no longer reaches it; false once the socket is closed. */
  #replay(socket: WebSocket, from: number): boolean {
    if (!from) return true;
    const history = this.#history;
    const oldest = history[0]?.rv ?? 0;
    if (history.length > 0 && from < oldest - 1) {
      socket.send(errorLine(tooOldResourceVersion(from, oldest)));
      socket.close(1000, "resourceVersion expired");
      return false;
    }
    for (const line of history) if (line.rv > from) socket.send(line.text);
    return true;
  }

  webSocketMessage(): void {
    // Subscribers have nothing to say here.
  }

  webSocketClose(socket: WebSocket): void {
    this.#sockets.delete(socket);
  }

  webSocketError(socket: WebSocket): void {
    this.#sockets.delete(socket);
  }

  async #follow(url: URL): Promise<void> {
    this.#following = true;
    const query = new URLSearchParams({ watch: "1" });
    const selector = url.searchParams.get("labelSelector");
    if (selector) query.set("labelSelector", selector);
    for (;;) {
      if (this.#head) query.set("resourceVersion", String(this.#head));
      else query.delete("resourceVersion");
      try {
        const response = await fetch(`${this.#env.UPSTREAM_URL}${url.pathname}?${query}`);
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let partial = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const lines = (partial + decoder.decode(value, { stream: true })).split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) {
            if (line) this.#keep(line);
            for (const socket of this.#sockets) socket.send(line);
          }
        }
      } catch {
        // the stream broke: watch again
      }
      await new Promise((resolve) => setTimeout(resolve, REWATCH_MS));
    }
  }

  #keep(text: string): void {
    if (text.startsWith('{"type":"ERROR"')) {
      this.#head = 0;
      return;
    }
    const rv = Number(RESOURCE_VERSION.exec(text)?.[1] ?? 0);
    this.#head = rv;
    this.#history.push({ rv, text });
    if (this.#history.length > HISTORY * 1.5) this.#history.splice(0, this.#history.length - HISTORY);
  }
}

/** The bench's `head`: the last resourceVersion a collection's object followed (`?path=&labelSelector=`). */
const HEAD_PATH = "/_bench/head";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    // The bench's inspector nudge: answered here, without creating a Durable Object.
    if (url.pathname === "/_bench/nudge") return new Response(null, { status: 204 });
    const path = url.pathname === HEAD_PATH ? (url.searchParams.get("path") ?? "") : url.pathname;
    return env.FLOOR.getByName(`${path}?${url.searchParams.get("labelSelector") ?? ""}`).fetch(request);
  },
};
