/**
 * @module
 * The WatchMux Durable Object: one per relay socket (`/_relay/socket`), made by the Worker for
 * the socket it admitted. It holds the client's WebSocket and, for each watch the client opens,
 * an ordinary WebSocket watch to that watch's hub, asked of the relay's own routes, so each
 * watch is resolved, authorised, admitted and re-checked exactly as a standalone watch: each hub
 * keeps its one upstream watch and fans out once per connection, this one included.
 *
 * It does not hibernate: the sockets it opens to hubs are outgoing ones, which never do, so its
 * state (the watches, the token they are asked with) lives in memory for the socket's life.
 */
import { DurableObject } from "cloudflare:workers";
import { hubSettings, logLevel } from "../config.ts";
import type { Env } from "../env.ts";
import { createApp } from "../http/app.ts";
import { badRequest, statusResponse } from "../k8s/status.ts";
import { answerClose, upgradeResponse } from "../handshake.ts";
import { socketFraming } from "../k8s/mux.ts";
import { logger, setLogLevel } from "../log.ts";
import { credentialsOf, opRequest, socketRequests } from "./request.ts";
import { Session } from "./session.ts";

/** The relay's routes, built once per isolate, as the Worker builds them. */
let relay: ReturnType<typeof createApp> | undefined;

export class WatchMux extends DurableObject<Env> {
  readonly #log = logger({ component: "mux" });

  override async fetch(request: Request): Promise<Response> {
    const admission = socketRequests.read(request);
    if (!admission) return statusResponse(badRequest("a relay socket is opened at /_relay/socket"));
    const credentials = credentialsOf(request);
    const routes = (relay ??= createApp());
    setLogLevel(logLevel(this.env));
    const settings = hubSettings(this.env);
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    // Half-open: the client's close is answered by `answerClose`, not by the runtime, which would echo any code.
    server.accept({ allowHalfOpen: true });
    const session = new Session(
      server,
      { ...socketFraming(admission.protocol), maxWatches: settings.maxSubscriptionsPerSubject, expiresAt: admission.expiresAt, budget: settings.subscriberBudget },
      // With this object's waitUntil, so what the routes count (refusals) is reported as from the Worker.
      async (op) => routes.fetch(opRequest(op, credentials), this.env, { waitUntil: (promise) => this.ctx.waitUntil(promise), passThroughOnException: () => undefined, props: {} }),
      logger({ component: "mux", subject: admission.subject }),
    );
    server.addEventListener("message", (event) => {
      try {
        session.message(event.data as string | ArrayBuffer);
      } catch (e) {
        this.#log("message failed", { error: String(e), stack: (e as Error).stack }, "error");
      }
    });
    server.addEventListener("close", (event) => {
      session.clientClosed();
      answerClose(server, event.code, event.reason);
    });
    server.addEventListener("error", () => session.clientClosed());
    return upgradeResponse(client, admission.protocol);
  }
}
