/**
 * @module
 * Discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/{g}[/{v}]`), answered from the
 * upstream through the isolate's discovery cache, so kubectl and client-go build their REST
 * mappings as they do against the API server. The Accept header is negotiated here: aggregated
 * discovery for `/api` and `/apis` when the client asks for it, plain JSON otherwise, 406 when
 * it accepts nothing the relay sends. The upstream is asked in one canonical form per
 * representation, which is also what the cache is keyed on; an upstream without aggregated
 * discovery answers plain JSON, which is passed on as it is (clients fall back to it).
 */
import { AGGREGATED_DISCOVERY, negotiate, notAcceptable } from "../k8s/negotiate.ts";
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { DiscoveryUnavailable, type DiscoveryCache, type DiscoveryFetch } from "./discovery-cache.ts";

/** The Accept the upstream is asked with, per representation. */
const UPSTREAM_ACCEPT = { aggregated: `${AGGREGATED_DISCOVERY},application/json`, json: "application/json" } as const;

export async function discovery(cache: DiscoveryCache, cluster: string, fetch: DiscoveryFetch, path: string, accept: string | undefined): Promise<Response> {
  const representation = negotiate(accept, { table: false, aggregated: path === "/api" || path === "/apis" });
  if (!representation) return statusResponse(notAcceptable());
  const upstreamAccept = representation.kind === "aggregated" ? UPSTREAM_ACCEPT.aggregated : UPSTREAM_ACCEPT.json;
  try {
    const document = await cache.get(cluster, path, upstreamAccept, fetch);
    return new Response(document.body, { status: document.status, headers: { "content-type": document.contentType, "cache-control": "no-cache, private" } });
  } catch (e) {
    if (!(e instanceof DiscoveryUnavailable)) throw e;
    return statusResponse(serviceUnavailable(`the relay cannot serve discovery: ${e.message}`, 5));
  }
}
