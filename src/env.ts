/**
 * @module
 * The Worker's bindings and variables. Every variable is optional here; `config.ts` turns them
 * into typed settings with defaults and says what is wrong when one is malformed.
 */
import type { WatchHub } from "./hub/hub.ts";
import type { WatchMux } from "./mux/mux.ts";
import type { Quota } from "./quota/quota.ts";
import type { MetricsRegistry } from "./metrics/registry.ts";

export interface Env {
  WATCH_HUB: DurableObjectNamespace<WatchHub>;
  QUOTA: DurableObjectNamespace<Quota>;
  METRICS: DurableObjectNamespace<MetricsRegistry>;
  /** Optional Workers Analytics Engine dataset the metrics registry also writes to. */
  ANALYTICS?: AnalyticsEngineDataset;
  /** Secret: a bearer token that may read `/metrics` (for scrapers), whatever AUTH_MODE says. */
  METRICS_TOKEN?: string;
  /** One per relay socket (`/_relay/socket`). */
  WATCH_MUX: DurableObjectNamespace<WatchMux>;
  ASSETS?: Fetcher;
  /** Optional fetch-only binding (Workers VPC service or a service binding) for the default cluster. */
  UPSTREAM?: Fetcher;
  UPSTREAM_URL?: string;
  UPSTREAM_TOKEN?: string;
  CLUSTERS?: string;
  AUTH_MODE?: string;
  AUTH_JWT_SECRET?: string;
  ALLOWED_ORIGINS?: string;
  ALLOWED_HOSTS?: string;
  DENY_RESOURCES?: string;
  WINDOW_EVENTS?: string;
  WINDOW_BYTES?: string;
  SUBSCRIBER_BUDGET_BYTES?: string;
  BOOKMARK_INTERVAL_SECONDS?: string;
  UPSTREAM_STALL_SECONDS?: string;
  IDLE_GRACE_SECONDS?: string;
  WATCH_RENEW_SECONDS?: string;
  MAX_HUBS?: string;
  MAX_HUBS_PER_SUBJECT?: string;
  MAX_SUBSCRIPTIONS_PER_SUBJECT?: string;
  AUTH_RECHECK_SECONDS?: string;
  STRIP_MANAGED_FIELDS?: string;
  TOMBSTONES_MAX?: string;
  TOMBSTONE_TTL_SECONDS?: string;
  /** Named clusters' tokens and bindings are looked up by the names CLUSTERS gives. */
  [name: string]: unknown;
}
