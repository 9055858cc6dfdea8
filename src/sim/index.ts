/**
 * @module
 * A simulated Kubernetes API server for the relay's tests, demo and benchmark: faithful to the
 * list/watch contract, seeded with realistic objects, with churn, fault injection and a log
 * of every request. Each `startSimulator` call is independent (no shared module state).
 */
import type { KubeObject } from "../k8s/types.ts";
import type { ChurnOptions } from "./churn.ts";
import { parseFaults, type FaultRequest } from "./faults.ts";
import type { Rule, User } from "./rbac.ts";
import type { LoggedRequest } from "./requestlog.ts";
import { resourceByName } from "./resources.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import type { InitialOptions } from "./seed.ts";
import { SimServer } from "./server.ts";
import { SimState, type SimConfig, type SimStats } from "./state.ts";
import type { PatchType } from "./writes.ts";

export { ApiError } from "./errors.ts";
export { WRITTEN_AT } from "./store.ts";
export { RESOURCES } from "./resources.ts";
export type { ChurnOptions, FaultRequest, InitialOptions, LoggedRequest, Rule, SimConfig, SimStats, User };

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** PRNG seed for fixtures and churn (default 1). */
  seed?: number;
  /** Events kept for watch resume (default 10000); older resourceVersions get 410. */
  historyLimit?: number;
  /** Default 60000, like the API server. */
  bookmarkIntervalMs?: number;
  /**
   * The relay's credential: when set, every Kubernetes request needs `Authorization: Bearer <token>`
   * or a user's token; `/_sim/` stays open. It authenticates as the all-powerful
   * `system:serviceaccount:kube-watch-relay:relay`.
   */
  token?: string;
  /**
   * People with their own tokens, whose requests RBAC-style rules limit (403s, and the answers to
   * SelfSubjectAccessReviews). Without `token`, requests with no credentials stay unlimited.
   */
  users?: User[];
  /** PEM key and certificate: serve HTTPS. */
  tls?: { key: string; cert: string };
  /** Seeded objects (default 4 namespaces, 8 pods each, 3 nodes, 2 deployments per namespace). */
  initial?: InitialOptions;
  /** Start churn immediately. */
  churn?: ChurnOptions;
  /**
   * Publish OpenAPI (the `openapi` config, default off: a server with it turned off answers 404),
   * which `kubectl explain`, `kubectl apply` and kubectl's field validation read.
   */
  openapi?: boolean;
  /**
   * Run the workload controllers (default off): Deployments own ReplicaSets that own Pods,
   * scaling and rollouts make and remove pods, pods start a moment after they are made, and
   * statuses follow the pods. Off, objects change only when written (the benchmark's churn).
   */
  controllers?: boolean;
  /**
   * Where its revisions start (default 0, so a test's are small and repeatable). A simulator that
   * stands in for one cluster across restarts starts from `clockResourceVersion()`, so a restart
   * does not take its history back in time, which to a client is an etcd restore.
   */
  initialResourceVersion?: number;
}

/**
 * Microseconds since 2026 (about 3·10^13 now, far below 2^53): further on than a simulator that
 * restarts can have written, short of a thousand writes a millisecond.
 */
export function clockResourceVersion(now = Date.now()): number {
  return (now - Date.UTC(2026, 0, 1)) * 1000;
}

export interface Simulator {
  readonly url: string;
  readonly port: number;
  /** The current global resourceVersion. */
  readonly resourceVersion: string;
  /** Same as `GET /_sim/stats`. */
  stats(): SimStats;
  /** Same as `GET /_sim/requests`: requests with seq ≥ `since` under `path`. */
  requests(query?: { since?: number; path?: string }): { next: number; requests: LoggedRequest[] };
  /** Same as `POST /_sim/churn`; `{ ratePerSec: 0 }` stops. */
  churn(options: ChurnOptions): void;
  /** Run `ops` churn operations synchronously, for deterministic tests. */
  churnStep(ops: number): void;
  /** Same as `POST /_sim/config`. */
  configure(config: Partial<SimConfig>): void;
  /** Same as `POST /_sim/faults`; resolves after a requested restart is listening again. */
  faults(request: FaultRequest): Promise<void>;
  /**
   * Resolves once the server listens: at once, or, while it restarts (as `POST /_sim/faults`
   * asked), when it listens on its port again; rejects if it cannot.
   */
  listening(): Promise<void>;
  /** Same as `POST /_sim/reset` (users stay); revisions after `resourceVersion` if given. */
  reset(resourceVersion?: number): void;
  /** Same as `GET /_sim/users`. */
  users(): User[];
  /** Same as `PUT /_sim/users`: replaces every user; the next request sees the new rules. */
  setUsers(users: User[]): void;
  /** Current objects of a resource (`pods`, `deployments`, `widgets.example.com`...), in key order. */
  list(resource: string, namespace?: string): KubeObject[];
  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Writes through the API's rules (409s and 404s throw `ApiError`); the namespace comes from the object. */
  create(resource: string, object: KubeObject): KubeObject;
  replace(resource: string, object: KubeObject): KubeObject;
  patch(resource: string, namespace: string | undefined, name: string, patch: unknown, type?: PatchType): KubeObject;
  delete(resource: string, namespace: string | undefined, name: string): KubeObject;
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const state = new SimState({
    seed: options.seed ?? 1,
    initial: options.initial ?? {},
    controllers: options.controllers ?? false,
    token: options.token,
    users: options.users ?? [],
    config: {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      historyLimit: options.historyLimit ?? 10_000,
      selfSubjectReviews: true,
      openapi: options.openapi ?? false,
      watchList: true,
      clientCertificateUser: null,
      listDelayMs: 0,
      watchDelayMs: 0,
      chunkPerEvent: false,
    },
    initialResourceVersion: options.initialResourceVersion,
  });
  const server = new SimServer(state, { host: options.host ?? "127.0.0.1", port: options.port ?? 0, tls: options.tls });
  await server.listen();
  if (options.churn) state.setChurn(options.churn);
  const namespaceOf = (o: KubeObject) => o.metadata?.namespace;
  let closed = false;

  return {
    get url() {
      return server.url;
    },
    get port() {
      return server.port;
    },
    get resourceVersion() {
      return String(state.store.resourceVersion);
    },
    stats: () => state.stats(),
    requests: (query = {}) => state.log.page(query.since, query.path),
    churn: (churn) => state.setChurn(churn),
    churnStep: (ops) => state.churn.step(ops),
    configure: (config) => state.configure(config),
    async faults(request) {
      state.applyFaults(parseFaults(request));
      if (request.restart) await server.restart(request.restart.downtimeMs);
    },
    listening: () => server.listening(),
    reset: (resourceVersion) => state.reset(resourceVersion),
    users: () => state.users.list(),
    setUsers: (users) => state.users.set(users),
    list(resource, namespace) {
      const objects = state.store.objects(resourceByName(resource));
      return [...objects.keys()]
        .sort()
        .map((k) => objects.get(k))
        .filter((o): o is KubeObject => !!o && (namespace === undefined || namespaceOf(o) === namespace));
    },
    get: (resource, namespace, name) => state.store.get(resourceByName(resource), metaNamespaceKey(namespace, name)),
    create: (resource, object) => state.writes.create(resourceByName(resource), namespaceOf(object), object),
    replace: (resource, object) => state.writes.replace(resourceByName(resource), namespaceOf(object), object.metadata?.name ?? "", object),
    patch: (resource, namespace, name, patch, type = "merge") => state.writes.patch(resourceByName(resource), namespace, name, type, patch),
    delete: (resource, namespace, name) => state.writes.remove(resourceByName(resource), namespace, name),
    async close() {
      if (closed) return;
      closed = true;
      state.close();
      await server.close();
    },
  };
}
