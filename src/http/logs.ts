/**
 * @module
 * `GET …/pods/{name}/log` (and under `/clusters/{cluster}/`): a pod's log. As the API server
 * does, it is authorised first — `get` on `pods/log`, RBAC's name for it (a JWT rule names
 * `pods/log`; in `kube` mode the cluster reviews exactly that) — then its options are converted
 * and validated (`400`, `422`), all before anything is sent upstream. A log not followed is the
 * upstream's answer passed through as it streams (bounded as the API server bounds it, by its
 * own `tailLines` and `limitBytes`). A followed log goes to its log hub (`src/logs`), where every
 * follower of the same container shares one upstream stream. Over a WebSocket, both are sent as
 * the API server sends a log (`binary.k8s.io` or `base64.binary.k8s.io`, see `k8s/log-socket.ts`).
 */
import type { Access, Grant } from "../auth/access.ts";
import type { Env } from "../env.ts";
import { answerClose, upgradeResponse } from "../handshake.ts";
import { logQuery, parseLogOptions, type LogOptions } from "../k8s/log-options.ts";
import { isLogProtocol, LOG_BASE64_PROTOCOL, LOG_BINARY_PROTOCOL, logMessage } from "../k8s/log-socket.ts";
import type { ResourcePath } from "../k8s/path.ts";
import { badRequest, statusResponse } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { CLOSE, isWebSocketUpgrade } from "../k8s/websocket.ts";
import { logHubName, logKey, logRequests, type LogKey } from "../logs/request.ts";
import { fetchLog, logRefusal } from "../logs/upstream.ts";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { unreachable, type Upstream } from "../upstream.ts";
import type { Identity } from "./auth.ts";
import { notFoundPath } from "./resource-resolver.ts";
import { websocketProtocol } from "./websocket.ts";

/** `/api/v1/namespaces/{namespace}/pods/{name}/log`, of any cluster. */
export const isLogPath = (path: ResourcePath): boolean =>
  path.group === "" && path.version === "v1" && path.resource === "pods" && path.subresource === "log" && path.name !== undefined && !path.legacyWatch;

export interface LogRoute {
  env: Env;
  request: Request;
  path: ResourcePath;
  upstream: Upstream;
  identity: Identity;
  /** The refusal of `access`, or `undefined` when allowed. */
  refusal(access: Access): Promise<Status | undefined>;
  /** What a follower's log hub needs to keep checking its rights. */
  grant(access: Access): Grant | undefined;
  metrics: WorkerMetrics;
}

export async function serveLog(route: LogRoute): Promise<Response> {
  const { path, upstream, request } = route;
  const name = path.name as string;
  if (path.namespace === undefined) return statusResponse(notFoundPath(`pods are namespaced: use /api/v1/namespaces/{namespace}/pods/${name}/log`));
  const access: Access = { cluster: upstream.cluster, verb: "get", group: "", resource: "pods", subresource: "log", namespace: path.namespace, name };
  const denied = await route.refusal(access);
  if (denied) return statusResponse(denied);
  const parsed = parseLogOptions(new URL(request.url).searchParams, name);
  if (!parsed.ok) return statusResponse(parsed.status);
  const options = parsed.value;
  let protocol: string | undefined;
  const websocket = isWebSocketUpgrade(request);
  if (websocket) {
    const offered = websocketProtocol(request);
    if (!offered.ok) return statusResponse(offered.status);
    if (!isLogProtocol(offered.value)) {
      return statusResponse(
        badRequest(`a pod's log WebSocket speaks ${LOG_BINARY_PROTOCOL} (binary messages) or ${LOG_BASE64_PROTOCOL} (base64 text messages), as the API server's, not ${offered.value}`),
      );
    }
    protocol = offered.value;
  }
  const key = logKey(upstream.cluster, path.namespace, name, options);
  if (!options.follow) return once(route, key, options, websocket, protocol);
  const hub = route.env.LOG_HUB.getByName(logHubName(key));
  return hub.fetch(logRequests.attach(request, { key, query: logQuery(options).toString(), subject: route.identity.subject, grant: route.grant(access), protocol }));
}

/** A log not followed: the upstream's answer, passed through as it streams. */
async function once(route: LogRoute, key: LogKey, options: LogOptions, websocket: boolean, protocol: string | undefined): Promise<Response> {
  route.metrics.logReadOnce(route.upstream.cluster);
  let answer: Response;
  try {
    answer = await fetchLog(route.upstream, key, options);
  } catch (e) {
    return statusResponse(unreachable(e));
  }
  if (!answer.ok) return statusResponse(await logRefusal(answer));
  if (websocket) return logSocket(answer.body, protocol);
  // Never compressed: the runtime would gzip text/plain for a client that accepts it, and a gzip layer holds lines back.
  return new Response(answer.body, { headers: { "content-type": answer.headers.get("content-type") ?? "text/plain", "cache-control": "no-cache, private", "content-encoding": "identity" } });
}

/** The log as the API server sends it on a WebSocket: an empty message, then its bytes as they come, then a clean close. */
function logSocket(body: ReadableStream<Uint8Array> | null, protocol: string | undefined): Response {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept({ allowHalfOpen: true });
  let closed = false;
  server.addEventListener("close", (event) => {
    closed = true;
    answerClose(server, event.code, event.reason);
  });
  const send = (bytes: Uint8Array) => server.send(logMessage(bytes, protocol));
  void (async () => {
    send(new Uint8Array(0));
    const reader = body?.getReader();
    for (;;) {
      const read = await reader?.read();
      if (!read || read.done) break;
      if (closed) return void reader?.cancel().catch(() => undefined);
      send(read.value);
    }
    server.close(CLOSE.normal, "the log ended");
  })().catch(() => {
    try {
      server.close(CLOSE.normal, "the log's upstream stream failed");
    } catch {
      // already closed
    }
  });
  return upgradeResponse(client, protocol);
}
