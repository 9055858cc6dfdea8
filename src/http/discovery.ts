/**
 * @module
 * Discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/{g}[/{v}]`), answered from the
 * upstream through the isolate's document cache, so kubectl and client-go build their REST
 * mappings as they do against the API server. The Accept header is negotiated here: aggregated
 * discovery for `/api` and `/apis` when the client asks for it, plain JSON otherwise, 406 when
 * it accepts nothing the relay sends. The upstream is asked in one canonical form per
 * representation, which is also what the cache is keyed on; an upstream without aggregated
 * discovery answers plain JSON, which is passed on as it is (clients fall back to it). A group
 * or version the cluster's lists do not name is a 404 without asking the upstream for it.
 */
import { AGGREGATED_DISCOVERY, negotiate, notAcceptable } from "../k8s/negotiate.ts";
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { DocumentUnavailable, type DocumentCache, type DocumentFetch } from "./document-cache.ts";
import { listsGroupVersion, notFoundPath } from "./resource-resolver.ts";

/** The Accept the upstream is asked with, per representation. */
const UPSTREAM_ACCEPT = { aggregated: `${AGGREGATED_DISCOVERY},application/json`, json: "application/json" } as const;

/** `/api/{v}`, `/apis/{g}`, `/apis/{g}/{v}`: the group and version the path names, if any. */
function groupVersionOf(path: string): { group: string; version: string | undefined } | undefined {
  const [root, first, second] = path.split("/").slice(1);
  if (root === "api" && first !== undefined) return { group: "", version: first };
  if (root === "apis" && first !== undefined) return { group: first, version: second };
  return undefined;
}

export async function discovery(cache: DocumentCache, cluster: string, fetch: DocumentFetch, path: string, accept: string | undefined): Promise<Response> {
  const representation = negotiate(accept, { table: false, aggregated: path === "/api" || path === "/apis" });
  if (!representation) return statusResponse(notAcceptable());
  const named = groupVersionOf(path);
  if (named && (await listsGroupVersion(cache, cluster, fetch, named.group, named.version)) === false) {
    const what = named.group === "" ? named.version : named.version === undefined ? `the API group ${named.group}` : `${named.group}/${named.version}`;
    return statusResponse(notFoundPath(`the upstream API server does not serve ${what}`));
  }
  const upstreamAccept = representation.kind === "aggregated" ? UPSTREAM_ACCEPT.aggregated : UPSTREAM_ACCEPT.json;
  try {
    const document = await cache.get(cluster, path, upstreamAccept, fetch);
    return new Response(document.body, { status: document.status, headers: { "content-type": document.contentType, "cache-control": "no-cache, private" } });
  } catch (e) {
    if (!(e instanceof DocumentUnavailable)) throw e;
    return statusResponse(serviceUnavailable(`the relay cannot serve discovery: ${e.message}`, 5));
  }
}
