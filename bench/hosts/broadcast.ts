/**
 * @module
 * The WebSocket side of the two Node baselines: a `ws` server on which a client subscribes to a
 * collection by the same URL it would give the relay (path + `labelSelector`), one topic per
 * distinct collection, each message sent as it is to every socket of its topic. A socket with
 * more than the relay's default budget (4 MiB) still buffered is cut off with the relay's close
 * code: a baseline that cannot keep up sheds subscribers as the relay does, instead of
 * buffering without bound until the machine runs out of memory.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

const BUDGET = 4 * 1024 * 1024;
const SLOW = 4008;

export class Topic {
  readonly path: string;
  readonly labelSelector: string;
  readonly sockets = new Set<WebSocket>();
  /** Newest resourceVersion received from upstream. */
  head = 0;

  constructor(path: string, labelSelector: string) {
    this.path = path;
    this.labelSelector = labelSelector;
  }

  /** Send one message to every subscriber; `text` frames either way (a Buffer would go as binary). */
  send(data: string | Buffer): void {
    for (const socket of this.sockets) {
      if (socket.bufferedAmount > BUDGET) {
        this.sockets.delete(socket);
        socket.close(SLOW, "slow subscriber");
        continue;
      }
      socket.send(data, { binary: false });
    }
  }
}

export const topicKey = (path: string, labelSelector: string): string => `${path}?${labelSelector}`;

export interface BroadcastServer {
  url: string;
  topics: Map<string, Topic>;
  /** The `head` operation both broadcasting baselines offer the bench: a topic's newest resourceVersion. */
  head(query: { path: string; labelSelector: string }): number;
  close(): Promise<void>;
}

/**
 * `follow` starts the upstream side of a new topic. `join` runs for each new subscriber before
 * it receives live messages (the raw-ws baseline replays what a resuming subscriber missed).
 */
export async function startBroadcast(follow: (topic: Topic) => void, join?: (topic: Topic, socket: WebSocket, query: URLSearchParams) => void): Promise<BroadcastServer> {
  const topics = new Map<string, Topic>();
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, clientTracking: false });
  await once(server, "listening");
  server.on("connection", (socket, request) => {
    const url = new URL(request.url ?? "/", "http://relay");
    const labelSelector = url.searchParams.get("labelSelector") ?? "";
    const key = topicKey(url.pathname, labelSelector);
    let topic = topics.get(key);
    if (!topic) {
      topics.set(key, (topic = new Topic(url.pathname, labelSelector)));
      follow(topic);
    }
    const joined = topic;
    socket.on("error", () => undefined);
    socket.on("close", () => joined.sockets.delete(socket));
    join?.(joined, socket, url.searchParams);
    joined.sockets.add(socket);
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    topics,
    head: ({ path, labelSelector }) => topics.get(topicKey(path, labelSelector))?.head ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
