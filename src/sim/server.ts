/**
 * @module
 * The listener: HTTP or HTTPS on one port, dispatching `/_sim/` to the control API and
 * everything else to the Kubernetes routes. It can restart (close every connection and the
 * listener, then listen on the same port again) while the state lives on.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { handleApi } from "./api.ts";
import { CONTROL_PREFIX, handleControl } from "./control.ts";
import type { SimState } from "./state.ts";

export interface ListenOptions {
  host: string;
  port: number;
  tls: { key: string; cert: string } | undefined;
}

export class SimServer {
  readonly #state: SimState;
  readonly #options: ListenOptions;
  #server: Server | undefined;
  #port = 0;
  #restarting: Promise<void> | undefined;

  constructor(state: SimState, options: ListenOptions) {
    this.#state = state;
    this.#options = options;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    const host = this.#options.host.includes(":") ? `[${this.#options.host}]` : this.#options.host;
    return `${this.#options.tls ? "https" : "http"}://${host}:${this.#port}`;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    // Prefixing (rather than resolving against a base) keeps a path like `//x/y` a path.
    const url = new URL(`http://simulator${req.url ?? "/"}`);
    if (url.pathname.startsWith(CONTROL_PREFIX)) {
      void handleControl(this.#state, (ms) => void this.restart(ms), req, res, url);
    } else {
      void handleApi(this.#state, req, res, url, `${this.#options.host}:${this.#port}`);
    }
  }

  async listen(port = this.#options.port): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse) => this.#handle(req, res);
    const server = this.#options.tls ? createHttpsServer({ key: this.#options.tls.key, cert: this.#options.tls.cert }, handler) : createHttpServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(e.code === "EADDRINUSE" ? new Error(`port ${port} on ${this.#options.host} is already in use: pick another --port, or 0 for a free one`) : e),
      );
      server.listen(port, this.#options.host, () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
  }

  async #shutdown(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    // Like an API server shutting down: watch streams end cleanly (EOF, no ERROR event).
    this.#state.watchers.forEach((w) => w.end());
    this.#state.logs.endAll();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Close everything, stay down for `downtimeMs`, then listen on the same port with the same state. */
  restart(downtimeMs: number): Promise<void> {
    this.#restarting ??= (async () => {
      await this.#shutdown();
      await delay(downtimeMs);
      await this.listen(this.#port);
    })().finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  /** Settles once the server listens: at once, or when a restart under way listens again (or fails to). */
  listening(): Promise<void> {
    return this.#restarting ?? Promise.resolve();
  }

  async close(): Promise<void> {
    await this.#restarting?.catch(() => undefined);
    await this.#shutdown();
  }
}
