/**
 * @module
 * OpenAPI documents (`/openapi/v2`, `/openapi/v3[/...]`), passed through from the upstream so
 * `kubectl explain` and kubectl's validation work as against the API server. kubectl downloads
 * them before any write: when the upstream publishes no v2 document (404), the relay answers an
 * empty one, which kubectl reads as "no schema known, skip client-side validation" (kubectl
 * `pkg/util/validation` `schemaValidation.validateResource`), so a mistaken `kubectl apply`
 * reaches the relay's read-only 405, which says what is wrong, instead of failing to download
 * a schema. Not cached: these are large, rare and versioned by the upstream (`?hash=`).
 */
import { isDnsLabel } from "../k8s/path.ts";
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";

/** Fetches a path (with query) upstream with the given headers; rejects when the upstream is unreachable. */
export type OpenApiFetch = (pathAndQuery: string, headers: Record<string, string>) => Promise<Response>;

/** `/openapi/...` with an optional `/clusters/{name}` prefix: the cluster and the path upstream. */
const OPENAPI_PATH = /^(?:\/clusters\/([^/]+))?(\/openapi\/v[23](?:\/.*)?)$/;

export function parseOpenApiPath(pathname: string): { cluster: string | undefined; path: string } | undefined {
  const match = OPENAPI_PATH.exec(pathname);
  if (!match || (match[1] !== undefined && !isDnsLabel(match[1]))) return undefined;
  return { cluster: match[1], path: match[2] ?? "" };
}

/** Headers that matter for what the upstream sends (format, revalidation) and for how clients cache it. */
const REQUEST_HEADERS = ["accept", "if-none-match"];
const RESPONSE_HEADERS = ["content-type", "cache-control", "etag", "last-modified", "vary"];

/** kube-openapi's protobuf media type, with the `.` spelling Go's mime parser accepts in a Content-Type. */
const V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

export async function openapi(fetch: OpenApiFetch, path: string, search: string, request: Request): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value) headers[name] = value;
  }
  let upstream: Response;
  try {
    upstream = await fetch(path + search, headers);
  } catch (e) {
    return statusResponse(serviceUnavailable(`the relay cannot reach the upstream API server for ${path}: ${(e as Error).message}`, 5));
  }
  if (upstream.status === 404 && path === "/openapi/v2") return emptyV2(request.headers.get("accept") ?? "");
  const out = new Headers();
  for (const name of RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value) out.set(name, value);
  }
  return new Response(upstream.body, { status: upstream.status, headers: out });
}

/** An OpenAPI v2 document with no definitions: empty protobuf (zero bytes) or minimal JSON, as asked. */
function emptyV2(accept: string): Response {
  const headers = { "cache-control": "no-cache, private" };
  if (accept.includes("protobuf")) return new Response(new Uint8Array(0), { headers: { ...headers, "content-type": V2_PROTOBUF } });
  const document = { swagger: "2.0", info: { title: "the upstream API server publishes no OpenAPI document", version: "unversioned" }, paths: {} };
  return new Response(`${JSON.stringify(document)}\n`, { headers: { ...headers, "content-type": "application/json" } });
}
