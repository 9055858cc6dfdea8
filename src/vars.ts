/**
 * @module
 * The Worker's variables, secrets and plain bindings: everything in `Env` but the Durable Object
 * namespaces. Every variable is optional here; `config.ts` turns them into typed settings with
 * defaults and says what is wrong when one is malformed. Whatever reads only these (the
 * configuration, the upstream, the front door, the hub, quota and metrics objects) imports this
 * module rather than `env.ts`, which names the Durable Object classes, so no import cycle runs
 * through the bindings. (The relay socket's object runs the relay's routes, so it takes `Env`.)
 */
export interface Vars {
  /** Optional Workers Analytics Engine dataset the metrics registry also writes to. */
  ANALYTICS?: AnalyticsEngineDataset;
  /** Secret: a bearer token that may read `/metrics` (for scrapers), whatever AUTH_MODE says. */
  METRICS_TOKEN?: string;
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
