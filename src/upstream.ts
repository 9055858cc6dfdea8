/**
 * @module
 * How the relay reaches a cluster's API server: one small fetch interface, so plain `fetch`
 * to a URL (`kubectl proxy`, a public endpoint), a Workers VPC service binding or a Tunnel
 * hostname all plug in the same way. Workers cannot trust a private CA, so a private API
 * server is reached through a binding rather than by URL.
 */
import type { Vars } from "./vars.ts";
import { clusters, ConfigError } from "./config.ts";
import { DEFAULT_CLUSTER } from "./k8s/key.ts";

export interface Upstream {
  readonly cluster: string;
  /** Fetch a path (with query) on the cluster's API server, with the relay's credentials. */
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
}

function make(cluster: string, base: string, fetcher: Fetcher | undefined, token: string | undefined): Upstream {
  const root = base.replace(/\/+$/, "");
  return {
    cluster,
    fetch(pathAndQuery, init) {
      const headers = new Headers(init?.headers);
      // A review made with a subscriber's own token must go out with that token, not the relay's.
      if (token && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      if (!headers.has("accept")) headers.set("accept", "application/json");
      const request = new Request(root + pathAndQuery, { ...init, headers });
      return fetcher ? fetcher.fetch(request) : fetch(request);
    },
  };
}

/** The upstream of a cluster, or `undefined` when no such cluster is configured. */
export function upstreamFor(env: Vars, cluster: string): Upstream | undefined {
  if (cluster === DEFAULT_CLUSTER) {
    if (env.UPSTREAM) return make(cluster, env.UPSTREAM_URL ?? "http://upstream", env.UPSTREAM, env.UPSTREAM_TOKEN);
    if (env.UPSTREAM_URL) return make(cluster, env.UPSTREAM_URL, undefined, env.UPSTREAM_TOKEN);
  }
  const entry = clusters(env).get(cluster);
  if (!entry) return undefined;
  const token = entry.tokenSecret ? (env[entry.tokenSecret] as string | undefined) : undefined;
  if (entry.binding) {
    const binding = env[entry.binding] as Fetcher | undefined;
    if (!binding) throw new ConfigError(`cluster "${cluster}" names binding ${entry.binding}, which is not bound`);
    return make(cluster, entry.url ?? "http://upstream", binding, token);
  }
  if (!entry.url) throw new ConfigError(`cluster "${cluster}" needs a url or a binding in CLUSTERS`);
  return make(cluster, entry.url, undefined, token);
}
