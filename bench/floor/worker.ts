/**
 * @module
 * `workerd-floor`: what fan-out costs in workerd itself. One Durable Object per collection holds a
 * raw upstream watch and sends each line as it came to every hibernatable WebSocket: no parsing,
 * storage, window or acknowledgements. What the relay spends beyond this is its own. `bench/` is
 * type-checked against Node's types, so the few Workers APIs used here are declared here.
 */

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

export class Floor {
  readonly #state: State;
  readonly #env: Env;
  readonly #sockets = new Set<WebSocket>();
  #following = false;

  constructor(state: State, env: Env) {
    this.#state = state;
    this.#env = env;
  }

  fetch(request: Request): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.#state.acceptWebSocket(server);
    this.#sockets.add(server);
    if (!this.#following) void this.#follow(new URL(request.url));
    const init: ResponseInit & { webSocket: WebSocket } = { status: 101, webSocket: client };
    return new Response(null, init);
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
          for (const line of lines) for (const socket of this.#sockets) socket.send(line);
        }
      } catch {
        // the stream broke: watch again
      }
      await new Promise((resolve) => setTimeout(resolve, REWATCH_MS));
    }
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    // The bench's inspector nudge: answered here, without creating a Durable Object.
    if (url.pathname === "/_bench/nudge") return new Response(null, { status: 204 });
    return env.FLOOR.getByName(`${url.pathname}?${url.searchParams.get("labelSelector") ?? ""}`).fetch(request);
  },
};
