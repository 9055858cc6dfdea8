/**
 * @module
 * Reads that make no hub (DESIGN.md, "Reads that make no hub"): a single-object get, and a list
 * of a field-selected key (one object's Events, one node's pods: what `kubectl describe` asks).
 * A hub is an upstream list and watch, held for the idle grace, and its collection written to
 * storage: worth it for what is watched, far more than one read costs the API server. So such a
 * read goes first to the live hubs that may hold it, asked to answer only from what they hold
 * (nothing started, nothing asked upstream: `held`), a get to its namespace's hub and then to
 * every namespace's; else it is one upstream request, passed on as the API server answers it
 * (`metadata.managedFields` dropped, as hubs drop them; a shard's items only).
 */
import type { Env } from "../env.ts";
import { hubName, upstreamCollectionUrl, type WatchKey } from "../k8s/key.ts";
import { collectionPath } from "../k8s/path.ts";
import { statusResponse } from "../k8s/status.ts";
import { hubRequests, isNotHeld, type HubRequest } from "../hub/request.ts";
import { trimmedList, withoutManagedFields } from "../lists/list-body.ts";
import { unreachable, upstreamRefusal, type Upstream } from "../upstream.ts";

type GetRequest = Extract<HubRequest, { verb: "get" }>;
type ListRequest = Extract<HubRequest, { verb: "list" }>;

/** What a read that makes no hub needs of its route. */
export interface ReadRoute {
  env: Env;
  /** The client's request (its query is the read's options, already validated). */
  raw: Request;
  upstream: Upstream;
  /** Whether objects lose `metadata.managedFields` (`STRIP_MANAGED_FIELDS`). */
  strip: boolean;
  /** Counts a read sent upstream. */
  passedThrough(verb: "get" | "list"): void;
}

/** A list is one upstream list, not a hub, when its key has none live: a field-selected key's (a hub per value is seldom shared). */
export const listsOnce = (request: ListRequest): boolean => request.key.fieldSelector !== "";

/** The hubs whose collection holds a get's object: its namespace's, then every namespace's. */
function holders(key: WatchKey): WatchKey[] {
  return key.namespace === undefined ? [key] : [key, { ...key, namespace: undefined }];
}

/** A get: from a live hub that holds the object, else one upstream get. */
export async function getObject(route: ReadRoute, request: GetRequest): Promise<Response> {
  for (const key of holders(request.key)) {
    const response = await route.env.WATCH_HUB.getByName(hubName(key)).fetch(hubRequests.attach(route.raw, { ...request, key, held: true }));
    if (!isNotHeld(response)) return response;
  }
  const query = passedOn(route.raw, ["resourceVersion"]);
  const path = `${collectionPath(request.key)}/${encodeURIComponent(request.name)}${query.size > 0 ? `?${query}` : ""}`;
  return passThrough(route, "get", path, async (answer) => {
    const json = (await answer.text()).trimEnd();
    return `${route.strip ? withoutManagedFields(json) : json}\n`;
  });
}

/** A list of a key `listsOnce` names: from its hub when live (`ask` sends `held` to it, or to a hot key's replica), else one upstream list. */
export async function listOnce(route: ReadRoute, request: ListRequest, ask: () => Promise<Response>): Promise<Response> {
  const response = await ask();
  if (!isNotHeld(response)) return response;
  const path = upstreamCollectionUrl(request.key, Object.fromEntries(passedOn(route.raw, ["resourceVersion", "resourceVersionMatch", "limit", "continue"])));
  const shard = request.options.shardSelector;
  return passThrough(route, "list", path, (answer) => {
    const body = answer.body as ReadableStream<Uint8Array>;
    return shard || route.strip ? body.pipeThrough(new TextDecoderStream()).pipeThrough(trimmedList({ shard, stripManagedFields: route.strip })) : body;
  });
}

/** The client's own values of the options the upstream is asked with (the Worker validated them). */
function passedOn(raw: Request, names: string[]): URLSearchParams {
  const query = new URL(raw.url).searchParams;
  const out = new URLSearchParams();
  for (const name of names) {
    const value = query.get(name);
    if (value) out.set(name, value);
  }
  return out;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

/** What the relay's identity needs for each read it passes through. */
const ASKED = { get: { what: "this object", needs: "get there" }, list: { what: "this collection", needs: "list there" } };

/** One upstream request, its answer passed on (`body` makes it the relay's), or its refusal as the client's Status. */
async function passThrough(route: ReadRoute, verb: "get" | "list", pathAndQuery: string, body: (answer: Response) => Promise<BodyInit> | BodyInit): Promise<Response> {
  route.passedThrough(verb);
  let response: Response;
  try {
    response = await route.upstream.fetch(pathAndQuery);
  } catch (e) {
    return statusResponse(unreachable(e));
  }
  if (response.status !== 200 || !response.body) return statusResponse(await upstreamRefusal(response, ASKED[verb]));
  return new Response(await body(response), { headers: JSON_HEADERS });
}
