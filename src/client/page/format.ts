/**
 * @module
 * Text for the page: ages as `kubectl get` prints them (apimachinery `duration.HumanDuration`)
 * and short times for the event log.
 */
import { humanDuration } from "../../k8s/table.ts";
import type { Resumed, WatchError } from "../index.ts";

/** How long ago `createdAt` was, as `kubectl get` prints an AGE. */
export const age = (createdAt: string | undefined, now = Date.now()): string => (createdAt ? humanDuration(now - Date.parse(createdAt)) : "");

/** `14:03:07` in the viewer's locale. */
export const clock = (date = new Date()): string => date.toLocaleTimeString(undefined, { hour12: false });

export const plural = (n: number, word: string, words = `${word}s`): string => `${n.toLocaleString()} ${n === 1 ? word : words}`;

/** `in 0.4 s`, `now`. */
export const after = (ms: number): string => (ms <= 0 ? "now" : `in ${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);

/** What a resume took: `12 changes, 18 KB, 40 ms`. */
export const resumeCost = (resumed: Resumed): string => {
  const size = resumed.bytes < 1024 ? `${resumed.bytes} B` : `${(resumed.bytes / 1024).toFixed(resumed.bytes < 10_240 ? 1 : 0)} KB`;
  return `${plural(resumed.replayed, "change")}, ${size}, ${resumed.ms} ms`;
};

/**
 * A failure as the page shows it, in one place: the relay's own Status (`403 Forbidden: pods is
 * forbidden: …`), or, when there is none, the client's message with each URL cut to its path.
 */
export function failure(error: WatchError): string {
  const status = error.status;
  if (status) {
    const reason = status.reason ?? "Failure";
    const message = (status.message ?? "").replace(new RegExp(`^${reason}: `), "");
    return `${status.code ?? error.code ?? ""} ${reason}${message ? `: ${message}` : ""}`.trim();
  }
  return error.message.replace(/\b(?:https?|wss?):\/\/[^\s)]+/g, (url) => {
    try {
      const parsed = new URL(url);
      return parsed.pathname + parsed.search;
    } catch {
      return url;
    }
  });
}

/** The same, in a few words, for the log: `403 Forbidden`. */
export const failureBrief = (error: WatchError): string =>
  error.status ? `${error.status.code ?? error.code} ${error.status.reason ?? "Failure"}` : error.code ? `HTTP ${error.code}` : "unreachable";

/** In a word, for the header: `403`, `unreachable`. */
export const failureCode = (error: WatchError): string => String(error.status?.code ?? error.code ?? "unreachable");
