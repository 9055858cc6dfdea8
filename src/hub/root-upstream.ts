/**
 * @module
 * A replica hub's upstream: its key's root hub, listed and watched through the relay's own
 * list+watch as any subscriber would (an HTTP watch the root's fan-out sends in batches and
 * holds, then cuts off, when the replica does not take what it is sent). So a replica is an
 * ordinary hub whose reflector reads the root instead of the API server: the same
 * resourceVersions, bookmarks, relists and resumes, and the root's one upstream watch for
 * every replica (DESIGN.md, "Hot keys").
 */
import type { WatchKey } from "../k8s/key.ts";
import { parseListOptions, parseWatchOptions } from "../k8s/options.ts";
import { statusResponse } from "../k8s/status.ts";
import type { Upstream } from "../upstream.ts";
import { hubRequests, type HubRequest } from "./request.ts";

/** Reaches a hub by name (the hubs' namespace, as a replica has it). */
export type HubByName = (name: string) => { fetch(request: Request): Promise<Response> };

/** The root of `key` as a replica's upstream; `self`: the replica's name, which the root counts its watches as. */
export function rootUpstream(key: WatchKey, root: string, self: string, hub: HubByName): Upstream {
  return {
    cluster: key.cluster,
    async fetch(pathAndQuery, init) {
      const url = new URL(pathAndQuery, "http://root");
      const query = url.searchParams;
      let request: HubRequest;
      if (query.get("watch") === "1" || query.get("watch") === "true") {
        const options = parseWatchOptions(query);
        if (!options.ok) return statusResponse(options.status);
        request = { verb: "watch", key, options: options.value, fromReplica: self };
      } else {
        const options = parseListOptions(query);
        if (!options.ok) return statusResponse(options.status);
        request = { verb: "list", key, options: options.value, fromReplica: self };
      }
      const response = await hub(root).fetch(hubRequests.attach(new Request(url), request));
      const signal = init?.signal;
      if (!signal || !response.body) return response;
      // A Durable Object's response body does not end when the caller gives up: it fails here,
      // with the abort's reason, as a fetch's body does.
      const reader = response.body.getReader();
      let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => void (stream = controller),
        async pull(controller) {
          const { done, value } = await reader.read();
          if (signal.aborted) return; // errored already, by the abort
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      signal.addEventListener(
        "abort",
        () => {
          stream?.error(signal.reason);
          void reader.cancel(signal.reason).catch(() => undefined);
        },
        { once: true },
      );
      return new Response(body, { status: response.status, headers: response.headers });
    },
  };
}
