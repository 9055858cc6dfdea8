/**
 * @module
 * Structured logs: one JSON object per line, so `wrangler tail` and Workers Logs can filter by
 * field. Never pass tokens or request headers here.
 */

export type Log = (message: string, fields?: Record<string, unknown>) => void;

export function logger(scope: Record<string, unknown>): Log {
  return (message, fields) => console.log(JSON.stringify({ msg: message, ...scope, ...fields }));
}
