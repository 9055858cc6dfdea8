/**
 * @module
 * Watch event lines as the API server writes them: `{"type":T,"object":O}\n`, one per line
 * (apiserver `WatchServer`, `json.Encoder.Encode`). Objects are passed pre-serialised so a
 * relay serialises each event once, however many subscribers receive it.
 */
import type { Status, WatchEvent, WatchEventType } from "./types.ts";
import { INITIAL_EVENTS_END, WATCH_EVENT_TYPES } from "./types.ts";

/** What every line of a type begins with, made once: lines are written and read per event. */
const PREFIX: Readonly<Record<WatchEventType, string>> = {
  ADDED: '{"type":"ADDED","object":',
  MODIFIED: '{"type":"MODIFIED","object":',
  DELETED: '{"type":"DELETED","object":',
  BOOKMARK: '{"type":"BOOKMARK","object":',
  ERROR: '{"type":"ERROR","object":',
};

/** One event line; `objectJson` is the object's JSON text. */
export const eventLine = (type: WatchEventType, objectJson: string): string => `${PREFIX[type]}${objectJson}}\n`;

/**
 * The object's JSON text in a line `eventLine` wrote, or `undefined` for a line of another
 * shape: what a hub reading another hub's lines stores, rather than serialise the object again.
 * Only for lines a relay hub wrote: other writers may add fields after the object.
 */
export function objectJsonOf(line: string, type: WatchEventType): string | undefined {
  const prefix = PREFIX[type];
  return line.startsWith(prefix) && line.endsWith("}") ? line.slice(prefix.length, -1) : undefined;
}

/**
 * A BOOKMARK: an empty object of the watched kind carrying only the resourceVersion
 * (apiserver `cacher.go`), optionally marking the end of `sendInitialEvents`.
 */
export function bookmarkLine(kind: string, apiVersion: string, rv: number, initialEventsEnd = false, annotations?: Record<string, string>): string {
  const all = initialEventsEnd ? { ...annotations, [INITIAL_EVENTS_END]: "true" } : annotations;
  const metadata = all ? { resourceVersion: String(rv), annotations: all } : { resourceVersion: String(rv) };
  return eventLine("BOOKMARK", JSON.stringify({ kind, apiVersion, metadata }));
}

/** An in-stream error: the API server's way to fail a watch that has already started. */
export const errorLine = (status: Status): string => eventLine("ERROR", JSON.stringify(status));

/** A watch event line read back: `undefined` unless it is JSON with a known type and an object. */
export function parseEventLine<T = WatchEvent["object"]>(line: string): WatchEvent<T> | undefined {
  try {
    const event = JSON.parse(line) as WatchEvent<T>;
    if (typeof event !== "object" || event === null || !WATCH_EVENT_TYPES.has(event.type) || typeof event.object !== "object" || event.object === null) return undefined;
    return event;
  } catch {
    return undefined;
  }
}
