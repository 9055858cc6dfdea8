/**
 * @module
 * OpenAPI documents, as kubectl asks for them: `/openapi/v3` (the index), the documents it lists
 * (`/openapi/v3/apis/apps/v1?hash=...`, for `kubectl explain` and client-side validation) and
 * `/openapi/v2` (where a cluster has no v3, and before a write). They come from the upstream
 * through the isolate's document cache, so however many clients ask, the upstream is asked once
 * per document and TTL. Nothing else is asked upstream: a path the index does not list is a 404,
 * a hash that is not the index's current one gets kube-openapi's own answer (a 301 to the current
 * one, `pkg/handler3`), queries are not passed on, and the representation is one of two (JSON,
 * or protobuf when the client accepts it). Validators are the upstream's, so a client's
 * `If-None-Match` gets a 304 from the cache.
 *
 * When the upstream publishes no v2 document (404), the relay answers an empty one, which
 * kubectl reads as "no schema known, skip client-side validation" (kubectl `pkg/util/validation`
 * `schemaValidation.validateResource`), so a mistaken `kubectl apply` reaches the relay's
 * read-only 405, which says what is wrong, instead of failing to download a schema.
 */
import { emptyOpenApiV2Json, OPENAPI_V2_PROTOBUF } from "../k8s/openapi-v2.ts";
import { isDnsLabel } from "../k8s/path.ts";
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { DocumentUnavailable, type DocumentCache, type DocumentFetch, type UpstreamDocument } from "./document-cache.ts";
import { notFoundPath, textOf } from "./resource-resolver.ts";

/** `/openapi/...` with an optional `/clusters/{name}` prefix: the cluster and the path upstream. */
const OPENAPI_PATH = /^(?:\/clusters\/([^/]+))?(\/openapi\/v[23](?:\/.*)?)$/;

export function parseOpenApiPath(pathname: string): { cluster: string | undefined; path: string } | undefined {
  const match = OPENAPI_PATH.exec(pathname);
  if (!match || (match[1] !== undefined && !isDnsLabel(match[1]))) return undefined;
  return { cluster: match[1], path: match[2] ?? "" };
}

const V2 = "/openapi/v2";
const V3 = "/openapi/v3";

/** What the upstream is asked with: kubectl's own Accept for each representation. */
const JSON_TYPE = "application/json";
const PROTOBUF = { v2: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", v3: "application/com.github.proto-openapi.spec.v3@v1.0+protobuf" };

/** Where the documents live, and the index's current location of each, parsed once per index document. */
const indexes = new WeakMap<UpstreamDocument, Map<string, string>>();

/** The v3 index (`{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=..."}}}`) as a Map. */
function locations(index: UpstreamDocument): Map<string, string> {
  let parsed = indexes.get(index);
  if (parsed) return parsed;
  parsed = new Map();
  try {
    const paths = (JSON.parse(textOf(index)) as { paths?: unknown }).paths;
    if (paths && typeof paths === "object") {
      for (const [key, entry] of Object.entries(paths)) {
        const url = (entry as { serverRelativeURL?: unknown } | null)?.serverRelativeURL;
        if (typeof url === "string" && url.startsWith(`${V3}/`)) parsed.set(key, url);
      }
    }
  } catch {
    // not an index: it lists nothing
  }
  indexes.set(index, parsed);
  return parsed;
}

export interface OpenApiRequest {
  cluster: string | undefined;
  /** The path upstream: `/openapi/v2`, `/openapi/v3[/...]`. */
  path: string;
  query: URLSearchParams;
  request: Request;
}

export async function openapi(cache: DocumentCache, cluster: string, fetch: DocumentFetch, asked: OpenApiRequest): Promise<Response> {
  const { path, request } = asked;
  const protobuf = (request.headers.get("accept") ?? "").includes("protobuf");
  const get = (upstreamPath: string, accept: string) => cache.get(cluster, upstreamPath, accept, fetch);
  try {
    if (path === V2) {
      const document = await get(V2, protobuf ? PROTOBUF.v2 : JSON_TYPE);
      return document.status === 404 ? emptyV2(protobuf) : respond(document, request, true);
    }
    if (path === V3) return respond(await get(V3, JSON_TYPE), request, true);
    const listed = path.startsWith(`${V3}/`) ? path.slice(V3.length + 1) : undefined;
    const index = listed === undefined ? undefined : await get(V3, JSON_TYPE);
    const current = listed !== undefined && index?.status === 200 ? locations(index).get(listed) : undefined;
    if (current === undefined) return statusResponse(notFoundPath(`the upstream's OpenAPI v3 index lists no ${path}; the relay serves ${V2}, ${V3} and what that index lists`));
    const hash = new URL(current, "http://upstream").searchParams.get("hash");
    const asking = asked.query.get("hash");
    if (asking !== null && asking !== hash) {
      return new Response(null, { status: 301, headers: { location: `${asked.cluster === undefined ? "" : `/clusters/${asked.cluster}`}${current}`, "cache-control": "no-cache, private" } });
    }
    // What the upstream says of the hashed location (immutable) holds only for a request that named it.
    return respond(await get(current, protobuf ? PROTOBUF.v3 : JSON_TYPE), request, asking !== null);
  } catch (e) {
    if (!(e instanceof DocumentUnavailable)) throw e;
    return statusResponse(serviceUnavailable(`the relay cannot serve ${path}: ${e.message}`, 5));
  }
}

/** The cached document, or a 304 when the client holds it already; `caching`: pass on the upstream's Cache-Control and Expires. */
function respond(document: UpstreamDocument, request: Request, caching: boolean): Response {
  const headers = new Headers({ "content-type": document.contentType });
  for (const [name, value] of Object.entries(document.headers)) {
    if (caching || (name !== "cache-control" && name !== "expires")) headers.set(name, value);
  }
  if (!headers.has("cache-control")) headers.set("cache-control", "no-cache, private");
  const etag = document.headers.etag;
  const held = request.headers.get("if-none-match");
  if (document.status === 200 && etag !== undefined && held?.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(document.body, { status: document.status, headers });
}

/** An OpenAPI v2 document with no definitions: empty protobuf (zero bytes) or minimal JSON, as asked. */
function emptyV2(protobuf: boolean): Response {
  const headers = { "cache-control": "no-cache, private" };
  if (protobuf) return new Response(new Uint8Array(0), { headers: { ...headers, "content-type": OPENAPI_V2_PROTOBUF } });
  return new Response(emptyOpenApiV2Json("the upstream API server publishes no OpenAPI document"), { headers: { ...headers, "content-type": "application/json" } });
}
