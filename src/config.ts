/**
 * @module
 * Typed settings from the Worker's variables. Numbers fall back to their defaults when unset;
 * a malformed value is a configuration error that names the variable.
 */
import { DEFAULT_WATCH_RENEW_SECONDS } from "./heartbeat.ts";
import { LOG_LEVELS, type LogLevel } from "./log.ts";
import { type ClusterEntry, parseClusters } from "./cluster-entries.ts";
import type { Vars } from "./vars.ts";

export class ConfigError extends Error {}

export interface HubSettings {
  /** Replay window bounds (`WINDOW_EVENTS`, `WINDOW_BYTES`). */
  windowEvents: number;
  windowBytes: number;
  /** Units a subscriber may have in flight before it is cut off as slow. */
  subscriberBudget: number;
  /** How often subscribers that asked for bookmarks get one when they are behind the head. */
  bookmarkIntervalMs: number;
  /** No bytes from the upstream watch for this long means the stream is dead. */
  upstreamStallMs: number;
  /** How long a hub keeps its upstream watch after its last subscriber left. */
  idleGraceMs: number;
  /**
   * How long a request waits for its hub to be ready to serve it (`SYNC_WAIT_SECONDS`): the
   * upstream's answer to a check or a relist, the first page of its first list, and, for what a
   * first list does not serve as it is staged (a watch), that list for as long as it goes on
   * taking objects. Past it, a 503 saying why.
   */
  syncWaitMs: number;
  /**
   * How long a hub keeps its stored state after its watch stopped (`HUB_RETENTION_SECONDS`):
   * within it a subscriber resumes from storage; after it the storage is deleted, and a
   * subscriber relists (storage is billed by the month, and every distinct selector is a hub).
   */
  retentionMs: number;
  /**
   * An upstream watch stream older than this is ended by the heartbeat and read on from the
   * heartbeat's invocation (`WATCH_RENEW_SECONDS`): no invocation reads a stream for longer
   * than this plus a heartbeat, whatever its CPU limit counts (DESIGN.md, "CPU limits").
   */
  watchRenewMs: number;
  /** Concurrent subscriptions one subject may hold, across hubs (`MAX_SUBSCRIPTIONS_PER_SUBJECT`). */
  maxSubscriptionsPerSubject: number;
  /** How often a live stream's access is checked again (kube mode). */
  authRecheckMs: number;
  /** Drop `metadata.managedFields` from relayed objects (`STRIP_MANAGED_FIELDS`, default true). */
  stripManagedFields: boolean;
  /**
   * How long an index made for a live view's order stays once no view reads through it
   * (`VIEW_INDEX_IDLE_SECONDS`): every write to the collection updates each index it has.
   */
  viewIndexIdleMs: number;
  /**
   * A collection of at most this many objects is read without an index for a view's order that
   * has none (`VIEW_SCAN_OBJECTS`): scanning its narrow rows costs about what the index's build
   * would, and writes nothing.
   */
  viewScanObjects: number;
  /**
   * Indexes built for views' orders in an hour, per subject across the relay and per hub
   * (`MAX_VIEW_INDEX_BUILDS_PER_SUBJECT`, `MAX_VIEW_INDEX_BUILDS_PER_HUB`): a build writes a row
   * per object (billed), and takes the place of another order's index.
   */
  viewIndexBuilds: { perSubject: number; perHub: number };
  /** Deletions kept for net-change resumes (`TOMBSTONES_MAX`, `TOMBSTONE_TTL_SECONDS`). */
  tombstones: { max: number; maxAgeMs: number };
  /**
   * What the hubs of one isolate keep in memory, all together (DESIGN.md, "Memory"): the
   * window's newest lines (`LINE_MEMORY_BYTES`), and slices of initial states being sent
   * (`SLICE_MEMORY_BYTES`). The rest is read from each hub's storage.
   */
  memory: { lines: number; slices: number; pages: number };
}

function int(env: Vars, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

export function hubSettings(env: Vars): HubSettings {
  return {
    windowEvents: int(env, "WINDOW_EVENTS", 10_000, 1),
    windowBytes: int(env, "WINDOW_BYTES", 32 * 1024 * 1024, 1024),
    subscriberBudget: int(env, "SUBSCRIBER_BUDGET_BYTES", 4 * 1024 * 1024, 1024),
    bookmarkIntervalMs: int(env, "BOOKMARK_INTERVAL_SECONDS", 60, 1) * 1000,
    upstreamStallMs: int(env, "UPSTREAM_STALL_SECONDS", 120, 1) * 1000,
    idleGraceMs: int(env, "IDLE_GRACE_SECONDS", 60, 0) * 1000,
    syncWaitMs: int(env, "SYNC_WAIT_SECONDS", 10, 1) * 1000,
    retentionMs: int(env, "HUB_RETENTION_SECONDS", 600, 0) * 1000,
    watchRenewMs: int(env, "WATCH_RENEW_SECONDS", DEFAULT_WATCH_RENEW_SECONDS, 0) * 1000,
    maxSubscriptionsPerSubject: int(env, "MAX_SUBSCRIPTIONS_PER_SUBJECT", 100, 1),
    authRecheckMs: int(env, "AUTH_RECHECK_SECONDS", 60, 1) * 1000,
    stripManagedFields: stripsManagedFields(env),
    viewIndexIdleMs: int(env, "VIEW_INDEX_IDLE_SECONDS", 3600, 0) * 1000,
    viewScanObjects: int(env, "VIEW_SCAN_OBJECTS", 5000, 0),
    viewIndexBuilds: { perSubject: int(env, "MAX_VIEW_INDEX_BUILDS_PER_SUBJECT", 8, 1), perHub: int(env, "MAX_VIEW_INDEX_BUILDS_PER_HUB", 16, 1) },
    tombstones: { max: int(env, "TOMBSTONES_MAX", 100_000, 0), maxAgeMs: int(env, "TOMBSTONE_TTL_SECONDS", 86_400, 0) * 1000 },
    memory: { lines: int(env, "LINE_MEMORY_BYTES", 16 * 1024 * 1024, 0), slices: int(env, "SLICE_MEMORY_BYTES", 8 * 1024 * 1024, 0), pages: int(env, "LIST_PAGES_AT_ONCE", 4, 1) },
  };
}

/** Whether relayed objects lose `metadata.managedFields` (`STRIP_MANAGED_FIELDS`, default true): a hub's, and a read passed through. */
export function stripsManagedFields(env: Vars): boolean {
  return env.STRIP_MANAGED_FIELDS !== "false";
}

/** How long a list of a resource without watch is shared (`LIST_CACHE_SECONDS`): one upstream list per key per this long. */
export function listCacheSeconds(env: Vars): number {
  return int(env, "LIST_CACHE_SECONDS", 10, 1);
}

/** What a log hub keeps and how long (DESIGN.md, "Pod logs"). */
export interface LogSettings {
  /** Lines each log hub keeps of its log, for followers who join later (`LOG_BUFFER_LINES`). */
  bufferLines: number;
  /** Bytes of lines the log hubs of one isolate keep, all together (`LOG_MEMORY_BYTES`). */
  memoryBytes: number;
  /** How long a log hub keeps following after its last follower left (`LOG_IDLE_GRACE_SECONDS`). */
  idleGraceMs: number;
  /** How long the upstream has to answer a log's probe whole, a follow or a history with its head, and a history's next bytes (`LOG_UPSTREAM_TIMEOUT_SECONDS`). */
  upstreamTimeoutMs: number;
}

export function logSettings(env: Vars): LogSettings {
  return {
    bufferLines: int(env, "LOG_BUFFER_LINES", 1000, 0),
    memoryBytes: int(env, "LOG_MEMORY_BYTES", 16 * 1024 * 1024, 0),
    idleGraceMs: int(env, "LOG_IDLE_GRACE_SECONDS", 10, 0) * 1000,
    upstreamTimeoutMs: int(env, "LOG_UPSTREAM_TIMEOUT_SECONDS", 10, 1) * 1000,
  };
}

/** The named clusters (`cluster-entries.ts`). */
export function clusters(env: Vars): ReadonlyMap<string, ClusterEntry> {
  try {
    return parseClusters(env.CLUSTERS);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

/** Active hubs (upstream watches) a cluster may have: its `maxHubs` in CLUSTERS, else `MAX_HUBS`. */
export function maxHubs(env: Vars, cluster: string): number {
  const own = clusters(env).get(cluster)?.maxHubs;
  if (own !== undefined) {
    if (!Number.isInteger(own) || own < 1) throw new ConfigError(`CLUSTERS.${cluster}.maxHubs must be an integer >= 1`);
    return own;
  }
  return int(env, "MAX_HUBS", 100, 1);
}

/**
 * How many subscribers a key's hub serves before new ones go to replica hubs (DESIGN.md, "Hot
 * keys"): its `subscribersPerHub` in CLUSTERS, else `SUBSCRIBERS_PER_HUB`.
 */
export function subscribersPerHub(env: Vars, cluster: string): number {
  const own = clusters(env).get(cluster)?.subscribersPerHub;
  if (own !== undefined) {
    if (!Number.isInteger(own) || own < 1) throw new ConfigError(`CLUSTERS.${cluster}.subscribersPerHub must be an integer >= 1`);
    return own;
  }
  return int(env, "SUBSCRIBERS_PER_HUB", 500, 1);
}

/**
 * Of a cluster's hubs, how many one subject's requests may have started and keep watching
 * (`MAX_HUBS_PER_SUBJECT`; default a quarter of the cluster's, at least 1): one token listing
 * many selectors must not take every upstream watch the cluster allows.
 */
export function maxHubsPerSubject(env: Vars, cluster: string): number {
  return int(env, "MAX_HUBS_PER_SUBJECT", Math.max(1, Math.floor(maxHubs(env, cluster) / 4)), 1);
}

/** `LOG_LEVEL`: the least a log line must be to be written (default `info`; `debug` adds every access allowed). */
export function logLevel(env: Vars): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === "") return "info";
  const level = LOG_LEVELS.find((l) => l === raw);
  if (!level) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(raw)}`);
  return level;
}

/** A comma-separated list variable, trimmed, empties dropped. */
export function list(env: Vars, name: string, fallback: readonly string[] = []): string[] {
  const raw = env[name];
  if (typeof raw !== "string" || raw.trim() === "") return [...fallback];
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
