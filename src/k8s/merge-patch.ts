/**
 * @module
 * JSON merge patch (RFC 7386): applying one, and making one from two versions of an object.
 * Written here because `json-merge-patch` treats keys such as `constructor` and `__proto__` as
 * its own business: its `apply` stops at the first such key and drops the rest of that object's
 * changes, and its `generate` sets `__proto__` on the patch object instead of writing it. In
 * Kubernetes they are ordinary keys (a label may be named `constructor`), so every key here is
 * read and written as an object's own property.
 */

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `object[key]` when it is the object's own, else `undefined`. */
const own = (object: JsonObject, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);

/** Set `key` as the object's own property, whatever its name (`__proto__` included). */
function setOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/** `patch` applied to `target`: `null` removes a key, objects merge recursively, anything else replaces. Neither is modified. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = {};
  if (isObject(target)) for (const key of Object.keys(target)) setOwn(out, key, target[key]);
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(own(out, key), value));
  }
  return out;
}

const SAME = Symbol("same");
const UNSAYABLE = Symbol("unsayable");

/**
 * The merge patch that turns the object `before` into `after` (`{}` when they are equal), or
 * `undefined` when no merge patch can: a `null` inside an object of `after` that the patch would
 * carry reads as "remove" (RFC 7386), so the patch would not give `after` back.
 */
export function mergePatchBetween(before: JsonObject, after: JsonObject): JsonObject | undefined {
  const patch = diff(before, after);
  return patch === UNSAYABLE ? undefined : patch === SAME ? {} : (patch as JsonObject);
}

function diff(before: unknown, after: unknown): unknown {
  if (!isObject(before) || !isObject(after)) return jsonEqual(before, after) ? SAME : carried(after);
  const patch: JsonObject = {};
  let changed = false;
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) {
      setOwn(patch, key, null);
      changed = true;
    }
  }
  for (const key of Object.keys(after)) {
    const sub = Object.hasOwn(before, key) ? diff(before[key], after[key]) : carried(after[key]);
    if (sub === UNSAYABLE) return UNSAYABLE;
    if (sub !== SAME) {
      setOwn(patch, key, sub);
      changed = true;
    }
  }
  return changed ? patch : SAME;
}

/** `value` as a patch carries it whole, unless an object in it holds a `null` (which the patch would read as "remove"). */
function carried(value: unknown): unknown {
  if (value === null) return UNSAYABLE;
  if (isObject(value)) for (const key of Object.keys(value)) if (value[key] === null || (isObject(value[key]) && carried(value[key]) === UNSAYABLE)) return UNSAYABLE;
  return value;
}

/** Whether two JSON values are equal (objects by their own keys, in any order). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
