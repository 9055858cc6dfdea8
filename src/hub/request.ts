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
import { decodeContinue, LATEST } from "./snapshots.ts";
import type { GetOptions, ListOptions, WatchOptions } from "../k8s/options.ts";
import type { ViewSpec } from "../k8s/view.ts";
import type { ReplicaRole } from "./replicas.ts";

/**
 * What every request says besides: `subject`, who asks (absent without auth), a hub started for
 * it counts against its share; `replicaOf`: the hub asked is a replica (DESIGN.md, "Hot keys").
 */
export type HubRequest =
  /** `gzip`: the client takes the list gzip-coded (and the Worker passes it on as the hub wrote it). */
  (
    | { verb: "list"; key: WatchKey; options: ListOptions; gzip?: boolean | undefined }
    /** One object (`namespace`: its own, which the key of every namespace's hub does not name). */
    | { verb: "get"; key: WatchKey; namespace: string | undefined; name: string; options: GetOptions }
    | {
        verb: "watch";
        key: WatchKey;
        options: WatchOptions;
        /** WebSocket subprotocol to echo. */
        protocol?: string;
        /** Absent without auth. */
        grant?: Grant;
      }
    | {
        /** A live view (DESIGN.md, "Live views"): its window once (`watch` false), or kept live. */
        verb: "view";
        key: WatchKey;
        view: ViewSpec;
        watch: boolean;
        timeoutSeconds?: number | undefined;
        protocol?: string;
        grant?: Grant;
      }
  ) & {
    subject?: string | undefined;
    replicaOf?: ReplicaRole | undefined;
    /** Who asks is this replica of the hub asked (its root), which lists and watches it. */
    fromReplica?: string | undefined;
    /** The hub asked serves it: it was sent there by another hub of its tree (not placed again). */
    here?: boolean | undefined;
    /** The region the request came in from, where a hot key's replica for it is made (`local` without one). */
    region?: string | undefined;
    /**
     * A read to answer only from what the hub holds now, asking the upstream nothing and starting
     * nothing; else `notHeld()`, and the Worker asks the upstream (DESIGN.md, "Reads that make no hub").
     */
    held?: boolean | undefined;
  };

export type WatchRequest = Extract<HubRequest, { verb: "watch" }>;
export type ViewRequest = Extract<HubRequest, { verb: "view" }>;

/** The request forwarded to the hub: the client's own (so an upgrade stays an upgrade), with the parsed form. */
export const hubRequests = carrier<HubRequest>("x-relay-request");

/**
 * What a request needs of the hub's state, by the API server's rules: `resourceVersion` unset
 * is a consistent read for lists, gets and watch-lists; `0` is "any" (the live cache); a resume
 * from `N` needs only the window, and a list's next page only the snapshot its token names (one
 * for the latest state, after its own expired: a consistent read of the rest).
 */
export function freshnessFor(request: HubRequest): Freshness {
  // A view is of the live cache, as a watch from "any" is.
  if (request.verb === "view") return "live";
  if (request.verb === "list" && request.options.continue) return decodeContinue(request.options.continue)?.rv === LATEST ? "current" : "stored";
  const rv = request.options.resourceVersion;
  if (request.verb === "watch") {
    if (rv.kind === "exact" && request.options.sendInitialEvents !== true) return "stored";
    return rv.kind === "unset" && request.options.sendInitialEvents === true ? "current" : "live";
  }
  return rv.kind === "unset" ? "current" : "live";
}

/**
 * The resourceVersion a hub's state must have reached to answer a `held` read from what it holds
 * (`resourceVersion=0`: any; `N`: not older than N); `undefined` for what only the upstream
 * answers as asked: a list at an exact past resourceVersion, and a consistent read
 * (`resourceVersion` unset), which a hub could answer only once it had asked the upstream how far
 * it has got, where the upstream's own answer costs it no more and is exact (DESIGN.md, "Reads
 * that make no hub").
 */
export function heldNeeds(request: HubRequest): number | undefined {
  if (request.verb !== "get" && request.verb !== "list") return undefined;
  const options = request.options;
  const rv = options.resourceVersion;
  if (rv.kind === "unset") return undefined;
  if (rv.kind === "zero") return 0;
  if ("limit" in options && (options.resourceVersionMatch === "Exact" || (options.resourceVersionMatch === undefined && options.limit !== undefined))) return undefined;
  return rv.rv;
}

const NOT_HELD_HEADER = "x-relay-not-held";

/** A hub's answer to a `held` read it cannot answer from what it holds. */
export const notHeld = (): Response => new Response(null, { status: 204, headers: { [NOT_HELD_HEADER]: "1" } });

export const isNotHeld = (response: Response): boolean => response.headers.has(NOT_HELD_HEADER);
