/**
 * @module
 * The WebSocket form of a watch (`Upgrade: websocket` on `?watch=1`), as the API server serves
 * it: one JSON event per text message, and a close frame at the end. `ws` rather than the global
 * WebSocket, because a check needs what the server answered when it refused the upgrade, and the
 * cluster's CA. The token goes in the `Authorization` header; `Origin` is the server's own,
 * since the API server's WebSocket handler refuses a handshake without one.
 */
import WebSocket from "ws";
import { SocketReader } from "../src/client/socket.ts";
import type { Api, Query } from "./http.ts";
import { EventStream, itemOf, type StreamItem } from "./stream.ts";

export type SocketOpened = { ok: true; stream: EventStream } | { ok: false; status: number; text: string };

const HANDSHAKE_MS = 15_000;
/** How long to read a refusal's body. */
const REFUSAL_MS = 1000;

export function openWebSocketWatch(api: Api, path: string, query: Query): Promise<SocketOpened> {
  const url = api.url(path, { ...query, watch: 1 });
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const { ca, insecure } = api.endpoint;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: api.headers({ origin: api.origin }),
      handshakeTimeout: HANDSHAKE_MS,
      ...(ca ? { ca } : {}),
      rejectUnauthorized: !insecure,
    });
    // Listen before the handshake completes: the first events may come with it.
    const reader = new SocketReader(socket);
    socket.once("unexpected-response", (_request, response) => {
      // Not a 101. Its body says why, unless it is a stream that goes on (the HTTP watch, from a
      // server that ignores the upgrade): take what comes within a moment.
      const chunks: Buffer[] = [];
      const refused = () => {
        clearTimeout(timer);
        resolve({ ok: false, status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
        socket.terminate();
      };
      const timer = setTimeout(refused, REFUSAL_MS);
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", refused);
      response.on("error", refused);
    });
    socket.once("open", () => resolve({ ok: true, stream: new EventStream(messages(reader), () => socket.terminate()) }));
    socket.once("error", (e) => reject(new Error(`WebSocket to ${url.origin}${url.pathname}: ${e.message}`)));
  });
}

/** Each text message as one item: the API server sends one event per message. */
async function* messages(reader: SocketReader): AsyncGenerator<StreamItem> {
  for (;;) {
    const item = await reader.next();
    if (item.kind === "close") {
      yield { kind: "end", code: item.code, reason: item.reason };
      return;
    }
    yield itemOf(item.text.replace(/\n$/, ""));
  }
}
