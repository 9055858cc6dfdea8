/**
 * @module
 * Discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/{g}/{v}`), answered from the
 * upstream so kubectl and client-go build their REST mappings as they do against the API
 * server. Only the headers that matter for content negotiation travel either way.
 */
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";
import type { Upstream } from "../upstream.ts";

export async function discovery(upstream: Upstream, path: string, search: string, accept: string | null): Promise<Response> {
  let response: Response;
  try {
    response = await upstream.fetch(path + search, { headers: accept ? { accept } : {} });
  } catch (e) {
    return statusResponse(serviceUnavailable(`the relay cannot reach the upstream API server for discovery: ${(e as Error).message}`, 5));
  }
  const headers = new Headers({ "cache-control": "no-cache, private" });
  const type = response.headers.get("content-type");
  if (type) headers.set("content-type", type);
  return new Response(response.body, { status: response.status, headers });
}
