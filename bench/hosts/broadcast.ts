/**
 * @module
 * The Node baselines' serving side, WebSocket and HTTP watches; a subscriber with more than the
 * relay's default budget unsent is cut off, so a baseline never buffers without bound.
 */
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { Served } from "../children.ts";

const BUDGET = 4 * 1024 * 1024;
const SLOW = 4008;
const EXPIRED = '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}';

/** One event as each transport sends it: a WebSocket message, an HTTP watch's line (with its `\n`). */
export interface Frame {
  message: string | Buffer;
  line: string | Buffer;
}

export class Topic {
  readonly path: string;
  readonly labelSelector: string;
  readonly sockets = new Set<WebSocket>();
  readonly responses = new Set<ServerResponse>();
  head = 0;
  /** Settles once the first upstream watch has been answered: a subscriber taken before would lose events. */
  ready: Promise<void> = Promise.resolve();

  constructor(path: string, labelSelector: string) {
    this.path = path;
    this.labelSelector = labelSelector;
  }

  send(frame: Frame): void {
    for (const socket of this.sockets) {
      if (socket.bufferedAmount > BUDGET) {
        this.sockets.delete(socket);
        socket.close(SLOW, "slow subscriber");
        continue;
      }
      // `text` frames either way (a Buffer would go as binary).
      socket.send(frame.message, { binary: false });
    }
    for (const response of this.responses) {
      if (response.writableLength > BUDGET) {
        this.responses.delete(response);
        response.end();
        continue;
      }
      response.write(frame.line);
    }
  }
}

const topicKey = (path: string, labelSelector: string): string => `${path}?${labelSelector}`;

export interface BroadcastServer {
  /** What a baseline's host serves: its addresses, `head`, and a stop that `unfollow`s first. */
  served(unfollow: () => void): Served;
}

/** `follow` starts a topic's upstream watch; `join` answers what a subscriber missed, or `"expired"` (410). */
export async function startBroadcast(follow: (topic: Topic) => Promise<void>, join?: (topic: Topic, query: URLSearchParams) => readonly Frame[] | "expired"): Promise<BroadcastServer> {
  const topics = new Map<string, Topic>();
  const topicOf = (url: URL): Topic => {
    const labelSelector = url.searchParams.get("labelSelector") ?? "";
    const key = topicKey(url.pathname, labelSelector);
    let topic = topics.get(key);
    if (!topic) {
      topics.set(key, (topic = new Topic(url.pathname, labelSelector)));
      topic.ready = follow(topic);
    }
    return topic;
  };
  const missed = (topic: Topic, url: URL) => join?.(topic, url.searchParams) ?? [];

  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://relay");
    if (!url.searchParams.has("watch")) return void response.writeHead(404).end();
    const topic = topicOf(url);
    await topic.ready;
    response.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" });
    // Headers now: a watch may have nothing to say for a while.
    response.flushHeaders();
    response.on("error", () => undefined);
    response.on("close", () => topic.responses.delete(response));
    const replay = missed(topic, url);
    if (replay === "expired") return void response.end(`${EXPIRED}\n`);
    for (const frame of replay) response.write(frame.line);
    topic.responses.add(response);
  });
  server.on("upgrade", async (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://relay");
    const topic = topicOf(url);
    await topic.ready;
    sockets.handleUpgrade(request, socket, head, (ws) => {
      ws.on("error", () => undefined);
      ws.on("close", () => topic.sockets.delete(ws));
      const replay = missed(topic, url);
      if (replay === "expired") {
        ws.send(EXPIRED);
        return void ws.close(1000, "resourceVersion expired");
      }
      for (const frame of replay) ws.send(frame.message, { binary: false });
      topic.sockets.add(ws);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const topic of topics.values()) {
        for (const socket of topic.sockets) socket.terminate();
        for (const response of topic.responses) response.destroy();
      }
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    served: (unfollow) => ({
      info: { urls: { ws: `ws://127.0.0.1:${port}`, http: `http://127.0.0.1:${port}` }, pid: process.pid },
      ops: { head: ({ path, labelSelector }: { path: string; labelSelector: string }) => topics.get(topicKey(path, labelSelector))?.head ?? 0 },
      async stop() {
        unfollow();
        await close();
      },
    }),
  };
}
