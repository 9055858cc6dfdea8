/**
 * @module
 * What the Worker asks a hub: already parsed and validated, so the hub never sees bad input.
 * It travels in one header of the request forwarded to the Durable Object (the WebSocket
 * upgrade must be a `fetch`, so every call uses the same path).
 */
import { carrier } from "../forwarded.ts";
import type { WatchKey } from "../k8s/key.ts";
import type { Grant } from "../auth/access.ts";
import type { Freshness } from "./feed.ts";
import type { ListOptions, WatchOptions } from "../k8s/options.ts";

/** `subject`: who asks (absent without auth): a hub started for it counts against its share. */
export type HubRequest =
  | { verb: "list"; key: WatchKey; options: ListOptions; subject?: string | undefined }
  | { verb: "get"; key: WatchKey; name: string; subject?: string | undefined }
  | {
      verb: "watch";
      key: WatchKey;
      options: WatchOptions;
      subject?: string | undefined;
      /** WebSocket subprotocol to echo. */
      protocol?: string;
      /** Absent without auth. */
      grant?: Grant;
    };

export type WatchRequest = Extract<HubRequest, { verb: "watch" }>;

/** The request forwarded to the hub: the client's own (so an upgrade stays an upgrade), with the parsed form. */
export const hubRequests = carrier<HubRequest>("x-relay-request");

/**
 * What a request needs of the hub's state, by the API server's rules: `resourceVersion` unset
 * is a consistent read for lists, gets and watch-lists; `0` is "any" (the live cache); a resume
 * from `N` needs only the window.
 */
export function freshnessFor(request: HubRequest): Freshness {
  const rv = request.verb === "get" ? { kind: "unset" as const } : request.options.resourceVersion;
  if (request.verb === "watch") {
    if (rv.kind === "exact" && request.options.sendInitialEvents !== true) return "stored";
    return rv.kind === "unset" && request.options.sendInitialEvents === true ? "current" : "live";
  }
  return rv.kind === "unset" ? "current" : "live";
}
