/**
 * @module
 * One simulator's mutable world: the store with its seeded cluster, churn, open watches,
 * injected faults, request log, users and tunables, plus the operations the control API and
 * the programmatic API share (stats, configure, faults, reset).
 */
import { badRequest } from "../k8s/status.ts";
import { Churn, type ChurnOptions } from "./churn.ts";
import { EventRecorder } from "./events.ts";
import { Controllers } from "./controllers.ts";
import { ApiError } from "./errors.ts";
import { Faults, type FaultRequest } from "./faults.ts";
import { LogFollows } from "./logs.ts";
import { Random } from "./random.ts";
import { Users } from "./rbac.ts";
import { RequestLog, type RequestCounts } from "./requestlog.ts";
import { Cluster, type InitialOptions } from "./seed.ts";
import { Store } from "./store.ts";
import { WatchCache } from "./watch-cache.ts";
import { Watchers, type ActiveWatch } from "./watchers.ts";
import { Writes } from "./writes.ts";

export interface SimConfig {
  bookmarkIntervalMs: number;
  historyLimit: number;
  /** `false`: a cluster before Kubernetes 1.28, which has no SelfSubjectReview (404). */
  selfSubjectReviews: boolean;
  /** Publish OpenAPI v3 (`/openapi/v3` and its documents; see `openapi.ts`); otherwise every `/openapi/` path is a 404. */
  openapi: boolean;
  /**
   * The cluster as seen through a `kubectl proxy` whose kubeconfig authenticates with a client
   * certificate: the API server authenticates the certificate before any bearer token, so every
   * request is this user's (cluster-admin), whatever token it carries. `null`: off.
   */
  clientCertificateUser: string | null;
  /** Each list's answer waits this long (ms): an API server that takes a while to list a big collection. */
  listDelayMs: number;
  /**
   * Whether watch-lists are served (the WatchList feature gate: on in 1.32 and from 1.34, off in
   * 1.33): off, a watch with `sendInitialEvents` is refused (422) and none is defaulted to one.
   */
  watchList: boolean;
  /**
   * Each change reaches the watch cache, and so the watches and their bookmarks, this long after
   * it is made (ms), in order: a watch cache behind etcd (`watch-cache.ts`). A watch-list waits for
   * the cache to reach etcd's revision; lists and gets read the store.
   */
  watchDelayMs: number;
  /**
   * Each change is handed to the watches in a turn of the event loop of its own, so every watch
   * event is written as its own chunk and sent before the next is taken, as the API server's
   * watch handler flushes each event as it comes. Off (the default), the changes made together
   * (a burst made in one turn) are written together and reach a client in one chunk.
   */
  chunkPerEvent: boolean;
}

export interface SimStats {
  resourceVersion: string;
  activeWatches: ActiveWatch[];
  /** Pod logs being followed: one per `follow=true` request still open. */
  activeLogFollows: Array<{ path: string; container: string; previous: boolean }>;
  counts: RequestCounts;
  churn: { ratePerSec: number; namespaces: string[]; events: boolean };
}

interface World {
  store: Store;
  /** What the watches are served from: the store's changes, `watchDelayMs` late. */
  cache: WatchCache;
  cluster: Cluster;
  writes: Writes;
  churn: Churn;
  controllers: Controllers | undefined;
}

export class SimState {
  readonly seed: number;
  readonly initial: InitialOptions;
  /** Run the workload controllers (`controllers.ts`). */
  readonly controllers: boolean;
  /** Identities and their rules; like the config, they outlive `reset`. */
  readonly users: Users;
  readonly config: SimConfig;
  readonly watchers = new Watchers();
  readonly logs = new LogFollows();
  readonly faults = new Faults();
  readonly log = new RequestLog();
  /** Picks watch timeouts in [1800, 3600) s when clients set none. */
  readonly timeouts: Random;
  #world: World;

  constructor(options: { seed: number; initial: InitialOptions; controllers?: boolean; token: string | undefined; users: unknown; config: SimConfig; initialResourceVersion?: number | undefined }) {
    this.seed = options.seed;
    this.initial = options.initial;
    this.controllers = options.controllers ?? false;
    this.users = new Users(options.token, options.users);
    this.config = { ...options.config };
    this.timeouts = new Random(options.seed + 3);
    this.#world = this.#build(options.initialResourceVersion ?? 0);
  }

  /**
   * Seed a fresh world whose revisions continue after `fromRV`. History then starts at the
   * seeded state, so a client resuming from before a reset gets 410 and relists.
   */
  #build(fromRV: number): World {
    const store = new Store({ historyLimit: this.config.historyLimit, initialResourceVersion: fromRV });
    const cluster = new Cluster(store, new Random(this.seed), this.initial);
    store.compact();
    const writes = new Writes(store, new Random(this.seed + 2));
    // One recorder of Events for churn and the controllers, which record them while churn does (its `events` setting).
    const recorder = new EventRecorder(store, new Random(this.seed + 4));
    let churn: Churn | undefined;
    const controllers = this.controllers ? new Controllers(store, new Random(this.seed + 5), cluster.nodes, { recorder, on: () => churn?.settings.events === true }) : undefined;
    churn = new Churn(store, writes, cluster, new Random(this.seed + 1), recorder, controllers !== undefined);
    const cache = new WatchCache(
      store,
      () => this.config.watchDelayMs,
      () => this.config.chunkPerEvent,
    );
    return { store, cache, cluster, writes, churn, controllers };
  }

  get store(): Store {
    return this.#world.store;
  }

  get cache(): WatchCache {
    return this.#world.cache;
  }

  get writes(): Writes {
    return this.#world.writes;
  }

  get churn(): Churn {
    return this.#world.churn;
  }

  stats(): SimStats {
    return {
      resourceVersion: String(this.store.resourceVersion),
      activeWatches: this.watchers.list(),
      activeLogFollows: this.logs.list(),
      counts: this.log.counts(),
      churn: this.churn.settings,
    };
  }

  setChurn(options: ChurnOptions): void {
    try {
      this.churn.configure(options);
    } catch (e) {
      throw new ApiError(badRequest((e as Error).message));
    }
  }

  configure(config: Partial<SimConfig>): void {
    for (const [key, value] of Object.entries(config)) {
      if (key === "selfSubjectReviews" || key === "openapi" || key === "watchList" || key === "chunkPerEvent") {
        if (typeof value !== "boolean") throw new ApiError(badRequest(`${key} must be a boolean`));
        continue;
      }
      if (key === "clientCertificateUser") {
        if (value !== null && (typeof value !== "string" || value === "")) throw new ApiError(badRequest(`${key} must be a user name, or null`));
        continue;
      }
      if (key === "listDelayMs" || key === "watchDelayMs") {
        if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new ApiError(badRequest(`${key} must be a non-negative integer`));
        continue;
      }
      if (key !== "bookmarkIntervalMs" && key !== "historyLimit") {
        throw new ApiError(
          badRequest(
            `unknown config field "${key}" (known: bookmarkIntervalMs, historyLimit, selfSubjectReviews, openapi, watchList, clientCertificateUser, listDelayMs, watchDelayMs, chunkPerEvent)`,
          ),
        );
      }
      if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new ApiError(badRequest(`${key} must be a positive integer`));
    }
    if (config.selfSubjectReviews !== undefined) this.config.selfSubjectReviews = config.selfSubjectReviews;
    if (config.openapi !== undefined) this.config.openapi = config.openapi;
    if (config.watchList !== undefined) this.config.watchList = config.watchList;
    if (config.clientCertificateUser !== undefined) this.config.clientCertificateUser = config.clientCertificateUser;
    if (config.listDelayMs !== undefined) this.config.listDelayMs = config.listDelayMs;
    if (config.watchDelayMs !== undefined) this.config.watchDelayMs = config.watchDelayMs;
    if (config.chunkPerEvent !== undefined) this.config.chunkPerEvent = config.chunkPerEvent;
    if (config.historyLimit !== undefined) {
      this.config.historyLimit = config.historyLimit;
      this.store.setHistoryLimit(config.historyLimit);
    }
    if (config.bookmarkIntervalMs !== undefined) {
      const ms = config.bookmarkIntervalMs;
      this.config.bookmarkIntervalMs = ms;
      this.watchers.forEach((w) => w.setBookmarkInterval(ms));
    }
  }

  /** Everything but `restart`, which needs the listener. */
  applyFaults(request: FaultRequest): void {
    this.faults.apply(request, this.watchers, this.store);
  }

  /**
   * Back to the seeded state: watches ended, churn stopped, faults and log cleared. Its
   * revisions go on after the current one, or after `from` (older: an etcd restored from backup).
   */
  reset(from = this.store.resourceVersion): void {
    this.watchers.reset();
    this.faults.clear();
    this.log.reset();
    this.#world.churn.close();
    this.#world.controllers?.close();
    this.#world.cache.close();
    this.#world.store.close();
    this.#world = this.#build(from);
  }

  close(): void {
    this.watchers.forEach((w) => w.end());
    this.logs.endAll();
    this.#world.churn.close();
    this.#world.controllers?.close();
    this.#world.cache.close();
    this.#world.store.close();
  }
}
