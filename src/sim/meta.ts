/**
 * @module
 * Object shape helpers. Built-in kinds serialise in Go struct-field order (kind, apiVersion,
 * metadata, spec, status; ObjectMeta fields in declaration order), while custom resources are
 * unstructured maps, which Go's encoder writes with sorted keys. Writes go through
 * `canonicalObject` so stored objects read like the API server's, whatever order a client sent;
 * `acceptBody` checks a body against the URL it was sent to.
 */
import { badRequest } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";

/** A JSON object (not null, not an array). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A JSON object's keys are its client's: its own properties only, read and written as data
 * (`constructor` is not a label map's constructor, and `__proto__` is a key, not its prototype).
 */
export const ownValue = (object: Record<string, unknown>, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);
export const setOwn = (object: Record<string, unknown>, key: string, value: unknown): void => void Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });

/** A request body, which must be an object whose `apiVersion` and `kind`, where given, are the ones its URL serves (else 400). */
export function acceptBody(body: unknown, apiVersion: string, kind: string): Record<string, unknown> {
  if (!isJsonObject(body)) throw new ApiError(badRequest("the request body must be a JSON object"));
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw new ApiError(badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`));
  }
  if (body.kind !== undefined && body.kind !== kind) {
    throw new ApiError(badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${kind})`));
  }
  return body;
}

/** A deep copy of a JSON object: the JSON round trip is several times faster than `structuredClone` here. */
export const copyObject = <T>(object: T): T => JSON.parse(JSON.stringify(object)) as T;

/** RFC 3339 in UTC with second precision, as `metav1.Time` marshals. */
export const timestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

// apimachinery `pkg/apis/meta/v1/types.go` ObjectMeta, in declaration order.
const OBJECT_META_ORDER = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];

function ordered(object: Record<string, unknown>, first: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of first) if (object[key] !== undefined) out[key] = object[key];
  for (const [key, value] of Object.entries(object)) if (!Object.hasOwn(out, key) && value !== undefined) setOwn(out, key, value);
  return out;
}

function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) setOwn(out, key, sortedDeep((value as Record<string, unknown>)[key]));
  return out;
}

/** The object with keys in the order the API server would write them. */
export function canonicalObject(object: KubeObject, custom: boolean): KubeObject {
  if (custom) return sortedDeep(object) as KubeObject;
  const top = ordered(object, ["kind", "apiVersion", "metadata"]);
  if (object.metadata) {
    const meta = ordered(object.metadata as Record<string, unknown>, OBJECT_META_ORDER);
    // Labels and annotations are Go maps: encoding/json writes them with sorted keys.
    if (meta.labels) meta.labels = sortedDeep(meta.labels);
    if (meta.annotations) meta.annotations = sortedDeep(meta.annotations);
    top.metadata = meta;
  }
  return top as KubeObject;
}
