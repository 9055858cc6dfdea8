/**
 * @module
 * The names of the Worker's plain-text variables and of its secrets: the one list both the
 * Worker's `Vars` type and the local launcher (which passes each one given in its environment
 * on to the runtime) are made from. Import-free, so Node scripts can read it.
 */
export const VARIABLE_NAMES = [
  "UPSTREAM_URL",
  "CLUSTERS",
  "AUTH_MODE",
  "ALLOWED_ORIGINS",
  "ALLOWED_HOSTS",
  "DENY_RESOURCES",
  "WINDOW_EVENTS",
  "WINDOW_BYTES",
  "SUBSCRIBER_BUDGET_BYTES",
  "BOOKMARK_INTERVAL_SECONDS",
  "UPSTREAM_STALL_SECONDS",
  "IDLE_GRACE_SECONDS",
  "SYNC_WAIT_SECONDS",
  "HUB_RETENTION_SECONDS",
  "WATCH_RENEW_SECONDS",
  "MAX_HUBS",
  "MAX_HUBS_PER_SUBJECT",
  "MAX_SUBSCRIPTIONS_PER_SUBJECT",
  "SUBSCRIBERS_PER_HUB",
  "AUTH_RECHECK_SECONDS",
  "STRIP_MANAGED_FIELDS",
  "VIEW_INDEX_IDLE_SECONDS",
  "VIEW_SCAN_OBJECTS",
  "MAX_VIEW_INDEX_BUILDS_PER_SUBJECT",
  "MAX_VIEW_INDEX_BUILDS_PER_HUB",
  "TOMBSTONES_MAX",
  "TOMBSTONE_TTL_SECONDS",
  "LINE_MEMORY_BYTES",
  "SLICE_MEMORY_BYTES",
  "LIST_PAGES_AT_ONCE",
  "LOG_LEVEL",
  "LIST_CACHE_SECONDS",
  "LOG_BUFFER_LINES",
  "LOG_MEMORY_BYTES",
  "LOG_IDLE_GRACE_SECONDS",
  "LOG_UPSTREAM_TIMEOUT_SECONDS",
] as const;

/** Secrets: `UPSTREAM_TOKEN` for the default cluster, the jwt mode's key, and a token that may read `/metrics` whatever AUTH_MODE says. */
export const SECRET_NAMES = ["UPSTREAM_TOKEN", "AUTH_JWT_SECRET", "METRICS_TOKEN"] as const;
