/**
 * @module
 * The `node-relay` baseline: one `@kubernetes/client-node` watch per collection, each event
 * `JSON.stringify`'d once for every client. No replay window: a client that reconnects relists.
 */
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { serveParent } from "../children.ts";
import { startBroadcast, type Topic } from "./broadcast.ts";

serveParent<{ upstreamUrl: string }>(async ({ upstreamUrl }) => {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "sim", server: upstreamUrl, skipTLSVerify: true }],
    users: [{ name: "bench" }],
    contexts: [{ name: "sim", cluster: "sim", user: "bench" }],
    currentContext: "sim",
  });
  const watch = new Watch(config);
  const open = new Set<AbortController>();
  let stopping = false;

  const follow = async (topic: Topic): Promise<void> => {
    let controller: AbortController | undefined;
    const query = { ...(topic.labelSelector ? { labelSelector: topic.labelSelector } : {}), ...(topic.head ? { resourceVersion: String(topic.head) } : {}) };
    controller = await watch.watch(
      topic.path,
      query,
      (type: string, object: { metadata?: { resourceVersion?: string } }) => {
        // Expired: start again from now (the watch ends and is restarted below).
        if (type === "ERROR") return void (topic.head = 0);
        topic.head = Math.max(topic.head, Number(object.metadata?.resourceVersion ?? 0));
        const message = JSON.stringify({ type, object });
        topic.send({ message, line: `${message}\n` });
      },
      () => {
        if (controller) open.delete(controller);
        // As informers do: watch again from the last resourceVersion after a stream ends.
        if (!stopping) setTimeout(() => void follow(topic), 100);
      },
    );
    open.add(controller);
  };

  const server = await startBroadcast(follow);
  return server.served(() => {
    stopping = true;
    for (const controller of open) controller.abort();
  });
});
