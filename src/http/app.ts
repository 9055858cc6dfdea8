/**
 * @module
 * The relay's HTTP surface: the Kubernetes API's own paths. Every request is parsed and
 * validated here — path, verb, selectors, list and watch parameters — and answered with a
 * Kubernetes `Status` when it is wrong, before any hub is created or anything is sent
 * upstream (invariant 6). Valid requests go to the hub of their canonical watch key.
 */
import { Hono, type Context } from "hono";
import { ConfigError } from "../config.ts";
import type { Env } from "../env.ts";
import { SelectorError } from "../k8s/labels.ts";
import { DEFAULT_CLUSTER, hubName, watchKey, type WatchKey } from "../k8s/key.ts";
import { isWatch, parseListOptions, parseWatchOptions } from "../k8s/options.ts";
import { parseApiPath, type ResourcePath } from "../k8s/path.ts";
import { badRequest, failure, internalError, methodNotAllowed, serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { hubRequest, type HubRequest } from "../hub/request.ts";
import { upstreamFor } from "../upstream.ts";
import { discovery } from "./discovery.ts";
import { isNamespaced } from "./scope.ts";
import { websocketProtocol } from "./websocket.ts";

type App = { Bindings: Env };

const notFoundPath = (detail: string) => failure(404, "NotFound", `the server could not find the requested resource (${detail})`, {});

export function createApp(): Hono<App> {
  const app = new Hono<App>();

  app.onError((error) => {
    if (error instanceof ConfigError) return statusResponse(serviceUnavailable(`the relay is misconfigured: ${error.message}`));
    console.error(JSON.stringify({ msg: "unhandled error", error: String(error), stack: (error as Error).stack }));
    return statusResponse(internalError("the relay failed to handle the request"));
  });

  app.all("*", async (c) => {
    const url = new URL(c.req.url);
    const path = parseApiPath(url.pathname);
    if (path.kind === "invalid") return statusResponse(notFoundPath(path.reason));
    // Read-only: get, list and watch are GETs; everything else is refused, clearly.
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      return statusResponse(methodNotAllowed(`the relay is read-only: ${c.req.method} is not allowed (only get, list and watch)`), { allow: "GET, HEAD" });
    }
    const cluster = path.cluster ?? DEFAULT_CLUSTER;
    const upstream = upstreamFor(c.env, cluster);
    if (!upstream) return statusResponse(notFoundPath(`cluster "${cluster}" is not configured`));
    if (path.kind === "discovery") return discovery(upstream, path.path, url.search, c.req.header("accept") ?? null);
    return resource(c, path, url.searchParams);
  });

  return app;
}

async function resource(c: Context<App>, path: ResourcePath, query: URLSearchParams): Promise<Response> {
  if (path.subresource !== undefined) return statusResponse(notFoundPath(`subresource "${path.subresource}" is not relayed`));
  const namespaced = isNamespaced(path.group, path.resource);
  if (!namespaced && path.namespace !== undefined) return statusResponse(notFoundPath(`${path.resource} is not namespaced`));

  // A watch of one object (legacy `/watch/.../{name}`) is a watch of its collection by name.
  const watch = isWatch(query) || path.legacyWatch;
  let fieldSelector = query.get("fieldSelector");
  if (watch && path.name !== undefined) fieldSelector = [fieldSelector, `metadata.name=${path.name}`].filter(Boolean).join(",");

  let key: WatchKey;
  try {
    key = watchKey({
      cluster: path.cluster,
      group: path.group,
      version: path.version,
      resource: path.resource,
      namespace: path.namespace,
      namespaced,
      // A single-object GET is served from its collection's hub, whatever selectors it carries.
      labelSelector: path.name !== undefined && !watch ? null : query.get("labelSelector"),
      fieldSelector: path.name !== undefined && !watch ? null : fieldSelector,
    });
  } catch (e) {
    if (e instanceof SelectorError) return statusResponse(badRequest(e.message));
    throw e;
  }

  let request: HubRequest;
  if (watch) {
    const options = parseWatchOptions(query);
    if (!options.ok) return statusResponse(options.status);
    const protocol = websocketProtocol(c.req.raw);
    if (!protocol.ok) return statusResponse(protocol.status);
    request = { verb: "watch", key, options: options.value, ...(protocol.value ? { protocol: protocol.value } : {}) };
  } else if (path.name !== undefined) {
    request = { verb: "get", key, name: path.name };
  } else {
    const options = parseListOptions(query);
    if (!options.ok) return statusResponse(options.status);
    request = { verb: "list", key, options: options.value };
  }
  return c.env.WATCH_HUB.getByName(hubName(key)).fetch(hubRequest(c.req.raw, request));
}
