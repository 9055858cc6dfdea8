/**
 * @module
 * How far the upstream has got, in one small request (DESIGN.md, invariant 8): a watch-list
 * (`sendInitialEvents=true`, `resourceVersion` unset) of the key's collection with a label
 * selector no object can match. The API server picks etcd's current revision as it takes the
 * request, waits (up to 3 s) until its watch cache has reached it, and, having no object to send,
 * answers with the initial-events-end BOOKMARK at once: by then its cache has taken every change
 * made before the request, and handed each to its watchers, the hub's own watch among them. It
 * costs the API server a watch registered and ended, and a pass of its cache's objects through
 * the selector; the relay one request. An API server without watch-lists (1.33 turned them off;
 * before 1.27 there were none) refuses or ignores the request, which says so.
 */
import { INITIAL_EVENTS_END, type Status } from "../k8s/types.ts";
import { parseEventLine } from "../k8s/event.ts";
import type { WatchKey } from "../k8s/key.ts";
import { collectionPath } from "../k8s/path.ts";
import { LineSplitter } from "../k8s/ndjson.ts";
import { isTooLargeResourceVersion } from "../k8s/status.ts";
import { objectVersion } from "../k8s/rv.ts";
import type { Clock } from "./clock.ts";
import { UpstreamError } from "./upstream-error.ts";

/** The label of the probe's selector: an object must both lack and have it, so none matches. */
export const PROBE_LABEL = "kube-watch-relay.dev/probe";

/**
 * The probe's `timeoutSeconds`: past the 3 s an API server waits for its cache before it answers
 * a watch-list 504, so one that ignores the watch-list's parameters ends the stream, which says so.
 */
export const PROBE_TIMEOUT_SECONDS = 5;

/** Past this the probe is given up as unanswered (a stream the upstream neither ends nor writes to). */
const PROBE_DEADLINE_MS = (PROBE_TIMEOUT_SECONDS + 5) * 1000;

/** The first line of the answer is a bookmark, or says why there is none: longer, it is neither. */
const LINE_CHARS = 64 * 1024;

/** Refusals that say the upstream does not take watch-lists (422: the WatchList gate is off). */
const REFUSED = new Set([400, 422]);

/** The upstream's watch cache had reached `reached`; or it serves no watch-lists, and `unsupported` says how that showed. */
export type ProbeAnswer = { reached: number } | { unsupported: string };

/** The probe's request: the key's collection (its namespace, not its selectors). */
export function probePath(key: WatchKey): string {
  const query = new URLSearchParams({
    watch: "1",
    sendInitialEvents: "true",
    resourceVersionMatch: "NotOlderThan",
    allowWatchBookmarks: "true",
    labelSelector: `!${PROBE_LABEL},${PROBE_LABEL}`,
    timeoutSeconds: String(PROBE_TIMEOUT_SECONDS),
  });
  return `${collectionPath(key)}?${query}`;
}

/**
 * Ask the upstream how far its watch cache has got. `request` is the upstream's answer to a URL, or
 * the `UpstreamError` it failed with; a failure that a later probe may not meet (unreachable, 429,
 * 5xx, a cache more than 3 s behind) is thrown.
 */
export async function probeUpstream(key: WatchKey, request: (url: string, signal: AbortSignal) => Promise<Response>, clock: Clock): Promise<ProbeAnswer> {
  const url = probePath(key);
  const abort = new AbortController();
  const started = clock.now();
  const deadline = clock.after(PROBE_DEADLINE_MS, () => abort.abort(new UpstreamError(504, `the upstream did not answer a watch-list within ${PROBE_DEADLINE_MS / 1000} s`)));
  try {
    let response: Response;
    try {
      response = await request(url, abort.signal);
    } catch (e) {
      if (e instanceof UpstreamError && REFUSED.has(e.status)) return { unsupported: e.message };
      throw e;
    }
    if (!response.body) throw new UpstreamError(502, `the upstream's watch-list ${url} has no body`);
    const reader = response.body.getReader();
    const lines = new LineSplitter(LINE_CHARS);
    for (;;) {
      const { done, value } = await reader.read().catch((e: unknown) => {
        throw abort.signal.reason instanceof UpstreamError ? abort.signal.reason : e;
      });
      if (done) {
        // At its timeout: a server that took it for a plain watch. Sooner: a connection cut.
        if (clock.now() - started >= PROBE_TIMEOUT_SECONDS * 1000) return { unsupported: `the upstream ended a watch-list ${url} at its timeout without an initial-events-end bookmark` };
        throw new UpstreamError(0, `the upstream's watch-list ${url} ended before its initial-events-end bookmark`);
      }
      let line: string | undefined;
      try {
        line = lines.push(value)[0];
      } catch {
        return { unsupported: `the upstream answered a watch-list ${url} that no object matches with a line of more than ${LINE_CHARS} characters` };
      }
      if (line !== undefined) return answerOf(line, url);
    }
  } finally {
    deadline();
    abort.abort();
  }
}

/** What the first line of the answer says. */
function answerOf(line: string, url: string): ProbeAnswer {
  const event = parseEventLine(line);
  if (!event) throw new UpstreamError(502, `malformed line in the upstream's watch-list ${url}: ${line.slice(0, 120)}`);
  if (event.type === "ERROR") {
    const status = event.object as Status;
    // Its cache more than 3 s behind, or too busy: a later probe may pass.
    if (isTooLargeResourceVersion(status) || status.code === 429) {
      throw new UpstreamError(status.code ?? 504, `upstream watch-list error: ${status.message ?? "unknown"}`, (status.details?.retryAfterSeconds ?? 0) * 1000);
    }
    // As client-go's reflector takes any other error of a watch-list: the API server does not
    // serve them (its etcd cannot tell its progress: a 500).
    return { unsupported: `the upstream answered a watch-list ${url} with ERROR ${status.code ?? ""} ${status.message ?? ""}`.trim() };
  }
  const reached = objectVersion(event.object);
  if (event.type === "BOOKMARK" && event.object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true" && reached !== undefined) return { reached };
  return { unsupported: `the upstream answered a watch-list ${url} with ${event.type}, not an initial-events-end bookmark` };
}
