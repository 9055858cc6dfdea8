/**
 * @module
 * The relay's HTTP surface: the Kubernetes API's own paths. Every request is parsed and
 * validated here — path, verb, selectors, list and watch parameters — and answered with a
 * Kubernetes `Status` when it is wrong, before any hub is created or anything is sent
 * upstream (invariant 6). Valid requests go to the hub of their canonical watch key.
 */
import { Hono } from "hono";
import { ConfigError } from "../config.ts";
import type { Env } from "../env.ts";
import { DEFAULT_CLUSTER, describeKey, hubName } from "../k8s/key.ts";
import { parseApiPath } from "../k8s/path.ts";
import { internalError, methodNotAllowed, serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { hubRequest } from "../hub/request.ts";
import { upstreamFor } from "../upstream.ts";
import { discovery } from "./discovery.ts";
import { notFoundPath, resolveKey, resolveRequest } from "./resolve.ts";

type App = { Bindings: Env };

/** Relay-specific endpoints live under this prefix, outside the Kubernetes API's paths. */
const STATS_PREFIX = "/_relay/stats";

export function createApp(): Hono<App> {
  const app = new Hono<App>();

  app.onError((error) => {
    if (error instanceof ConfigError) return statusResponse(serviceUnavailable(`the relay is misconfigured: ${error.message}`));
    console.error(JSON.stringify({ msg: "unhandled error", error: String(error), stack: (error as Error).stack }));
    return statusResponse(internalError("the relay failed to handle the request"));
  });

  // What one key's hub is doing: `/_relay/stats/api/v1/pods?labelSelector=...`.
  app.get(`${STATS_PREFIX}/*`, async (c) => {
    const url = new URL(c.req.url);
    const path = parseApiPath(url.pathname.slice(STATS_PREFIX.length));
    if (path.kind !== "resource" || path.name !== undefined) return statusResponse(notFoundPath("stats are per collection: /_relay/stats/<collection path>"));
    if (!upstreamFor(c.env, path.cluster ?? DEFAULT_CLUSTER)) return statusResponse(notFoundPath(`cluster "${path.cluster}" is not configured`));
    const key = resolveKey(path, url.searchParams);
    if (!key.ok) return statusResponse(key.status);
    const stats = await c.env.WATCH_HUB.getByName(hubName(key.value)).stats();
    return c.json({ key: describeKey(key.value), ...(stats ?? { subscribers: 0, watching: false, upstream: "stopped" }) }, 200, { "cache-control": "no-store" });
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
    const request = resolveRequest(path, url.searchParams, c.req.raw);
    if (!request.ok) return statusResponse(request.status);
    return c.env.WATCH_HUB.getByName(hubName(request.value.key)).fetch(hubRequest(c.req.raw, request.value));
  });

  return app;
}
