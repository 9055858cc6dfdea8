/**
 * @module
 * Every metric the relay exposes, with its type, help text and label names. Names carry their
 * unit, counters end in `_total`, and every label has a bounded set of values (clusters from
 * the configuration, transports, states, reasons, HTTP statuses): never a key, a selector, a
 * subject or a namespace, which would make one series per watch or per user.
 */

export type MetricType = "counter" | "gauge" | "histogram";

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly string[];
  /** Histograms: upper bounds of the buckets, ascending (`+Inf` is implied). */
  readonly buckets?: readonly number[];
}

const family = (name: string, type: MetricType, labels: readonly string[], help: string, buckets?: readonly number[]): Family => ({
  name: `kube_watch_relay_${name}`,
  type,
  help,
  labels,
  ...(buckets ? { buckets } : {}),
});

export const FAMILIES = {
  // Gauges, from the hubs' latest reports.
  hubs: family("hubs", "gauge", ["cluster", "upstream_state"], "Live hubs (one per watch key) by the state of their upstream watch: watching, listing, backoff or stopped."),
  subscribers: family(
    "subscribers",
    "gauge",
    ["cluster", "transport"],
    "Clients watching live hubs, by transport (websocket or http); a hot key's replica hubs, which watch their root, are replica_hubs, not subscribers.",
  ),
  upstreamWatches: family("upstream_watches", "gauge", ["cluster"], "Upstream watch streams open: one per hub whose upstream watch is established (a key's root; its replicas watch the root)."),
  views: family("views", "gauge", ["cluster"], "Live views open on live hubs (each also counted among the subscribers)."),
  replicaHubs: family("replica_hubs", "gauge", ["cluster"], "Live replica hubs: hot keys' hubs that watch their key's root and serve a share of its subscribers."),
  replicaLag: family(
    "replica_lag_seconds",
    "gauge",
    ["cluster"],
    "The furthest replica hub's lag behind its root: how long after the root it committed the last event it reported committing, or, when more, how long the oldest event its watch of the root has not been sent has waited.",
  ),
  windowEvents: family("window_events", "gauge", ["cluster"], "Events held in the replay windows of live hubs."),
  windowBytes: family("window_bytes", "gauge", ["cluster"], "Bytes of serialised events held in the replay windows of live hubs."),
  cacheObjects: family("cache_objects", "gauge", ["cluster"], "Objects in the collections of live hubs."),
  storageBytes: family("storage_bytes", "gauge", ["cluster"], "Bytes of SQLite storage of live hubs: their collections, windows and tombstones."),
  memoryBytes: family("hub_memory_bytes", "gauge", ["cluster"], "Bytes of window lines live hubs hold in memory (the rest is read from their storage; LINE_MEMORY_BYTES bounds it per isolate)."),
  reportAge: family("hub_report_age_seconds", "gauge", [], "Age of the oldest live hub's latest report: how stale the hub gauges may be."),
  startTime: family("metrics_start_time_seconds", "gauge", [], "When the relay's counters last started from zero (Unix time), as process_start_time_seconds for a process."),

  // Counters, from the hubs.
  watchRequests: family("upstream_watch_requests_total", "counter", ["cluster"], "Watch requests the hubs made to the upstream API server."),
  reconnects: family("upstream_reconnects_total", "counter", ["cluster"], "Upstream re-watches after a stream ended, failed or stalled."),
  renewals: family("upstream_watch_renewals_total", "counter", ["cluster"], "Upstream watches the heartbeat ended so that the stream is read on in a fresh invocation (CPU limits)."),
  relists: family("upstream_relists_total", "counter", ["cluster"], "Lists of a collection a hub already held (after a 410, or when a consistent read found the upstream had moved)."),
  expired: family("upstream_expired_total", "counter", ["cluster"], "Upstream watches answered 410 Expired (history compacted): each is followed by a relist."),
  upstreamErrors: family("upstream_errors_total", "counter", ["cluster", "code"], "Upstream requests that failed, by HTTP status (connection for no answer)."),
  stalls: family("upstream_stalls_total", "counter", ["cluster"], "Upstream watches restarted because no bytes arrived for UPSTREAM_STALL_SECONDS."),
  events: family("events_total", "counter", ["cluster"], "Watch events the hubs committed to their windows (events in)."),
  delivered: family(
    "delivered_events_total",
    "counter",
    ["cluster", "transport"],
    "Watch events (bookmarks and errors included) sent to subscribers (deliveries out); a hot key's root counts its sends to its replica hubs too, as http.",
  ),
  messages: family("sent_messages_total", "counter", ["cluster", "transport"], "WebSocket messages and HTTP chunks sent to subscribers (a root's to its replica hubs included, as http)."),
  compressed: family(
    "compressed_messages_total",
    "counter",
    ["cluster"],
    "WebSocket messages compressed for subscribers of the gzip framings: once per message, however many of them it is sent to (each send counts in sent_messages_total).",
  ),
  cutoffs: family(
    "subscriber_cutoffs_total",
    "counter",
    ["cluster", "transport", "reason"],
    "Subscribers cut off: slow (beyond SUBSCRIBER_BUDGET_BYTES) or window (fell out of the replay window while catching up); a replica hub its root cuts off too, as http.",
  ),
  resumes: family(
    "resumes_total",
    "counter",
    ["cluster", "outcome"],
    "Watches resuming from a resourceVersion, by outcome: window (replayed exactly), compacted (answered from the cache in compact form), expired (410) or too_large (504).",
  ),
  listGzip: family(
    "list_gzip_total",
    "counter",
    ["cluster", "outcome"],
    "Lists sent gzip-coded (the client accepted gzip), by outcome: compressed (the page compressed for this request) or shared (the page's compression another request made, or held).",
  ),
  quotaRefusals: family(
    "quota_refusals_total",
    "counter",
    ["cluster", "quota"],
    "Requests refused with 429 by a quota: max_hubs, max_hubs_per_subject, max_subscriptions_per_subject, max_view_index_builds_per_subject, max_view_index_builds_per_hub or max_view_indexes.",
  ),
  lagBytes: family(
    "subscriber_lag_bytes",
    "histogram",
    ["cluster", "transport"],
    "How far behind the head clients are, in bytes sent but not taken plus bytes not yet sent; sampled every heartbeat and at cut-offs of clients (replica hubs: replica_lag_seconds).",
    [1024, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216],
  ),
  lagSeconds: family(
    "subscriber_lag_seconds",
    "histogram",
    ["cluster", "transport"],
    "How long ago the oldest event a client has not been sent was committed; sampled every heartbeat and at cut-offs of clients (replica hubs: replica_lag_seconds).",
    [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  ),

  // Pod logs (src/logs): followers against the upstream streams they share, from the log hubs' reports.
  logFollowers: family("log_followers", "gauge", ["cluster", "transport"], "Clients following a pod's log through the relay, by transport (websocket or http)."),
  logUpstreamStreams: family(
    "log_upstream_streams",
    "gauge",
    ["cluster"],
    "Followed logs open upstream: one per log hub (container, current or previous run) however many follow it. log_followers over this is how many follows the relay saves the API server and its kubelets.",
  ),
  logBufferBytes: family(
    "log_buffer_bytes",
    "gauge",
    ["cluster"],
    "Bytes of recent log lines the log hubs keep for followers who join later (LOG_BUFFER_LINES per hub, LOG_MEMORY_BYTES per isolate).",
  ),
  logLines: family("log_lines_total", "counter", ["cluster"], "Log lines the log hubs read from their upstream streams (each once, however many follow it)."),
  logDelivered: family("log_delivered_lines_total", "counter", ["cluster", "transport"], "Log lines sent to followers (lines, and history lines, sent once per follower)."),
  logUpstreamRequests: family(
    "log_upstream_requests_total",
    "counter",
    ["cluster", "kind"],
    "Pod log requests the relay made upstream: follow (a log hub's stream), history (a log hub's first read, or a follower's own history the buffer did not hold) or once (a log not followed, passed through).",
  ),
  logCutoffs: family(
    "log_follower_cutoffs_total",
    "counter",
    ["cluster", "reason"],
    "Log followers cut off: slow (beyond SUBSCRIBER_BUDGET_BYTES) or buffer (the lines after its position were let go before it took them).",
  ),

  // Counters, from the Worker.
  cachedLists: family(
    "cached_lists_total",
    "counter",
    ["cluster"],
    "Lists and gets of resources without watch (metrics.k8s.io) answered from a list another request made upstream within LIST_CACHE_SECONDS.",
  ),
  cacheUpstreamLists: family(
    "cache_upstream_lists_total",
    "counter",
    ["cluster"],
    "Lists of resources without watch the list cache sent upstream (at most one per key per LIST_CACHE_SECONDS, or one per request for a list too large to hold).",
  ),
  readsPassedThrough: family(
    "reads_passed_through_total",
    "counter",
    ["cluster", "verb"],
    "Reads that make no hub and that no live hub held, each sent upstream once by the Worker: get (a single object) or list (a field-selected key's, as kubectl describe asks for an object's Events).",
  ),
  authRefusals: family(
    "auth_refusals_total",
    "counter",
    ["reason"],
    "Requests refused before any hub: unauthenticated (401), forbidden (403), denied_resource (DENY_RESOURCES), unverifiable (the cluster could not be asked), rate_limited (too many new tokens to review, kube mode), host (ALLOWED_HOSTS) or origin (ALLOWED_ORIGINS).",
  ),
} as const satisfies Record<string, Family>;

export type FamilyId = keyof typeof FAMILIES;

/** Label values known in advance: exposed at 0 before they first happen, so a rate has a start. */
export const KNOWN_VALUES: Partial<Record<FamilyId, Record<string, readonly string[]>>> = {
  resumes: { outcome: ["window", "compacted", "expired", "too_large"] },
  authRefusals: { reason: ["unauthenticated", "forbidden", "denied_resource", "unverifiable", "rate_limited", "host", "origin"] },
  logUpstreamRequests: { kind: ["follow", "history", "once"] },
  readsPassedThrough: { verb: ["get", "list"] },
};

export type Transport = "websocket" | "http";
export type CutoffReason = "slow" | "window";
export type ResumeOutcome = "window" | "compacted" | "expired" | "too_large";
export type QuotaName = "max_hubs" | "max_hubs_per_subject" | "max_subscriptions_per_subject" | "max_view_index_builds_per_subject" | "max_view_index_builds_per_hub" | "max_view_indexes";
export type RefusalReason = "unauthenticated" | "forbidden" | "denied_resource" | "unverifiable" | "rate_limited" | "host" | "origin";
