/**
 * @module
 * The relay's HTTP surface: health (`/healthz`, `/readyz`), the operator's (`/metrics`,
 * `/_relay/hubs`), what a token may read (`/_relay/access`), the clusters' names (`/_relay/clusters`), a key's stats (`/_relay/stats/...`), the relay socket (`/_relay/socket`), and
 * the Kubernetes API's own paths. Every API request is parsed and validated here — path, verb, what the resource is (from discovery), selectors, list and watch
 * parameters, media type — and answered with a Kubernetes `Status` when it is wrong, before any
 * hub is created or anything is sent upstream (invariant 6). Valid requests go to the hub of
 * their canonical watch key; Tables are made from the hub's answer on the way out.
 */
import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ConfigError, logLevel, stripsManagedFields } from "../config.ts";
import { replicaHubs, type Env } from "../env.ts";
import { DEFAULT_CLUSTER, describeKey, hubName } from "../k8s/key.ts";
import { MUX_PATH } from "../k8s/mux.ts";
import { negotiate, notAcceptable, YAML } from "../k8s/negotiate.ts";
import { parseApiPath, type ResourcePath } from "../k8s/path.ts";
import { badRequest, internalError, methodNotAllowed, type Result, serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { tableOptions } from "../k8s/table.ts";
import { isWebSocketUpgrade } from "../k8s/websocket.ts";
import type { Access, Grant, Verb } from "../auth/access.ts";
import { isReplicaOf } from "../hub/replicas.ts";
import { hubRequests, type HubRequest } from "../hub/request.ts";
import { decodeContinue } from "../hub/snapshots.ts";
import { cacheOutcome, listCacheRequests } from "../lists/request.ts";
import { logger, setLogLevel } from "../log.ts";
import { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { access } from "./access.ts";
import { clusterNames } from "./clusters.ts";
import { Authenticator, type Identity } from "./auth.ts";
import { gate, type Gate, type GateCheck } from "./gate.ts";
import { health } from "./health.ts";
import { oversized } from "./limits.ts";
import { operator } from "./operator.ts";
import { openSocket } from "./socket.ts";
import { Placements } from "./placement.ts";
import { regionOf } from "./region.ts";
import { isLogPath, serveLog } from "./logs.ts";
import { configuredClusters, upstreamFor, type Upstream } from "../upstream.ts";
import { AS_WRITTEN } from "../forwarded.ts";
import { acceptsGzip } from "../k8s/accept-encoding.ts";
import { isMemberSet, membersOf, mergedCluster, MEMBERS_LEFT_OUT_HEADER, resolveMembers } from "../k8s/members.ts";
import { discovery } from "./discovery.ts";
import { decideMembers } from "./member-access.ts";
import { memberGet, mergedGetAnswer } from "./merged-get.ts";
import { mergedCachedList } from "./merged-list.ts";
import { DocumentCache, type DocumentFetch } from "./document-cache.ts";
import { openapi, parseOpenApiPath } from "./openapi.ts";
import { getObject, listOnce, listsOnce } from "./reads.ts";
import { resolveKey, resolveRequest } from "./resolve.ts";
import { notFoundPath, resolveResource, type ResourceInfo, type ResourceVerb } from "./resource-resolver.ts";
import { tableResponse } from "./table-response.ts";
import { yamlResponse, yamlStatus } from "./yaml-response.ts";

type App = { Bindings: Env };

/** Relay-specific endpoints live under this prefix, outside the Kubernetes API's paths. */
const STATS_PREFIX = "/_relay/stats";

/** Discovery changes when CRDs or aggregated APIs come and go: a minute late is fine, as kubectl's own cache is hours. */
const DISCOVERY_TTL_MS = 60_000;
/** How long a last good discovery answer stands in for an upstream that fails. */
const DISCOVERY_STALE_MS = 10 * 60_000;
/** A large cluster's discovery documents, in every representation, for a few clusters. */
const DISCOVERY_MAX_BYTES = 8 * 1024 * 1024;
/** OpenAPI: a large cluster's v2 document (several MB in protobuf) and the v3 documents kubectl asks for. */
const OPENAPI_MAX_BYTES = 24 * 1024 * 1024;

/**
 * workerd tells JavaScript only "internal error; reference = ..." when a connection fails below
 * HTTP (it logs the cause); the usual one for an https:// upstream is a certificate it does not trust.
 */
async function fetchUpstream(upstream: Upstream, path: string, headers: Record<string, string>): Promise<Response> {
  try {
    return await upstream.fetch(path, { headers });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (!message.startsWith("internal error; reference =")) throw e;
    throw new Error(
      `${message} (the runtime hides the cause, see its log; for an https:// upstream it is usually a certificate from a CA the runtime does not trust: ` +
        "NODE_EXTRA_CA_CERTS when run locally, a Workers VPC binding or a Cloudflare Tunnel when deployed)",
    );
  }
}

const documentFetch =
  (upstream: Upstream): DocumentFetch =>
  (path, accept) =>
    fetchUpstream(upstream, path, { accept });

/**
 * What a resource route's steps leave for the next, in the request's context: the path, then
 * the gate's upstream and identity, then what discovery says the path names.
 */
type Api = {
  Bindings: Env;
  Variables: { path: ResourcePath; upstream: Upstream; identity: Identity; memberIdentities: Gate["members"]; resource: ResourceInfo };
};

export function createApp(): Hono<App> {
  const app = new Hono<App>();
  // One per isolate (the app is built once per isolate): every request it serves shares the answers.
  const discoveryCache = new DocumentCache({ what: "discovery", ttlMs: DISCOVERY_TTL_MS, staleMs: DISCOVERY_STALE_MS, maxBytes: DISCOVERY_MAX_BYTES, now: () => Date.now() });
  const openapiCache = new DocumentCache({ what: "OpenAPI", ttlMs: DISCOVERY_TTL_MS, staleMs: DISCOVERY_STALE_MS, maxBytes: OPENAPI_MAX_BYTES, now: () => Date.now() });
  const metrics = new WorkerMetrics();
  const placements = new Placements();
  const auth = new Authenticator(logger({ component: "auth" }), (reason) => metrics.refused(reason));
  const log = logger({ component: "relay" });
  const gated: GateCheck = (env, request, cluster) => gate(env, request, cluster, auth, (reason) => metrics.refused(reason));

  // The steps of a resource route, each a middleware that answers a Status or sets what it learnt.
  /** The gate, for the path's cluster: `upstream`, `identity`. */
  const admitted = createMiddleware<Api>(async (c, next) => {
    const named = c.var.path.cluster ?? DEFAULT_CLUSTER;
    // A merged key passes the gate as a member (discovery is that cluster's), then names its members (`members.ts`).
    const passed = await gated(c.env, c.req.raw, named);
    if (!passed.ok) return statusResponse(passed.status);
    if (isMemberSet(named)) {
      const members = resolveMembers(named, configuredClusters(c.env));
      if (!members.ok) return statusResponse(members.status);
      c.set("path", { ...c.var.path, cluster: mergedCluster(members.value) });
    }
    c.set("upstream", passed.value.upstream);
    c.set("identity", passed.value.identity);
    c.set("memberIdentities", passed.value.members);
    await next();
  });
  /** What discovery says the path names: `resource` (404 for what the cluster does not serve). */
  const resolved = createMiddleware<Api>(async (c, next) => {
    // A merged key's resource is what the first of its members that answers discovery says it is.
    const members = membersOf(c.var.path.cluster ?? DEFAULT_CLUSTER)?.map((member) => upstreamFor(c.env, member)!) ?? [c.var.upstream];
    let resource = await resolveResource(discoveryCache, members[0]!.cluster, documentFetch(members[0]!), c.var.path);
    for (const upstream of members.slice(1)) {
      if (resource.ok || resource.status.code !== 503) break;
      resource = await resolveResource(discoveryCache, upstream.cluster, documentFetch(upstream), c.var.path);
    }
    if (!resource.ok) return statusResponse(resource.status);
    c.set("resource", resource.value);
    await next();
  });
  /** A request that negotiates YAML gets its errors in YAML too, as the API server writes a Status in the representation asked for. */
  const yamlErrors = createMiddleware<Api>(async (c, next) => {
    await next();
    if (c.res.status >= 400 && !isWebSocketUpgrade(c.req.raw) && negotiate(c.req.header("accept"), RESOURCE_TYPES)?.kind === "yaml") c.res = await yamlStatus(c.res);
  });
  /** Whether the caller may have `access`: the refusal, or `undefined`. */
  const refusal = (c: Context<Api>, access: Access) => auth.authorize(c.var.identity, access, c.var.upstream, c.env);

  app.onError((error) => {
    if (error instanceof ConfigError) return statusResponse(serviceUnavailable(`the relay is misconfigured: ${error.message}`));
    log("unhandled error", { error: String(error), stack: (error as Error).stack }, "error");
    return statusResponse(internalError("the relay failed to handle the request"));
  });

  // Before anything else: an oversized request costs nothing.
  app.use("*", async (c, next) => {
    const tooBig = oversized(c.req.raw, new URL(c.req.url));
    if (tooBig) return statusResponse(tooBig);
    await next();
    metrics.flushSoon(c.env, waitUntilOf(c));
  });

  // Before any route's auth gate: they answer without a token in every AUTH_MODE.
  app.route(
    "/",
    health((upstream) => auth.kubeUpstreamProblem(upstream)),
  );
  // Every route past the health endpoints logs at LOG_LEVEL (a malformed one is a configuration
  // error, which they answer without).
  app.use("*", async (c, next) => {
    setLogLevel(logLevel(c.env));
    await next();
  });
  // `/metrics` and `/_relay/hubs`: the relay's own rights, checked in the same gate.
  app.route("/", operator({ gate: gated, auth, metrics }));
  // What the token may read, for clients that open where it may look.
  app.route("/", access({ gate: gated, auth }));
  // Which clusters there are, by name, for clients that offer each.
  app.route("/", clusterNames({ gate: gated }));

  // What one key's hub is doing: `/_relay/stats/api/v1/pods?labelSelector=...` (for whoever may list it).
  const statsPath = createMiddleware<Api>(async (c, next) => {
    const path = parseApiPath(new URL(c.req.url).pathname.slice(STATS_PREFIX.length));
    if (path.kind !== "resource" || path.name !== undefined) return statusResponse(notFoundPath("stats are per collection: /_relay/stats/<collection path>"));
    c.set("path", path);
    await next();
  });
  app.get(`${STATS_PREFIX}/*`, statsPath, admitted, resolved, async (c) => {
    const { path, upstream, resource } = c.var;
    const key = resolveKey(path, resource, new URL(c.req.url).searchParams);
    if (!key.ok) return statusResponse(key.status);
    const denied = await refusal(c, accessOf(upstream.cluster, path, "list"));
    if (denied) return statusResponse(denied);
    // `replica`: one of a hot key's replica hubs, by the name its root's stats give it (a hub of this key's tree only).
    const root = hubName(key.value);
    const replica = new URL(c.req.url).searchParams.get("replica");
    if (replica !== null && !isReplicaOf(replica, root))
      return statusResponse(badRequest(`replica ${JSON.stringify(replica)} is not one of this key's replica hubs: give a name from its root's stats ("replicas")`));
    const stats = await (replica === null ? c.env.WATCH_HUB.getByName(root) : replicaHubs(c.env).getByName(replica)).stats();
    // A key without a hub (none yet, or its storage reclaimed) holds nothing: the same fields, at zero.
    const none = {
      subscribers: 0,
      views: 0,
      upstream: "stopped",
      watching: false,
      resourceVersion: 0,
      windowStart: 0,
      windowEvents: 0,
      objects: 0,
      storageBytes: 0,
      memoryBytes: 0,
      rowsWritten: 0,
      eventsCommitted: 0,
      sent: { websocket: { events: 0, messages: 0 }, http: { events: 0, messages: 0 } },
      listsGzip: { compressed: 0, shared: 0 },
      replicas: [],
    };
    return c.json({ key: describeKey(key.value), ...(stats ?? none) }, 200, { "cache-control": "no-store" });
  });

  // Many watches on one WebSocket, each opened through the route below.
  app.get(MUX_PATH, (c) => openSocket(c.env, c.req.raw, auth, (reason) => metrics.refused(reason)));

  // Every other path, parsed and held to read-only: the cluster's OpenAPI and discovery
  // documents are passed through after the gate; a resource path goes on to the route below.
  app.all(
    "*",
    createMiddleware<Api>(async (c, next) => {
      const url = new URL(c.req.url);
      const openapiPath = parseOpenApiPath(url.pathname);
      const path = openapiPath ? { kind: "openapi" as const, ...openapiPath } : parseApiPath(url.pathname);
      if (path.kind === "invalid") return statusResponse(notFoundPath(path.reason));
      // Read-only: get, list and watch are GETs; everything else is refused, clearly.
      if (c.req.method !== "GET" && c.req.method !== "HEAD") {
        return statusResponse(methodNotAllowed(`the relay is read-only: ${c.req.method} is not allowed (only get, list and watch)`), { allow: "GET, HEAD" });
      }
      if (path.kind === "resource") {
        c.set("path", path);
        return next();
      }
      const named = path.cluster ?? DEFAULT_CLUSTER;
      // A merged key's discovery is the member's it passes the gate as.
      const passed = await gated(c.env, c.req.raw, named);
      if (!passed.ok) return statusResponse(passed.status);
      const upstream = passed.value.upstream;
      if (path.kind === "openapi") return openapi(openapiCache, upstream.cluster, documentFetch(upstream), { cluster: path.cluster, path: path.path, query: url.searchParams, request: c.req.raw });
      return discovery(discoveryCache, upstream.cluster, documentFetch(upstream), path.path, c.req.header("accept"));
    }),
  );

  // Get, list and watch: to the hub of the request's canonical key; a resource without watch to its key's list cache.
  app.all("*", yamlErrors, admitted, resolved, async (c) => {
    const { path, upstream, identity, resource } = c.var;
    const raw = c.req.raw;
    // A pod's log: passed through once, or followed through its log hub (src/http/logs.ts).
    if (isLogPath(path)) return serveLog({ env: c.env, request: raw, path, upstream, identity, refusal: (access) => refusal(c, access), grant: (access) => grantOf(identity, access), metrics });
    const url = new URL(c.req.url);
    const request = resolveRequest(path, resource, url.searchParams, raw);
    if (!request.ok) return statusResponse(request.status);
    const members = membersOf(request.value.key.cluster);
    if (members) return mergedAnswer(c, request.value, resource, members);
    const access = accessOf(upstream.cluster, path, accessVerb(request.value));
    const denied = await refusal(c, access);
    if (denied) return statusResponse(denied);
    // A view is the relay's own JSON, whatever the client accepts.
    if (request.value.verb === "view") return hubAnswer(c.env, raw, request.value, identity, access, placements);
    const verb = request.value.verb;
    const representation = negotiated(raw, verb);
    if (!representation.ok) return statusResponse(representation.status);
    // JSON as the hub writes it goes gzip-coded to a client that takes it, each page compressed once for all who ask.
    const asked = verb === "list" && representation.value.kind === "json" && acceptsGzip(raw.headers.get("accept-encoding")) ? { ...request.value, gzip: true } : request.value;
    return represented(await served(c.env, raw, asked, identity, access, upstream, resource), verb, path, representation.value, url);
  });

  /** A get, list or watch of one cluster's key: a watchable resource's from its hubs, one without watch's from its list cache. */
  function served(env: Env, raw: Request, request: HubRequest, identity: Identity, access: Access, upstream: Upstream, resource: ResourceInfo): Promise<Response> {
    return resource.verbs.includes("watch") ? watchable(env, raw, request, identity, access, upstream) : cachedList(env, raw, request, resource);
  }

  /** A response as the client negotiated it: JSON as the hub wrote it, YAML, or a Table. */
  function represented(response: Response, verb: ResourceVerb, path: ResourcePath, representation: Representation, url: URL): Response | Promise<Response> {
    if (representation.kind === "yaml" && verb !== "watch") return yamlResponse(response, verb as "get" | "list");
    if (representation.kind !== "table") return response;
    return tableResponse(response, verb, path, { ...tableOptions(representation.version, url.searchParams), contentType: representation.contentType });
  }

  /**
   * A get, list, watch or view of a merged key (DESIGN.md, "One watch across clusters"): a get
   * its member's (`mergedGet`); the rest over the members the subject may read, each asked as its
   * own cluster's request would be (`member-access.ts`), from its merge hub, or for a resource
   * without watch each member's list from its list cache (`merged-list.ts`); the members it may
   * not read are left out and named in a header, not a 403 of the whole.
   */
  async function mergedAnswer(c: Context<Api>, request: HubRequest, resource: ResourceInfo, members: string[]): Promise<Response> {
    const { path, identity } = c.var;
    const raw = c.req.raw;
    const verb = request.verb;
    if (verb === "get") return mergedGet(c, request, resource, members);
    const decided = await decideMembers(auth, c.env, { identity, members: c.var.memberIdentities }, members, (member) => accessOf(member, path, accessVerb(request)));
    if (!decided.ok) return statusResponse(decided.status);
    const { readable, leftOut, refusal } = decided.value;
    if (readable.length === 0) return statusResponse(refusal!);
    const asked = { ...request, key: { ...request.key, cluster: mergedCluster(readable) } };
    const access = accessOf(asked.key.cluster, path, accessVerb(request));
    const representation = negotiated(raw, verb);
    if (!representation.ok) return statusResponse(representation.status);
    // Without watch, only a list comes here (`resolveRequest` refuses a watch or a view of it).
    const answered = resource.verbs.includes("watch")
      ? await hubAnswer(c.env, raw, asked, identity, access, placements)
      : await mergedCachedList(readable, resource, (member) => cachedList(c.env, raw, { ...request, key: { ...request.key, cluster: member } }, resource));
    const response = verb === "view" ? answered : await represented(answered, verb, path, representation.value, new URL(c.req.url));
    if (leftOut.length === 0 || response.webSocket) return response;
    const headers = new Headers(response.headers);
    headers.set(MEMBERS_LEFT_OUT_HEADER, leftOut.join(","));
    return new Response(response.body, { status: response.status, headers });
  }

  /** A get on a merged key (`merged-get.ts`): its member's object, authorized and got as that cluster's own get is. */
  async function mergedGet(c: Context<Api>, request: Extract<HubRequest, { verb: "get" }>, resource: ResourceInfo, members: string[]): Promise<Response> {
    const { path, identity } = c.var;
    const get = memberGet(c.req.raw, request, members, path);
    if (!get.ok) return statusResponse(get.status);
    const { member } = get.value;
    const who = c.var.memberIdentities?.get(member) ?? { ok: true as const, value: identity };
    if (!who.ok) return statusResponse(who.status);
    const upstream = upstreamFor(c.env, member)!;
    const access = accessOf(member, { ...path, name: get.value.request.name }, "get");
    const denied = await auth.authorize(who.value, access, upstream, c.env);
    if (denied) return statusResponse(denied);
    const representation = negotiated(c.req.raw, "get");
    if (!representation.ok) return statusResponse(representation.status);
    const answer = await served(c.env, get.value.raw, get.value.request, who.value, access, upstream, resource);
    return represented(await mergedGetAnswer(answer, member, request.name, path), "get", path, representation.value, new URL(c.req.url));
  }

  /**
   * Get, list or watch of a watchable resource: from the hub of its key; a get, and a list of a
   * field-selected key, from a live hub that holds them, or else one upstream request (`reads.ts`).
   */
  function watchable(env: Env, raw: Request, request: HubRequest, identity: Identity, access: Access, upstream: Upstream): Promise<Response> {
    if (request.verb !== "get" && (request.verb !== "list" || !listsOnce(request))) return hubAnswer(env, raw, request, identity, access, placements);
    const route = { env, raw, upstream, strip: stripsManagedFields(env), passedThrough: (verb: "get" | "list") => metrics.readPassedThrough(upstream.cluster, verb) };
    const asked = { ...request, subject: identity.subject };
    if (asked.verb === "get") return getObject(route, asked);
    return listOnce(route, asked, () => placed(env, raw, { ...asked, held: true }, placements));
  }

  /** A resource without watch: its list (or an object of it) from the key's list cache, counted by where it came from. */
  async function cachedList(env: Env, raw: Request, request: HubRequest, resource: ResourceInfo): Promise<Response> {
    if (!resource.verbs.includes("list"))
      return statusResponse(methodNotAllowed(`the relay serves a resource without watch from its list, and discovery lists no "list" verb for ${resource.resource}`));
    const asked =
      request.verb === "get"
        ? { key: request.key, name: request.name }
        : request.verb === "list"
          ? { key: request.key, shardSelector: request.options.shardSelector, gzip: request.gzip }
          : { key: request.key };
    const response = await env.LIST_CACHE.getByName(hubName(request.key)).fetch(listCacheRequests.attach(raw, asked), AS_WRITTEN);
    const outcome = cacheOutcome(response.headers.get("cache-status"));
    if (outcome) metrics.cacheAnswered(request.key.cluster, outcome);
    return response;
  }

  return app;
}

/** A list, watch or view of a watchable resource: from the hub of its key. */
function hubAnswer(env: Env, raw: Request, request: HubRequest, identity: Identity, access: Access, placements: Placements): Promise<Response> {
  const live = request.verb === "watch" || (request.verb === "view" && request.watch);
  return placed(env, raw, live ? { ...request, subject: identity.subject, grant: grantOf(identity, access) } : { ...request, subject: identity.subject }, placements);
}

/** A request for a key's hub: its root's, or a hot key's replica's (DESIGN.md, "Hot keys"); a list's next page the hub's that holds its snapshot. */
function placed(env: Env, raw: Request, forwarded: HubRequest, placements: Placements): Promise<Response> {
  const holder = forwarded.verb === "list" && forwarded.options.continue ? decodeContinue(forwarded.options.continue)?.hub : undefined;
  return placements.send(
    { roots: env.WATCH_HUB, replicas: replicaHubs(env) },
    forwarded.key,
    regionOf(raw.cf),
    (replicaOf, region, here) => hubRequests.attach(raw, { ...forwarded, replicaOf, region, here }),
    { holder },
  );
}

/** What a resource path is served as: JSON, a Table, or YAML. */
const RESOURCE_TYPES = { table: true, aggregated: false, yaml: true };

/** The request's `waitUntil`, where there is one (an app called without an execution context has none). */
function waitUntilOf(c: { executionCtx: { waitUntil(promise: Promise<unknown>): void } }): ((promise: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (promise) => ctx.waitUntil(promise);
  } catch {
    return undefined;
  }
}

/** The verb a request is authorized as: a view as a watch of its collection, or (its window once) a list. */
function accessVerb(request: HubRequest): Verb {
  if (request.verb !== "view") return request.verb;
  return request.watch ? "watch" : "list";
}

/** What a resource's answer is written as: JSON, YAML or a Table, as the client's Accept asks. */
type Representation = NonNullable<ReturnType<typeof negotiate>>;

/**
 * What the answer to `verb` is written as, or the 406 naming what the relay can write. WebSocket
 * frames go from the hub straight to the client, and a view is the relay's own JSON, so those are
 * JSON whatever the client accepts; the API server has no YAML stream serializer, so a watch
 * negotiates among its stream types.
 */
function negotiated(raw: Request, verb: HubRequest["verb"]): Result<Representation> {
  const representation = isWebSocketUpgrade(raw) || verb === "view" ? { kind: "json" as const } : negotiate(raw.headers.get("accept") ?? undefined, RESOURCE_TYPES);
  if (representation && !(representation.kind === "yaml" && verb === "watch")) return { ok: true, value: representation };
  return { ok: false, status: notAcceptable(verb === "watch" ? ["application/json;stream=watch"] : ["application/json", YAML]) };
}

/** The access a request asks for: what authorization is decided on. */
function accessOf(cluster: string, path: ResourcePath, verb: Verb): Access {
  return { cluster, verb, group: path.group, resource: path.resource, namespace: path.namespace, name: path.name };
}

/** What a watch's hub needs to keep checking the subscriber's rights. */
function grantOf(identity: Identity, access: Access): Grant | undefined {
  if (identity.subject === undefined) return undefined;
  return {
    subject: identity.subject,
    expiresAt: identity.expiresAt,
    recheck: identity.mode === "kube" && identity.token ? { token: identity.token, access } : undefined,
  };
}
