/**
 * Helpers for the Workers integration tests: the relay (the Worker under test), subscribers
 * whose events can be awaited one by one, and the simulated API servers' control API.
 */
import { env, exports } from "cloudflare:workers";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { Inbox } from "../kit/inbox.ts";
import { pumpLines } from "../kit/lines.ts";
import { eventually } from "../kit/wait.ts";

export { eventually };

export function relay(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(`http://relay.test${path}`, init));
}

export interface Subscription<T = KubeObject> {
  events: Inbox<WatchEvent<T>>;
  /** Raw frames or lines, exactly as received. */
  raw: string[];
  close(): void;
}

/** A WebSocket watch through the relay. */
export async function wsWatch(path: string, headers: Record<string, string> = {}): Promise<Subscription & { socket: WebSocket }> {
  const response = await relay(path, { headers: { upgrade: "websocket", ...headers } });
  const socket = response.webSocket;
  if (!socket) throw new Error(`expected a WebSocket upgrade, got ${response.status}: ${await response.text()}`);
  socket.accept();
  const events = new Inbox<WatchEvent>();
  const raw: string[] = [];
  socket.addEventListener("message", (m) => {
    raw.push(m.data as string);
    // One event per message, or several, one per line, with the batch subprotocol.
    for (const line of (m.data as string).split("\n")) if (line) events.push(JSON.parse(line) as WatchEvent);
  });
  socket.addEventListener("close", (e) => events.end({ code: e.code, reason: e.reason }));
  return { socket, events, raw, close: () => socket.close(1000, "test done") };
}

/** An HTTP chunked watch through the relay; `T` is what the events carry (a Table, with a Table Accept). */
export async function httpWatch<T = KubeObject>(path: string, headers: Record<string, string> = {}): Promise<Subscription<T> & { response: Response }> {
  const response = await relay(path, { headers });
  if (response.status !== 200 || !response.body) throw new Error(`expected a watch stream, got ${response.status}: ${await response.text()}`);
  const events = new Inbox<WatchEvent<T>>();
  const raw: string[] = [];
  const body = pumpLines(response.body, (line) => {
    raw.push(line);
    events.push(JSON.parse(line) as WatchEvent<T>);
  });
  void body.ended.then((end) => events.end(end));
  return { response, events, raw, close: body.stop };
}

export const rvOf = (o: KubeObject | WatchEvent): number => Number(("object" in o ? (o.object as KubeObject) : o).metadata?.resourceVersion);
export const nameOf = (e: WatchEvent): string => e.object.metadata?.name ?? "";

let unique = 0;
/** This file's own part of its names: files that run side by side count from 0 in the same millisecond. */
const file = crypto.randomUUID().slice(0, 6);
/** A namespace no other test uses, so counts at the shared simulator are this test's own. */
export const uniqueNamespace = (prefix = "t"): string => `${prefix}-${Date.now().toString(36)}-${file}${(unique++).toString(36)}`;

/** A simulated API server: its Kubernetes API and its `/_sim/` control API. */
export class Sim {
  readonly url: string;
  constructor(cluster = "default") {
    const urls = JSON.parse(env.SIMULATORS as string) as Record<string, string>;
    const url = urls[cluster];
    if (!url) throw new Error(`no simulator for cluster ${cluster}`);
    this.url = url;
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(this.url + path, {
      method,
      headers: body === undefined ? {} : { "content-type": path.includes("/_sim/") ? "application/json" : "application/merge-patch+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }

  stats(): Promise<{ resourceVersion: string; activeWatches: Array<{ path: string; labelSelector: string; fieldSelector: string; resourceVersion: string }> }> {
    return this.#call("GET", "/_sim/stats");
  }

  /** Open upstream watches on a collection path. */
  async watchesOn(path: string): Promise<Array<{ labelSelector: string; fieldSelector: string }>> {
    return (await this.stats()).activeWatches.filter((w) => w.path === path);
  }

  async requests(path: string, since = 0): Promise<{ next: number; requests: Array<{ seq: number; verb: string; path: string; query: string; status: number; open: boolean }> }> {
    return this.#call("GET", `/_sim/requests?since=${since}&path=${encodeURIComponent(path)}`);
  }

  /** Inject faults; a restart is awaited until the server answers again. */
  async faults(request: Record<string, unknown>): Promise<void> {
    if (!request.restart) {
      await this.#call("POST", "/_sim/faults", request);
      return;
    }
    // The server restarts right after answering, and may cut this very response.
    await this.#call("POST", "/_sim/faults", request).catch(() => undefined);
    await eventually(
      () =>
        this.stats().then(
          () => true,
          () => false,
        ),
      "the simulated API server to come back",
    );
  }

  /** Back to the seeded state, its revisions after `resourceVersion` when given (an older one: an etcd restore). */
  reset(resourceVersion?: number): Promise<unknown> {
    return this.#call("POST", "/_sim/reset", resourceVersion === undefined ? undefined : { resourceVersion: String(resourceVersion) });
  }

  /** Replace the simulated cluster's users (tokens and RBAC rules). */
  setUsers(users: Array<{ name: string; tokens: string[]; rules: Array<{ verbs: string[]; apiGroups: string[]; resources: string[]; namespaces?: string[] }> }>): Promise<unknown> {
    return this.#call("PUT", "/_sim/users", users);
  }

  configure(config: Record<string, unknown>): Promise<unknown> {
    return this.#call("POST", "/_sim/config", config);
  }

  createPod(namespace: string, name: string, labels: Record<string, string> = {}): Promise<KubeObject> {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name, namespace, labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } };
    return this.#callJson("POST", `/api/v1/namespaces/${namespace}/pods`, pod);
  }

  patchPod(namespace: string, name: string, patch: unknown): Promise<KubeObject> {
    return this.#call("PATCH", `/api/v1/namespaces/${namespace}/pods/${name}`, patch);
  }

  deletePod(namespace: string, name: string): Promise<KubeObject> {
    return this.#call("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`);
  }

  /** Delete a namespace: every pod in it goes at once, a burst of DELETED events. */
  deleteNamespace(namespace: string): Promise<KubeObject> {
    return this.#call("DELETE", `/api/v1/namespaces/${namespace}`);
  }

  /** Create `object` in the collection at `path` (`/api/v1/namespaces/ns/configmaps`). */
  create(path: string, object: KubeObject): Promise<KubeObject> {
    return this.#callJson("POST", path, object);
  }

  /** Merge-patch the object at `path`. */
  patch(path: string, patch: unknown): Promise<KubeObject> {
    return this.#call("PATCH", path, patch);
  }

  /** Delete the object at `path`. */
  delete(path: string): Promise<unknown> {
    return this.#call("DELETE", path);
  }

  list(path: string): Promise<{ metadata: { resourceVersion: string }; items: KubeObject[] }> {
    return this.#call("GET", path);
  }

  async #callJson<T>(method: string, path: string, body: unknown): Promise<T> {
    const response = await fetch(this.url + path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}
