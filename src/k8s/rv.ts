/**
 * @module
 * resourceVersion handling. The API server treats RVs as opaque strings on the wire but parses
 * them as uint64 (apiserver `pkg/storage/api_object_versioner.go`); `""` and `"0"` both mean
 * "any". Here they are plain numbers: etcd revisions stay far below 2^53, and a larger value
 * can only be ahead of every cache, so it compares as `Number.MAX_VALUE` (which, unlike
 * `Infinity`, survives JSON).
 */

/** A parsed `resourceVersion` query parameter. */
export type RequestedVersion = { kind: "unset" } | { kind: "zero" } | { kind: "exact"; rv: number };

export class ResourceVersionError extends Error {}

const UINT = /^[0-9]+$/;
const MAX_UINT64 = 18446744073709551615n;

/** Parse a `resourceVersion` parameter; throws `ResourceVersionError` with the API server's text. */
export function parseRequestedVersion(value: string | null | undefined): RequestedVersion {
  if (value === null || value === undefined || value === "") return { kind: "unset" };
  if (!UINT.test(value) || BigInt(value) > MAX_UINT64) {
    throw new ResourceVersionError(`invalid resource version: ${JSON.stringify(value)}`);
  }
  const rv = Number(value);
  if (rv === 0) return { kind: "zero" };
  return { kind: "exact", rv: Number.isSafeInteger(rv) ? rv : Number.MAX_VALUE };
}

/** The numeric RV of an object's `metadata.resourceVersion`, or `undefined` if it has none. */
export function objectVersion(object: { metadata?: { resourceVersion?: string } } | undefined): number | undefined {
  const value = object?.metadata?.resourceVersion;
  if (value === undefined || !UINT.test(value)) return undefined;
  return Number(value);
}
