/**
 * @module
 * OpenAPI v3 as kube-openapi serves it (`pkg/handler3`), when the simulator is told to publish
 * it (`openapi` in its config): an index at `/openapi/v3` naming each group/version's document
 * by a hash of its content, and the documents, with that hash as their ETag. A request naming
 * another hash is redirected (301) to the current one; one naming the current hash may be cached
 * forever. The documents list each resource's collection paths and no schemas. There is no v2
 * (its protobuf is not worth simulating): 404, as from a server that does not publish it.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { notAcceptable } from "../k8s/negotiate.ts";
import { ApiError, pathNotFound } from "./errors.ts";
import { apiHeaders } from "./http.ts";
import { DISCOVERABLE, type ApiResource } from "./resources.ts";

export const OPENAPI_PREFIX = "/openapi/";

/** `api/v1`, `apis/apps/v1`: where a group/version's document lives under `/openapi/v3/`. */
const locationOf = (r: ApiResource): string => (r.group === "" ? `api/${r.version}` : `apis/${r.group}/${r.version}`);

function pathItems(r: ApiResource): Record<string, unknown> {
  const get = { get: { operationId: `list${r.kind}`, responses: { "200": { description: "OK" } } } };
  const base = `/${locationOf(r)}`;
  const items: Record<string, unknown> = { [`${base}/${r.resource}`]: get };
  if (r.namespaced) items[`${base}/namespaces/{namespace}/${r.resource}`] = get;
  return items;
}

interface Published {
  body: string;
  /** kube-openapi's ETag: SHA-512 of the JSON, upper-case hex. */
  hash: string;
}

const publish = (document: unknown): Published => {
  const body = JSON.stringify(document);
  return { body, hash: createHash("sha512").update(body).digest("hex").toUpperCase() };
};

/** Each group/version's document, and the index naming them by hash. */
const DOCUMENTS: ReadonlyMap<string, Published> = (() => {
  const byLocation = new Map<string, ApiResource[]>();
  for (const r of DISCOVERABLE) byLocation.set(locationOf(r), [...(byLocation.get(locationOf(r)) ?? []), r]);
  return new Map(
    [...byLocation].map(([location, resources]) => [
      location,
      publish({ openapi: "3.0.0", info: { title: "Kubernetes", version: "v1.34.0" }, paths: Object.assign({}, ...resources.map(pathItems)), components: { schemas: {} } }),
    ]),
  );
})();

const INDEX = publish({ paths: Object.fromEntries([...DOCUMENTS].map(([location, d]) => [location, { serverRelativeURL: `/openapi/v3/${location}?hash=${d.hash}` }])) });

function send(req: IncomingMessage, res: ServerResponse, document: Published, immutable: boolean): void {
  const etag = `"${document.hash}"`;
  const headers: Record<string, string> = { ...apiHeaders(), ETag: etag, Vary: "Accept" };
  if (immutable) {
    headers["Cache-Control"] = "public, immutable";
    headers.Expires = new Date(Date.now() + 365 * 86_400_000).toUTCString();
  }
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": Buffer.byteLength(document.body) });
  res.end(document.body);
}

/** A GET under `/openapi/`: the index, a document, a redirect to a document's current hash, or 404. */
export function serveOpenApi(req: IncomingMessage, res: ServerResponse, url: URL): void {
  if (url.pathname === "/openapi/v3") return send(req, res, INDEX, false);
  const document = url.pathname.startsWith("/openapi/v3/") ? DOCUMENTS.get(url.pathname.slice("/openapi/v3/".length)) : undefined;
  if (!document) throw new ApiError(pathNotFound());
  const accept = req.headers.accept ?? "*/*";
  if (!/application\/json|\*\/\*|application\/\*/.test(accept)) throw new ApiError(notAcceptable());
  const hash = url.searchParams.get("hash");
  if (hash !== null && hash !== document.hash) {
    res.writeHead(301, { Location: `${url.pathname}?hash=${document.hash}`, "Content-Length": 0 });
    res.end();
    return;
  }
  send(req, res, document, hash !== null);
}
