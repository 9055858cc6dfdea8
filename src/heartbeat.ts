/**
 * @module
 * The hub's heartbeat and the stream renewal it carries, in a module of their own (no imports)
 * so that the hub, the metrics registry, the quotas and the deploy check share one figure.
 */

/** Workers evict an object that does nothing for 70-140 s: an active hub beats more often. */
export const HEARTBEAT_MS = 30_000;

/** `WATCH_RENEW_SECONDS` unset: an upstream stream older than this is renewed by the heartbeat. */
export const DEFAULT_WATCH_RENEW_SECONDS = 240;
