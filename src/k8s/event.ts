/**
 * @module
 * Watch event lines as the API server writes them: `{"type":T,"object":O}\n`, one per line
 * (apiserver `WatchServer`, `json.Encoder.Encode`). Objects are passed pre-serialised so a
 * relay serialises each event once, however many subscribers receive it.
 */
import type { Status, WatchEventType } from "./types.ts";
import { INITIAL_EVENTS_END } from "./types.ts";

/** One event line; `objectJson` is the object's JSON text. */
export const eventLine = (type: WatchEventType, objectJson: string): string =>
  `{"type":"${type}","object":${objectJson}}\n`;

/**
 * A BOOKMARK: an empty object of the watched kind carrying only the resourceVersion
 * (apiserver `cacher.go`), optionally marking the end of `sendInitialEvents`.
 */
export function bookmarkLine(kind: string, apiVersion: string, rv: number, initialEventsEnd = false): string {
  const metadata = initialEventsEnd
    ? { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END]: "true" } }
    : { resourceVersion: String(rv) };
  return eventLine("BOOKMARK", JSON.stringify({ kind, apiVersion, metadata }));
}

/** An in-stream error: the API server's way to fail a watch that has already started. */
export const errorLine = (status: Status): string => eventLine("ERROR", JSON.stringify(status));
