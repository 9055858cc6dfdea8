/**
 * @module
 * The relay's delta frame, for subscribers that offer `delta.watch.kube-watch-relay.dev`: a
 * MODIFIED of an object the subscriber already has, as an RFC 7386 JSON merge patch against
 * the version it has.
 *
 *   {"type":"MODIFIED","target":{"namespace":"ns","name":"web-1","resourceVersion":"41"},"patch":{…}}\n
 *
 * `target` names the object and the version the patch applies to (a resourceVersion names one
 * version of one object, so no uid is needed); applied to that version, the patch gives the new
 * one (its `metadata.resourceVersion` included). A line with `target`
 * and `patch` and no `object` is a delta; every other line is an ordinary watch event.
 */
import { apply, generate } from "json-merge-patch";
import type { KubeObject } from "./types.ts";

/** How every delta line starts: its type, then its target (a reader may tell a delta by this alone). */
export const DELTA_HEAD = '{"type":"MODIFIED","target":';

export interface DeltaTarget {
  namespace?: string | undefined;
  name: string;
  /** The version the patch applies to. */
  resourceVersion: string;
}

export interface Delta {
  type: "MODIFIED";
  target: DeltaTarget;
  patch: unknown;
}

/** The delta line turning `before` into `after` (one object's consecutive versions), or `undefined` when it would not be shorter than `full`. */
export function deltaLine(before: KubeObject, after: KubeObject, full: string): string | undefined {
  const { namespace, name, resourceVersion } = before.metadata ?? {};
  if (!name || !resourceVersion) return undefined;
  const target: DeltaTarget = namespace ? { namespace, name, resourceVersion } : { name, resourceVersion };
  const line = `${DELTA_HEAD}${JSON.stringify(target)},"patch":${JSON.stringify(generate(before, after) ?? {})}}\n`;
  return line.length < full.length ? line : undefined;
}

/** A delta line read back, or `undefined` if `line` is an ordinary event. */
export function parseDelta(line: string): Delta | undefined {
  if (!line.includes('"target"')) return undefined;
  try {
    const parsed = JSON.parse(line) as Partial<Delta> & { object?: unknown };
    if (parsed.type !== "MODIFIED" || parsed.object !== undefined || typeof parsed.target?.name !== "string" || typeof parsed.target.resourceVersion !== "string") return undefined;
    return parsed as Delta;
  } catch {
    return undefined;
  }
}

/** The new version: `patch` applied to a copy of `current` (which is left as it was). */
export function applyDelta<T>(current: T, delta: Delta): T {
  return apply(structuredClone(current), delta.patch) as T;
}
