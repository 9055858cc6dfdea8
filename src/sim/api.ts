/**
 * @module
 * The Kubernetes API routes: every request outside `/_sim/` is logged, authenticated, checked
 * against injected failures, authorized, then served as discovery, a review, list, watch, get
 * or a write, with errors as `Status` objects in the API server's codes and wording.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { parseFieldSelector } from "../k8s/fields.ts";
import { isWatch, parseListOptions, parseWatchOptions } from "../k8s/options.ts";
import { isValidObjectName, parseApiPath, collectionPath, type ApiPath, type ResourcePath } from "../k8s/path.ts";
import { badRequest, failure, internalError, invalidListOptions, methodNotAllowed, notFound, tooLargeResourceVersion, unauthorized } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { AGGREGATED_DISCOVERY, negotiate, notAcceptable, type Representation } from "../k8s/negotiate.ts";
import { tableOptions, toTable } from "../k8s/table.ts";
import { discoveryDocument } from "./discovery.ts";
import { ApiError, pathNotFound, unsupportedMediaType } from "./errors.ts";
import { requestFilter } from "./filter.ts";
import { readBytes, readJson, sendJson, sendList, sendStatus, wantsPretty } from "./http.ts";
import { FRESHNESS_WAIT_MS, listBody, listObjects } from "./list.ts";
import { serveHostileLog, serveLog } from "./logs.ts";
import { OPENAPI_PREFIX, serveOpenApi } from "./openapi.ts";
import { authorize, certificateIdentity, forbiddenStatus, type Attributes, type Identity } from "./rbac.ts";
import type { Verb } from "./requestlog.ts";
import { findResource, SUBRESOURCES, type ApiResource, type ResourceDef } from "./resources.ts";
import { findMetricsResource, metricsItems, metricsList, metricsObject } from "./metrics.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import { reviewAnswer, type Answer } from "./reviews.ts";
import type { SimState } from "./state.ts";
import { WatchStream } from "./watch.ts";
import { PATCH_TYPES, type Propagation, type WriteOptions } from "./writes.ts";
import { decodeProtobuf, PROTOBUF } from "./protobuf.ts";
import { patchScale, replaceScale, scaleOf } from "./scale.ts";
import { parseFieldValidation } from "./validation.ts";

const WRITE_VERBS: Record<string, Verb> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

function verbOf(method: string, path: ReturnType<typeof parseApiPath>, query: URLSearchParams): Verb {
  if (path.kind === "discovery") return "discovery";
  const write = WRITE_VERBS[method];
  if (write) return write;
  // A GET on an item path with ?watch is a plain GET (requestinfo.go); the legacy /watch/ form is always a watch.
  if (path.kind === "resource" && (path.legacyWatch || (path.name === undefined && isWatch(query)))) return "watch";
  return path.kind === "resource" && path.name === undefined ? "list" : "get";
}

/** The name a list or watch narrows to with `fieldSelector=metadata.name=x`, which RBAC sees as the request's name. */
function selectedName(query: URLSearchParams): string | undefined {
  try {
    const name = parseFieldSelector(query.get("fieldSelector") ?? "").requirements.find((r) => r.field === "metadata.name" && r.operator === "=")?.value;
    return name !== undefined && isValidObjectName(name) ? name : undefined;
  } catch {
    // requestinfo.go ignores a selector it cannot parse; the list handler rejects it later.
    return undefined;
  }
}

/** What the authorizer is asked about a request (requestinfo.go). */
function requestAttributes(method: string, path: ApiPath, pathname: string, verb: Verb, query: URLSearchParams): Attributes {
  if (path.kind !== "resource" || path.cluster !== undefined) return { kind: "nonResource", verb: method.toLowerCase(), path: pathname };
  return {
    kind: "resource",
    verb: verb === "delete" && path.name === undefined ? "deletecollection" : verb,
    group: path.group,
    resource: path.resource,
    subresource: path.subresource ?? "",
    // A Namespace object is checked in itself: requestinfo reads `/namespaces/x` as namespace x.
    namespace: (path.resource === "namespaces" ? path.name : path.namespace) ?? "",
    name: path.name ?? (verb === "list" || verb === "watch" ? selectedName(query) : undefined) ?? "",
  };
}

export async function handleApi(state: SimState, req: IncomingMessage, res: ServerResponse, url: URL, serverAddress: string): Promise<void> {
  const method = req.method ?? "GET";
  const path = parseApiPath(url.pathname);
  const query = url.searchParams;
  const verb = verbOf(method, path, query);
  state.log.record(method, verb, url.pathname, url.search.slice(1), res);
  const pretty = wantsPretty(req, query);
  try {
    // A client certificate is authenticated before any bearer token (the union authenticator's order).
    const certificate = state.config.clientCertificateUser;
    const identity = certificate !== null ? certificateIdentity(certificate) : state.users.authenticate(req.headers.authorization);
    const injected = state.faults.takeFailure(verb, url.pathname);
    if (injected) throw new ApiError(injected);
    const delayMs = state.faults.takeDelay(verb, url.pathname);
    if (delayMs > 0) await sleep(delayMs);
    if (identity) {
      const attributes = requestAttributes(method, path, url.pathname, verb, query);
      const decision = authorize(identity, attributes);
      if (!decision.allowed) throw new ApiError(forbiddenStatus(identity, attributes, decision.reason));
    }
    if (state.config.openapi && url.pathname.startsWith(OPENAPI_PREFIX)) {
      if (method !== "GET" && method !== "HEAD") throw new ApiError(methodNotAllowed());
      return serveOpenApi(req, res, url);
    }
    if (path.kind === "invalid" || path.cluster !== undefined) throw new ApiError(pathNotFound());
    if (path.kind === "discovery") return serveDiscovery(req, res, path.path, serverAddress, pretty);
    const answer = reviewAnswer(path, state.config);
    if (answer) {
      await serveReview(req, res, path, answer, identity, pretty);
      return;
    }
    const metrics = findMetricsResource(path.group, path.version, path.resource);
    if (metrics) return serveMetrics(state, req, res, metrics, path, verb, query, pretty);
    const def = findResource(path.group, path.version, path.resource);
    if (def?.resource === "pods" && path.subresource === "log" && path.namespace !== undefined && path.name !== undefined && !path.legacyWatch) {
      if (method !== "GET") throw new ApiError(methodNotAllowed());
      const hostile = state.faults.takeHostileLog(url.pathname);
      if (hostile !== undefined) return serveHostileLog(res, hostile);
      return serveLog(state.store, state.logs, req, res, path.namespace, path.name, query);
    }
    const scaled = def !== undefined && path.subresource === "scale" && SUBRESOURCES.some((s) => s.parent === def && s.subresource === "scale");
    if (!def || (path.subresource !== undefined && !scaled) || (path.namespace !== undefined && !def.namespaced)) throw new ApiError(pathNotFound());
    if (def.namespaced && path.namespace === undefined && path.name !== undefined) throw new ApiError(pathNotFound());
    if (scaled) return await serveScale(state, req, res, def, path, query, pretty);
    await serveResource(state, req, res, def, path, verb, query, pretty);
  } catch (e) {
    if (res.headersSent) {
      res.destroy();
    } else if (e instanceof ApiError) {
      sendStatus(res, e.status, pretty);
    } else {
      console.error(`simulator: ${method} ${url.pathname}${url.search} failed:`, e);
      sendStatus(res, internalError(String(e)), pretty);
    }
  }
}

function serveDiscovery(req: IncomingMessage, res: ServerResponse, path: string, serverAddress: string, pretty: boolean): void {
  const representation = negotiate(req.headers.accept, { table: false, aggregated: path === "/api" || path === "/apis" });
  if (!representation) throw new ApiError(notAcceptable());
  if (req.method !== "GET") throw new ApiError(methodNotAllowed());
  const aggregated = representation.kind === "aggregated";
  const document = discoveryDocument(path, aggregated, serverAddress);
  if (!document) throw new ApiError(pathNotFound());
  sendJson(res, 200, document, { contentType: aggregated ? AGGREGATED_DISCOVERY : "application/json", pretty });
}

/** A review: created on its cluster-scoped collection, about the authenticated caller. */
async function serveReview(req: IncomingMessage, res: ServerResponse, path: ResourcePath, answer: Answer, identity: Identity | undefined, pretty: boolean): Promise<void> {
  if (path.namespace !== undefined || path.name !== undefined || path.subresource !== undefined || path.legacyWatch) throw new ApiError(pathNotFound());
  if (req.method !== "POST") throw new ApiError(methodNotAllowed());
  // Only the open simulator lets a request without credentials this far, and a review needs a caller to be about.
  if (!identity) throw new ApiError(unauthorized());
  requireContentType(req, ["application/json"]);
  sendJson(res, 201, answer(identity, await readJson(req)), { pretty });
}

function readRepresentation(req: IncomingMessage): Representation {
  const representation = negotiate(req.headers.accept, { table: true, aggregated: false });
  if (!representation) throw new ApiError(notAcceptable());
  return representation;
}

async function serveResource(state: SimState, req: IncomingMessage, res: ServerResponse, def: ResourceDef, path: ResourcePath, verb: Verb, query: URLSearchParams, pretty: boolean): Promise<void> {
  const { namespace, name } = path;
  const method = req.method ?? "GET";
  if (verb === "watch" || path.legacyWatch) {
    if (method !== "GET") throw new ApiError(methodNotAllowed());
    return serveWatch(state, req, res, def, path, query);
  }
  if (method === "GET" && name === undefined) {
    const representation = readRepresentation(req);
    if (state.config.listDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.config.listDelayMs));
    const result = await listObjects(state.store, def, requestFilter(def, namespace, query), query);
    if (representation.kind === "table") {
      const table = toTable(def, result.items, result.metadata, tableOptions(representation.version, query));
      return sendJson(res, 200, table, { contentType: representation.contentType, pretty });
    }
    return sendList(res, listBody(def, result), pretty);
  }
  if (method === "GET" && name !== undefined) {
    const representation = readRepresentation(req);
    const object = state.store.get(def, metaNamespaceKey(namespace, name));
    if (!object) throw new ApiError(notFound(def.resource, name, def.group));
    if (representation.kind === "table") {
      const table = toTable(def, [object], { resourceVersion: object.metadata?.resourceVersion ?? "" }, tableOptions(representation.version, query));
      return sendJson(res, 200, table, { contentType: representation.contentType, pretty });
    }
    return sendJson(res, 200, object, { pretty });
  }
  if (method === "POST" && name === undefined && (namespace !== undefined || !def.namespaced)) {
    const options = writeOptions(query);
    const created = state.writes.create(def, namespace, await readObject(req, def), options);
    return sendWritten(res, 201, created, options, pretty);
  }
  if (method === "PUT" && name !== undefined) {
    const options = writeOptions(query);
    return sendWritten(res, 200, state.writes.replace(def, namespace, name, await readObject(req, def), options), options, pretty);
  }
  // An object a write names is looked up first, as the API server does, so a dry run of an absent one is its 404.
  if ((method === "PATCH" || method === "DELETE") && name !== undefined && !state.store.get(def, metaNamespaceKey(namespace, name))) throw new ApiError(notFound(def.resource, name, def.group));
  if (method === "PATCH" && name !== undefined) {
    const options = writeOptions(query);
    const type = requireContentType(req, patchTypesOf(def)) as keyof typeof PATCH_TYPES;
    return sendWritten(res, 200, state.writes.patch(def, namespace, name, PATCH_TYPES[type], await readJson(req), options), options, pretty);
  }
  if (method === "DELETE" && name !== undefined) {
    writeOptions(query);
    const deleted = state.writes.remove(def, namespace, name, await readPropagation(req));
    return sendJson(res, 200, def.returnDeletedObject ? deleted : deletedStatus(def, deleted), { pretty });
  }
  throw new ApiError(methodNotAllowed());
}

/** Custom resources take no strategic merge patch (the API server's 415 for them lists the others). */
const patchTypesOf = (def: ResourceDef): string[] => Object.keys(PATCH_TYPES).filter((t) => !def.custom || PATCH_TYPES[t as keyof typeof PATCH_TYPES] !== "strategic");

const dryRunRefused = (): ApiError => new ApiError(badRequest("the simulated cluster does not do server-side dry runs (dryRun=All): use kubectl's --dry-run=client, or leave the flag out"));

/** A write's query: its field validation; a dry run, which the simulator does not do, is refused rather than done for real. */
function writeOptions(query: URLSearchParams): WriteOptions & { warnings: string[] } {
  if (query.getAll("dryRun").some((v) => v !== "")) throw dryRunRefused();
  return { fieldValidation: parseFieldValidation(query), warnings: [] };
}

/** A written object, with a `Warning` header for each field `fieldValidation=Warn` found unknown. */
function sendWritten(res: ServerResponse, code: number, object: unknown, options: { warnings: string[] }, pretty: boolean): void {
  if (options.warnings.length)
    res.setHeader(
      "Warning",
      options.warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  sendJson(res, code, object, { pretty });
}

/** A create or update body: JSON, or for built-in kinds the protobuf kubectl's typed client sends. */
async function readObject(req: IncomingMessage, def: ResourceDef): Promise<unknown> {
  const type = requireContentType(req, def.custom ? ["application/json"] : ["application/json", PROTOBUF]);
  return type === PROTOBUF ? decodeProtobuf(await readBytes(req)) : readJson(req);
}

/** DELETE's optional `DeleteOptions` body: its `propagationPolicy` (Background when not given). */
async function readPropagation(req: IncomingMessage): Promise<Propagation> {
  const body = await readBytes(req);
  if (body.length === 0) return "Background";
  let options: unknown;
  try {
    options = JSON.parse(body.toString("utf8"));
  } catch {
    throw new ApiError(badRequest("the body of a DELETE must be a JSON DeleteOptions, or empty"));
  }
  const { propagationPolicy: policy = "Background", dryRun = [] } = (options ?? {}) as { propagationPolicy?: unknown; dryRun?: unknown };
  if (Array.isArray(dryRun) && dryRun.length > 0) throw dryRunRefused();
  if (policy !== "Background" && policy !== "Foreground" && policy !== "Orphan") {
    throw new ApiError(badRequest(`propagationPolicy must be Background, Foreground or Orphan, not ${JSON.stringify(policy)}`));
  }
  return policy;
}

/** `.../deployments/web/scale`: read, replace or patch the Scale of a Deployment or ReplicaSet. */
async function serveScale(state: SimState, req: IncomingMessage, res: ServerResponse, def: ResourceDef, path: ResourcePath, query: URLSearchParams, pretty: boolean): Promise<void> {
  const { namespace, name } = path;
  if (name === undefined || path.legacyWatch) throw new ApiError(pathNotFound());
  const object = state.store.get(def, metaNamespaceKey(namespace, name));
  if (!object) throw new ApiError(notFound(def.resource, name, def.group));
  switch (req.method) {
    case "GET":
      readRepresentation(req);
      return sendJson(res, 200, scaleOf(object), { pretty });
    case "PUT":
      writeOptions(query);
      requireContentType(req, ["application/json"]);
      return sendJson(res, 200, replaceScale(state.writes, def, object, await readJson(req)), { pretty });
    case "PATCH": {
      writeOptions(query);
      const type = requireContentType(req, Object.keys(PATCH_TYPES)) as keyof typeof PATCH_TYPES;
      return sendJson(res, 200, patchScale(state.writes, def, object, PATCH_TYPES[type], await readJson(req)), { pretty });
    }
    default:
      throw new ApiError(methodNotAllowed());
  }
}

/**
 * metrics-server's resources: get and list of what `metrics.ts` computes; a watch is the generic
 * API server's 405 for a resource without the verb (`handlers/get.go` `ListResource`).
 */
function serveMetrics(state: SimState, req: IncomingMessage, res: ServerResponse, resource: ApiResource, path: ResourcePath, verb: Verb, query: URLSearchParams, pretty: boolean): void {
  const { namespace, name } = path;
  if (path.subresource !== undefined || (namespace !== undefined && !resource.namespaced) || (resource.namespaced && namespace === undefined && name !== undefined)) throw new ApiError(pathNotFound());
  if (req.method !== "GET") throw new ApiError(methodNotAllowed());
  const qualified = `${resource.resource}.${resource.group}`;
  if (verb === "watch") throw new ApiError(failure(405, "MethodNotAllowed", `watch is not supported on resources of kind "${qualified}"`, { group: resource.group, kind: resource.resource }));
  readRepresentation(req);
  if (name === undefined) {
    const options = parseListOptions(query);
    if (!options.ok) throw new ApiError(options.status);
    return sendJson(res, 200, metricsList(resource, metricsItems(state.store, resource, namespace, query)), { pretty });
  }
  const item = metricsItems(state.store, resource, namespace, new URLSearchParams()).find((i) => i.metadata?.name === name);
  if (!item) throw new ApiError(notFound(resource.resource, name, resource.group));
  return sendJson(res, 200, metricsObject(resource, item), { pretty });
}

/** The media type of a request body, which must be one of `accepted` (else 415). */
function requireContentType(req: IncomingMessage, accepted: readonly string[]): string {
  const type = (req.headers["content-type"] ?? "application/json").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!accepted.includes(type)) throw new ApiError(unsupportedMediaType(accepted));
  return type;
}

/** What DELETE returns for kinds that do not return the object (registry `finalizeDelete`). */
function deletedStatus(def: ResourceDef, deleted: KubeObject) {
  const meta = deleted.metadata ?? {};
  const details = def.group ? { name: meta.name, group: def.group, kind: def.resource, uid: meta.uid } : { name: meta.name, kind: def.resource, uid: meta.uid };
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}

async function serveWatch(state: SimState, req: IncomingMessage, res: ServerResponse, def: ResourceDef, path: ResourcePath, query: URLSearchParams): Promise<void> {
  const representation = readRepresentation(req);
  if (path.legacyWatch && path.name !== undefined) {
    // `/watch/.../pods/x` is the deprecated spelling of `fieldSelector=metadata.name=x`.
    const fields = query.get("fieldSelector");
    query.set("fieldSelector", fields ? `${fields},metadata.name=${path.name}` : `metadata.name=${path.name}`);
  }
  const parsed = parseWatchOptions(query);
  if (!parsed.ok) throw new ApiError(parsed.status);
  const options = { ...parsed.value };
  if (!state.config.watchList && options.sendInitialEvents !== undefined) {
    throw new ApiError(invalidListOptions([{ field: "sendInitialEvents", type: "Forbidden", detail: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled" }]));
  }
  const filter = requestFilter(def, path.namespace, query);
  // 1.34 WatchList defaulting: a watch from "" or "0" becomes sendInitialEvents=true (apimachinery SetListOptionsDefaults).
  if (state.config.watchList && options.sendInitialEvents === undefined && options.resourceVersionMatch === undefined && options.resourceVersion.kind !== "exact") {
    options.sendInitialEvents = true;
    options.resourceVersionMatch = "NotOlderThan";
  }
  // Ahead of the store: the cacher waits for it (`waitUntilFreshAndBlock`), then answers 504
  // before the stream starts. A client holding a version from before an etcd restore relists on it.
  const rv = options.resourceVersion;
  if (rv.kind === "exact" && options.sendInitialEvents !== true && !(await state.store.waitFor(rv.rv, FRESHNESS_WAIT_MS))) {
    throw new ApiError(tooLargeResourceVersion(rv.rv, state.store.resourceVersion));
  }
  const timeoutMs = options.timeoutSeconds !== undefined ? options.timeoutSeconds * 1000 : (1800 + state.timeouts.next() * 1800) * 1000;
  const stream: WatchStream = new WatchStream(
    {
      id: state.watchers.nextId(),
      def,
      path: collectionPath({ group: def.group, version: def.version, resource: def.resource, namespace: path.namespace }),
      filter,
      rawResourceVersion: query.get("resourceVersion") ?? "",
      options,
      table: representation.kind === "table" ? { ...tableOptions(representation.version, query), contentType: representation.contentType } : undefined,
      timeoutMs,
      bookmarkIntervalMs: state.config.bookmarkIntervalMs,
    },
    state.store,
    state.cache,
    res,
    () => state.watchers.remove(stream),
  );
  state.watchers.add(stream);
  await stream.start();
}
