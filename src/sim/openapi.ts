/**
 * @module
 * OpenAPI v3 as kube-openapi serves it (`pkg/handler3`), when the simulator is told to publish
 * it (`openapi` in its config): an index at `/openapi/v3` naming each group/version's document
 * by a hash of its content, and the documents, with that hash as their ETag. A request naming
 * another hash is redirected (301) to the current one; one naming the current hash may be cached
 * forever. Each document has the paths and operations of its resources (with the
 * `x-kubernetes-group-version-kind` kubectl looks for, the patch types each takes and the
 * `fieldValidation` parameter, so kubectl leaves validation to the server) and the schemas of its
 * kinds with everything they reference (`schemas.ts`): what `kubectl explain` and client-side
 * `kubectl apply` read. v2 is an empty document (`src/k8s/openapi-v2.ts`): kubectl downloads it
 * before a write and, finding no schema there, leaves validation to the server as v3 told it to.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { notAcceptable } from "../k8s/negotiate.ts";
import { emptyOpenApiV2Json, OPENAPI_V2_PROTOBUF } from "../k8s/openapi-v2.ts";
import { ApiError, pathNotFound } from "./errors.ts";
import { apiHeaders } from "./http.ts";
import { DISCOVERABLE, SUBRESOURCES, type ApiResource } from "./resources.ts";
import { closure, SCHEMAS, schemaNameOf, schemaRef, type Schema } from "./schemas.ts";

export const OPENAPI_PREFIX = "/openapi/";

/** `api/v1`, `apis/apps/v1`: where a group/version's document lives under `/openapi/v3/`. */
const locationOf = (r: ApiResource): string => (r.group === "" ? `api/${r.version}` : `apis/${r.group}/${r.version}`);

const PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"];

const query = (name: string, description: string): Schema => ({ name, in: "query", description, schema: { type: "string", uniqueItems: true } });
const WRITE_PARAMETERS = [
  query("dryRun", "When present, indicates that modifications should not be persisted. The simulated cluster answers 400 to it."),
  query("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."),
  query("fieldValidation", "How the server treats fields it does not know: Ignore, Warn or Strict (an error for each)."),
];

interface Kind {
  group: string;
  version: string;
  kind: string;
}

type Json = Record<string, unknown>;

function operation(action: string, id: string, gvk: Kind, body?: { types: string[]; schema: Schema }): Json {
  const schema = schemaNameOf(gvk.group, gvk.version, gvk.kind);
  const content = schema ? { "application/json": { schema: schemaRef(schema) } } : undefined;
  return {
    operationId: id,
    ...(body ? { parameters: WRITE_PARAMETERS, requestBody: { content: Object.fromEntries(body.types.map((t) => [t, { schema: body.schema }])), required: true } } : {}),
    responses: { "200": { description: "OK", ...(content ? { content } : {}) } },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
  };
}

function pathItems(r: ApiResource): Record<string, Json> {
  const base = `/${locationOf(r)}`;
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const name = schemaNameOf(r.group, r.version, r.kind);
  const whole = name ? schemaRef(name) : { type: "object" };
  const patchTypes = r.custom ? PATCH_TYPES.filter((t) => !t.includes("strategic")) : PATCH_TYPES;
  const scoped = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}` : `${base}/${r.resource}`;
  const items: Record<string, Json> = {};
  if (!r.verbs.includes("get") && r.verbs.includes("create")) {
    // A review: create-only.
    items[scoped] = { post: operation("post", `create${r.kind}`, gvk, { types: ["application/json"], schema: whole }) };
    return items;
  }
  if (r.namespaced) items[`${base}/${r.resource}`] = { get: operation("list", `list${r.kind}ForAllNamespaces`, gvk) };
  items[scoped] = {
    get: operation("list", `list${r.kind}`, gvk),
    ...(r.verbs.includes("create") ? { post: operation("post", `create${r.kind}`, gvk, { types: ["application/json"], schema: whole }) } : {}),
  };
  items[`${scoped}/{name}`] = {
    get: operation("get", `read${r.kind}`, gvk),
    ...(r.verbs.includes("update")
      ? {
          put: operation("put", `replace${r.kind}`, gvk, { types: ["application/json"], schema: whole }),
          patch: operation("patch", `patch${r.kind}`, gvk, { types: patchTypes, schema: { type: "object" } }),
          delete: operation("delete", `delete${r.kind}`, gvk),
        }
      : {}),
  };
  for (const sub of SUBRESOURCES.filter((s) => s.parent === r)) {
    const subKind = { group: sub.group, version: sub.version, kind: sub.kind };
    const subName = schemaNameOf(sub.group, sub.version, sub.kind);
    const subWhole = subName ? schemaRef(subName) : { type: "object" };
    items[`${scoped}/{name}/${sub.subresource}`] = {
      get: operation("get", `read${r.kind}${sub.kind}`, subKind),
      put: operation("put", `replace${r.kind}${sub.kind}`, subKind, { types: ["application/json"], schema: subWhole }),
      patch: operation("patch", `patch${r.kind}${sub.kind}`, subKind, { types: PATCH_TYPES, schema: { type: "object" } }),
    };
  }
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

/** A group/version's document: its resources' paths, and the schemas of their kinds and of what those reference. */
function document(resources: readonly ApiResource[]): Published {
  const kinds = resources.flatMap((r) => [r, ...SUBRESOURCES.filter((s) => s.parent === r)]).flatMap((r) => schemaNameOf(r.group, r.version, r.kind) ?? []);
  const schemas = Object.fromEntries([...closure(kinds)].sort().map((name) => [name, SCHEMAS[name]]));
  return publish({ openapi: "3.0.0", info: { title: "Kubernetes", version: "v1.34.0" }, paths: Object.assign({}, ...resources.map(pathItems)), components: { schemas } });
}

/** Each group/version's document (built on first use: several hundred KB the relay's tests never ask for), and the index naming them by hash. */
let built: { documents: ReadonlyMap<string, Published>; index: Published } | undefined;
function published(): NonNullable<typeof built> {
  if (built) return built;
  const byLocation = new Map<string, ApiResource[]>();
  for (const r of DISCOVERABLE) byLocation.set(locationOf(r), [...(byLocation.get(locationOf(r)) ?? []), r]);
  const documents = new Map([...byLocation].map(([location, resources]) => [location, document(resources)]));
  const index = publish({ paths: Object.fromEntries([...documents].map(([location, d]) => [location, { serverRelativeURL: `/openapi/v3/${location}?hash=${d.hash}` }])) });
  built = { documents, index };
  return built;
}

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

/** v2: the empty document, as protobuf (what kubectl asks for) or JSON. */
function sendV2(req: IncomingMessage, res: ServerResponse): void {
  const protobuf = (req.headers.accept ?? "").includes("protobuf");
  const body = protobuf ? "" : emptyOpenApiV2Json("the simulated cluster publishes its schemas in OpenAPI v3 (/openapi/v3)");
  res.writeHead(200, { ...apiHeaders(protobuf ? OPENAPI_V2_PROTOBUF : "application/json"), "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** A GET under `/openapi/`: the index, a document, a redirect to a document's current hash, or 404. */
export function serveOpenApi(req: IncomingMessage, res: ServerResponse, url: URL): void {
  if (url.pathname === "/openapi/v2") return sendV2(req, res);
  const { documents, index } = published();
  if (url.pathname === "/openapi/v3") return send(req, res, index, false);
  const document = url.pathname.startsWith("/openapi/v3/") ? documents.get(url.pathname.slice("/openapi/v3/".length)) : undefined;
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
