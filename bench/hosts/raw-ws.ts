/**
 * @module
 * The `raw-ws` baseline: the practical ceiling for WebSocket fan-out on this machine. One raw
 * HTTP watch per collection; each line is forwarded as the very bytes the API server sent (no
 * parsing, no serialising), one pre-serialised message to every socket. It keeps the last
 * lines in memory, so a subscriber resuming with `resourceVersion` gets what it missed: the
 * ceiling for a storm of resumes, too.
 */
import { get, type ClientRequest } from "node:http";
import { serveParent } from "../children.ts";
import { ByteLines, eventVersion, isErrorEvent } from "../lines.ts";
import { startBroadcast, type Topic } from "./broadcast.ts";

interface RawWsArgs {
  upstreamUrl: string;
}

/** As many events as the relay's default window. */
const HISTORY = 10_000;

interface Line {
  rv: number;
  bytes: Buffer;
}

serveParent<RawWsArgs>(async ({ upstreamUrl }) => {
  const histories = new Map<Topic, Line[]>();
  const open = new Set<ClientRequest>();
  let stopping = false;

  const follow = (topic: Topic): void => {
    const history = histories.get(topic) ?? [];
    histories.set(topic, history);
    const query = new URLSearchParams({ watch: "1" });
    if (topic.labelSelector) query.set("labelSelector", topic.labelSelector);
    if (topic.head) query.set("resourceVersion", String(topic.head));
    const request = get(`${upstreamUrl}${topic.path}?${query}`, { agent: false }, (response) => {
      const lines = new ByteLines();
      response.on("data", (chunk: Buffer) =>
        lines.push(chunk, (bytes) => {
          if (isErrorEvent(bytes)) return void (topic.head = 0);
          const rv = eventVersion(bytes);
          topic.head = rv;
          history.push({ rv, bytes });
          if (history.length > HISTORY * 1.5) history.splice(0, history.length - HISTORY);
          topic.send(bytes);
        }),
      );
    });
    open.add(request);
    request.on("error", () => undefined);
    request.on("close", () => {
      open.delete(request);
      if (!stopping) setTimeout(() => follow(topic), 100);
    });
  };

  const server = await startBroadcast(follow, (topic, socket, query) => {
    const from = Number(query.get("resourceVersion") ?? 0);
    if (!from) return;
    const history = histories.get(topic) ?? [];
    if (history.length > 0 && from < (history[0] as Line).rv - 1) {
      socket.send('{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}');
      return void socket.close(1000, "resourceVersion expired");
    }
    for (const line of history) if (line.rv > from) socket.send(line.bytes, { binary: false });
  });
  return {
    info: { url: server.url, pid: process.pid },
    ops: { head: server.head },
    async stop() {
      stopping = true;
      for (const request of open) request.destroy();
      await server.close();
    },
  };
});
