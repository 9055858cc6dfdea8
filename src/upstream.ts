/**
 * @module
 * How the relay reaches a cluster's API server: one small fetch interface, so plain `fetch`
 * to a URL (`kubectl proxy`, a public endpoint), a Workers VPC service binding or a Tunnel
 * hostname all plug in the same way. Workers cannot trust a private CA, so a private API
 * server is reached through a binding rather than by URL. And what the upstream's refusals of
 * the relay's own requests mean to the client the relay asked for.
 */
import type { Vars } from "./vars.ts";
import { readAtMost } from "./bounded-read.ts";
import { clusters, ConfigError } from "./config.ts";
import { DEFAULT_CLUSTER } from "./k8s/key.ts";
import { failure, serviceUnavailable } from "./k8s/status.ts";
import type { Status } from "./k8s/types.ts";

export interface Upstream {
  readonly cluster: string;
  /** Fetch a path (with query) on the cluster's API server, with the relay's credentials. */
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** The relay's own list+watch (a merged key's members), not an API server: its lines are `eventLine`'s, and it has no watch-lists to probe with. */
  readonly followsHub?: boolean;
  /** Its current resourceVersion, where it knows it without a request (a merged key's sequence). */
  head?(): number;
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

/** Every configured cluster's name: `default` where `UPSTREAM_URL` or `UPSTREAM` is set, and those of `CLUSTERS`. */
export function configuredClusters(env: Vars): string[] {
  const names = [...clusters(env).keys()];
  return env.UPSTREAM || env.UPSTREAM_URL ? [DEFAULT_CLUSTER, ...names] : names;
}

/** What the relay asked the upstream for (`this pod's log`), and what its identity needs granted for it (`get on pods/log`). */
export interface Asked {
  what: string;
  needs: string;
}

/** The most of a refusal's body read: a Status is a few hundred bytes. */
const STATUS_BYTES = 64 * 1024;

const REASONS: Record<number, string> = { 400: "BadRequest", 404: "NotFound", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout" };

/**
 * The Status a client gets for the upstream's refusal of what the relay asked for it: the API
 * server's own (`pods "x" not found`), passed on as it is, except where it is about the relay's
 * own credentials or rights, which the client cannot fix: then what to fix. Read from at most
 * 64 KiB of its body, until `signal` aborts: a refusal is not trusted to end either.
 */
export async function upstreamRefusal(response: Response, asked: Asked, signal?: AbortSignal): Promise<Status> {
  const text = new TextDecoder().decode((await readAtMost(response.body, STATUS_BYTES, signal)).bytes);
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(text) as Status;
    if (parsed?.kind === "Status") status = parsed;
  } catch {
    // not JSON: a proxy's answer
  }
  const message = status?.message ?? text.trim().slice(0, 500);
  if (response.status === 401) return serviceUnavailable(`the upstream API server does not accept the relay's own credentials (UPSTREAM_TOKEN, or the cluster's tokenSecret): ${message}`, 30);
  if (response.status === 403) {
    return failure(403, "Forbidden", `the upstream API server refuses the relay's own identity for ${asked.what} (give it ${asked.needs}; deploy/rbac.yaml has it): ${message}`);
  }
  if (status) return { ...status, code: response.status };
  return failure(response.status, REASONS[response.status] ?? "InternalError", message || `the upstream API server answered ${response.status}`);
}

/** The Status for an upstream that could not be reached. */
export function unreachable(error: unknown): Status {
  return serviceUnavailable(`the relay cannot reach the upstream API server: ${error instanceof Error ? error.message : String(error)}`, 5);
}
