/**
 * @module
 * What the Worker asks a log hub, already parsed, validated and authorised: whose log (the key
 * of the hub, and of its one upstream stream), the follower's own options, and its rights. It
 * travels in one header of the follower's own request (a WebSocket upgrade reaches a Durable
 * Object only as a `fetch`), as the watch hubs' requests do.
 */
import type { Grant } from "../auth/access.ts";
import { carrier } from "../forwarded.ts";
import type { LogOptions } from "../k8s/log-options.ts";

/**
 * One upstream stream: a container's log (its current run, or with `previous` the one before),
 * read with timestamps, which the hub takes off for a follower that did not ask for them, so
 * followers with and without `timestamps` share it.
 */
export interface LogKey {
  cluster: string;
  namespace: string;
  pod: string;
  /** `undefined`: the one the API server picks (the pod's only container); kubectl always names it. */
  container: string | undefined;
  previous: boolean;
}

export const logKey = (cluster: string, namespace: string, pod: string, options: Pick<LogOptions, "container" | "previous">): LogKey => ({
  cluster,
  namespace,
  pod,
  container: options.container,
  previous: options.previous,
});

/** The log hub's name: one key, one Durable Object. */
export const logHubName = (key: LogKey): string => JSON.stringify(["log", key.cluster, key.namespace, key.pod, key.container ?? "", key.previous]);

/** The pod's log path upstream. */
export const logPath = (key: Pick<LogKey, "namespace" | "pod">): string => `/api/v1/namespaces/${encodeURIComponent(key.namespace)}/pods/${encodeURIComponent(key.pod)}/log`;

/** A readable form for logs and the metrics' hub names: `default:/api/v1/namespaces/x/pods/p/log?container=c`. */
export function describeLogKey(key: LogKey): string {
  const query = new URLSearchParams();
  if (key.container !== undefined) query.set("container", key.container);
  if (key.previous) query.set("previous", "true");
  const qs = query.toString();
  return `${key.cluster}:${logPath(key)}${qs ? `?${qs}` : ""}`;
}

export interface LogRequest {
  key: LogKey;
  /** The follower's options, as the query they were parsed from (`logQuery`): read again by the hub. */
  query: string;
  /** Who follows (absent without auth). */
  subject?: string | undefined;
  /** Absent without auth. */
  grant?: Grant | undefined;
  /** The WebSocket subprotocol to echo (`binary.k8s.io`, `base64.binary.k8s.io`), if any. */
  protocol?: string | undefined;
}

/** The request forwarded to the log hub: the client's own, with what the Worker decided. */
export const logRequests = carrier<LogRequest>("x-relay-log");
