/**
 * @module
 * Structured logs: one JSON object per line, so `wrangler tail` and Workers Logs can filter by
 * field, each with its time (ISO 8601, `time`) and level (`level`). Lines below the isolate's
 * level (`LOG_LEVEL`, `info` by default) are dropped: a relay that logged every decision it
 * allows would log a line per request. Never pass tokens or request headers here.
 */

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A line: `level` is `info` unless said otherwise. */
export type Log = (message: string, fields?: Record<string, unknown>, level?: LogLevel) => void;

/** What the isolate logs from: set from `LOG_LEVEL` by whatever the runtime enters first (the Worker, a Durable Object). */
let threshold = LOG_LEVELS.indexOf("info");

export function setLogLevel(level: LogLevel): void {
  threshold = LOG_LEVELS.indexOf(level);
}

/** The runtime's console method for each level, which is how Workers Logs and `npm start` tell them apart. */
const WRITE: Record<LogLevel, (line: string) => void> = {
  debug: (line) => console.debug(line),
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

export function logger(scope: Record<string, unknown>): Log {
  return (message, fields, level = "info") => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    WRITE[level](JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...scope, ...fields }));
  };
}
