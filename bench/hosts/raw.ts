/**
 * @module
 * The raw baselines, `raw-ws` and `raw-http`: the practical ceiling for fan-out. Each upstream line
 * is forwarded as the very bytes the API server sent; the last lines are kept, so they resume too.
 */
import { get, type ClientRequest } from "node:http";
import { serveParent } from "../children.ts";
import { ByteLines, eventVersion, isErrorEvent } from "../lines.ts";
import { startBroadcast, type Frame, type Topic } from "./broadcast.ts";

/** As many events as the relay's default window. */
const HISTORY = 10_000;

interface Line extends Frame {
  rv: number;
}

serveParent<{ upstreamUrl: string }>(async ({ upstreamUrl }) => {
  const histories = new Map<Topic, Line[]>();
  const open = new Set<ClientRequest>();
  let stopping = false;

  const follow = (topic: Topic): Promise<void> => {
    const history = histories.get(topic) ?? [];
    histories.set(topic, history);
    const query = new URLSearchParams({ watch: "1" });
    if (topic.labelSelector) query.set("labelSelector", topic.labelSelector);
    if (topic.head) query.set("resourceVersion", String(topic.head));
    let resolve = () => {};
    const answered = new Promise<void>((settle) => (resolve = settle));
    const request = get(`${upstreamUrl}${topic.path}?${query}`, { agent: false }, (response) => {
      resolve();
      const lines = new ByteLines();
      response.on("data", (chunk: Buffer) =>
        lines.push(chunk, (message, line) => {
          if (isErrorEvent(message)) return void (topic.head = 0);
          const rv = eventVersion(message);
          topic.head = rv;
          const frame = { rv, message, line };
          history.push(frame);
          if (history.length > HISTORY * 1.5) history.splice(0, history.length - HISTORY);
          topic.send(frame);
        }),
      );
    });
    open.add(request);
    request.on("error", () => undefined);
    request.on("close", () => {
      resolve();
      open.delete(request);
      if (!stopping) setTimeout(() => void follow(topic), 100);
    });
    return answered;
  };

  const server = await startBroadcast(follow, (topic, query) => {
    const from = Number(query.get("resourceVersion") ?? 0);
    if (!from) return [];
    const history = histories.get(topic) ?? [];
    if (history.length > 0 && from < (history[0] as Line).rv - 1) return "expired";
    return history.filter((line) => line.rv > from);
  });
  return server.served(() => {
    stopping = true;
    for (const request of open) request.destroy();
  });
});
