/**
 * @module
 * The relay's delta frame, for subscribers that offer `delta.watch.kube-watch-relay.dev`: a
 * MODIFIED of an object the subscriber already has, as an RFC 7386 JSON merge patch against
 * the version it has.
 *
 *   {"type":"MODIFIED","base":"41","patch":{…}}\n
 *
 * `base` is the resourceVersion of the version the patch applies to. A resourceVersion names
 * one version of one object in a collection (the relay's window rests on that already), so it
 * also names the object: a frame needs neither its name nor its namespace, which on a pod's
 * status update are a tenth of the line. Applied to that version, the patch gives the new one
 * (its `metadata.resourceVersion` included). A line that starts `{"type":"MODIFIED","base":`
 * is a delta; every other line is an ordinary watch event.
 */
import { applyMergePatch, mergePatchBetween } from "./merge-patch.ts";
import type { KubeObject } from "./types.ts";

/** How every delta line starts: its type, then its base (a reader tells a delta by this alone). */
const DELTA_HEAD = '{"type":"MODIFIED","base":';

export interface Delta {
  type: "MODIFIED";
  /** The resourceVersion of the version the patch applies to. */
  base: string;
  patch: unknown;
}

/** The delta line turning `before` into `after` (one object's consecutive versions), or `undefined` when it would not be shorter than `full`, or no merge patch says it. */
export function deltaLine(before: KubeObject, after: KubeObject, full: string): string | undefined {
  const base = before.metadata?.resourceVersion;
  if (!base) return undefined;
  const patch = mergePatchBetween(before as Record<string, unknown>, after as Record<string, unknown>);
  if (patch === undefined) return undefined;
  const line = `${DELTA_HEAD}${JSON.stringify(base)},"patch":${JSON.stringify(patch)}}\n`;
  return line.length < full.length ? line : undefined;
}

/** A delta line read back, or `undefined` if `line` is an ordinary event. */
export function parseDelta(line: string): Delta | undefined {
  if (!line.startsWith(DELTA_HEAD)) return undefined;
  try {
    const parsed = JSON.parse(line) as Partial<Delta> & { object?: unknown };
    if (parsed.type !== "MODIFIED" || parsed.object !== undefined || typeof parsed.base !== "string" || !("patch" in parsed)) return undefined;
    return parsed as Delta;
  } catch {
    return undefined;
  }
}

/** The new version: `patch` applied to a copy of `current` (which is left as it was). */
export function applyDelta<T>(current: T, delta: Delta): T {
  return applyMergePatch(current, delta.patch) as T;
}
