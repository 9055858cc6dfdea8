/**
 * @module
 * The Worker's bindings: its variables (`vars.ts`) and its Durable Object namespaces, typed by
 * their classes for RPC.
 */
import type { WatchHub } from "./hub/hub.ts";
import type { ListCache } from "./lists/list-cache.ts";
import type { LogHub } from "./logs/hub.ts";
import type { MetricsRegistry } from "./metrics/registry.ts";
import type { Quota } from "./quota/quota.ts";
import type { Vars } from "./vars.ts";

export interface Env extends Vars {
  WATCH_HUB: DurableObjectNamespace<WatchHub>;
  /**
   * A hot key's replica hubs, where they run apart from their roots: locally, in a second
   * workerd (`scripts/runtime.ts`, `replicaWorkerd`), to measure a tree with a thread per tier.
   * Unset when deployed, where a replica is a `WATCH_HUB` like its root and has its own thread.
   */
  WATCH_REPLICAS?: DurableObjectNamespace<WatchHub>;
  /** One per followed log (`src/logs`). */
  LOG_HUB: DurableObjectNamespace<LogHub>;
  QUOTA: DurableObjectNamespace<Quota>;
  METRICS: DurableObjectNamespace<MetricsRegistry>;
  /** One per key of a resource without watch: its list, shared for `LIST_CACHE_SECONDS`. */
  LIST_CACHE: DurableObjectNamespace<ListCache>;
  /**
   * One per relay socket (`/_relay/socket`). Only ever fetched, so not typed by its class: the
   * class builds the relay's routes, which read this type.
   */
  WATCH_MUX: DurableObjectNamespace;
}

/** The namespace of a hot key's replica hubs (DESIGN.md, "Hot keys"). */
export const replicaHubs = (env: Pick<Env, "WATCH_HUB" | "WATCH_REPLICAS">): DurableObjectNamespace<WatchHub> => env.WATCH_REPLICAS ?? env.WATCH_HUB;
