/**
 * @module
 * Typed settings from the Worker's variables. Numbers fall back to their defaults when unset;
 * a malformed value is a configuration error that names the variable.
 */
import type { Env } from "./env.ts";

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
}

function int(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

export function hubSettings(env: Env): HubSettings {
  return {
    windowEvents: int(env, "WINDOW_EVENTS", 10_000, 1),
    windowBytes: int(env, "WINDOW_BYTES", 32 * 1024 * 1024, 1024),
    subscriberBudget: int(env, "SUBSCRIBER_BUDGET_BYTES", 4 * 1024 * 1024, 1024),
    bookmarkIntervalMs: int(env, "BOOKMARK_INTERVAL_SECONDS", 60, 1) * 1000,
    upstreamStallMs: int(env, "UPSTREAM_STALL_SECONDS", 120, 1) * 1000,
    idleGraceMs: int(env, "IDLE_GRACE_SECONDS", 60, 0) * 1000,
  };
}

/** A comma-separated list variable, trimmed, empties dropped. */
export function list(env: Env, name: string, fallback: readonly string[] = []): string[] {
  const raw = env[name];
  if (typeof raw !== "string" || raw.trim() === "") return [...fallback];
  return raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
}
