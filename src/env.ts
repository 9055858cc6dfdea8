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
