/**
 * @module
 * PATCH bodies: JSON merge patch (RFC 7386, `json-merge-patch`), JSON patch (RFC 6902,
 * `fast-json-patch`) and strategic merge patch, which merges lists by the keys and strategies the
 * kind's OpenAPI schema gives (`x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy`:
 * containers by name, ports by containerPort, env by name...) and reads the directives kubectl
 * writes: `$patch` (replace, delete, merge), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
 * `$setElementOrder/<field>` (apimachinery `strategicpatch`). None modifies what it is given.
 */
import jsonPatchLibrary, { type Operation } from "fast-json-patch";
import jsonMergePatch from "json-merge-patch";
import { badRequest, failure } from "../k8s/status.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject as isObject } from "./meta.ts";
import { resolved, type Schema } from "./schemas.ts";

type JsonObject = Record<string, unknown>;

/** RFC 7386: `null` removes a key, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  return jsonMergePatch.apply(structuredClone(target), patch);
}

const rejected = (message: string): ApiError => new ApiError(failure(422, "Invalid", `the server rejected our request due to an error in our request: ${message}`));

/** RFC 6902 on a copy of `doc`. The root itself cannot be replaced. */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError(badRequest("invalid JSON patch: the body must be an array of operations"));
  for (const op of ops) {
    if (!isObject(op)) throw new ApiError(badRequest("invalid JSON patch: each operation must be an object"));
    if (op.path === "") throw rejected("the root of the object cannot be patched");
  }
  try {
    return jsonPatchLibrary.applyPatch(doc, ops as Operation[], true, false).newDocument;
  } catch (e) {
    if (!(e instanceof jsonPatchLibrary.JsonPatchError)) throw e;
    const where = isObject(e.operation) ? ` (${String(e.operation.op)} ${String(e.operation.path)})` : "";
    const message = `${e.message.split("\n")[0]}${where}`;
    // A malformed operation is the client's syntax; one that does not apply to this object is 422, as the API server says.
    throw e.name.startsWith("OPERATION_") && e.name !== "OPERATION_PATH_UNRESOLVABLE" && e.name !== "OPERATION_PATH_CANNOT_ADD" && e.name !== "OPERATION_FROM_UNRESOLVABLE"
      ? new ApiError(badRequest(`invalid JSON patch: ${message}`))
      : rejected(message);
  }
}

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM = "$deleteFromPrimitiveList/";
const ELEMENT_ORDER = "$setElementOrder/";

/** The schema of `key`'s value in an object described by `schema`: a property, or a map's values. */
function fieldSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (!schema) return undefined;
  const property = schema.properties?.[key];
  if (property) return property;
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

const strategy = (schema: Schema | undefined): string[] => (schema?.["x-kubernetes-patch-strategy"] ?? "").split(",");

/** A patch value with its directives applied to nothing (what a field that was absent becomes). */
const fresh = (patch: unknown, schema: Schema | undefined): unknown =>
  isObject(patch) ? mergeObject({}, patch, resolved(schema)) : Array.isArray(patch) ? patch.filter((p) => !(isObject(p) && p[DIRECTIVE])).map((p) => fresh(p, resolved(schema)?.items)) : patch;

function mergeObject(original: JsonObject, patch: JsonObject, schema: Schema | undefined): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive === "replace") {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return fresh(rest, schema) as JsonObject;
  }
  if (directive !== undefined && directive !== "merge") throw new ApiError(badRequest(`invalid strategic merge patch: unknown $patch directive ${JSON.stringify(directive)} in a map`));
  const out: JsonObject = { ...original };
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new ApiError(badRequest("invalid strategic merge patch: $retainKeys must be a list of field names"));
    for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  }
  const orders: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS) continue;
    if (key.startsWith(ELEMENT_ORDER)) {
      orders.push([key.slice(ELEMENT_ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      const current = out[field];
      if (Array.isArray(current) && Array.isArray(value)) out[field] = current.filter((v) => !value.includes(v));
      continue;
    }
    const schemaOf = fieldSchema(schema, key);
    if (value === null) delete out[key];
    else if (isObject(value)) {
      if (value[DIRECTIVE] === "delete") delete out[key];
      else out[key] = isObject(out[key]) ? mergeObject(out[key] as JsonObject, value, resolved(schemaOf)) : fresh(value, schemaOf);
    } else if (Array.isArray(value)) out[key] = mergeList(Array.isArray(out[key]) ? (out[key] as unknown[]) : [], value, schemaOf);
    else out[key] = value;
  }
  for (const [field, order] of orders) {
    const list = out[field];
    if (Array.isArray(list) && Array.isArray(order)) out[field] = reorder(list, order, fieldSchema(schema, field)?.["x-kubernetes-patch-merge-key"]);
  }
  return out;
}

/** A list: merged by its merge key, or as a set of primitives, where the schema says merge; otherwise replaced. */
function mergeList(original: unknown[], patch: unknown[], schema: Schema | undefined): unknown[] {
  const items = resolved(schema)?.items;
  if (!strategy(schema).includes("merge")) return fresh(patch, schema) as unknown[];
  if (patch.some((p) => isObject(p) && p[DIRECTIVE] === "replace")) return fresh(patch, schema) as unknown[];
  const key = schema?.["x-kubernetes-patch-merge-key"];
  if (key === undefined) return [...original, ...patch.filter((p) => !original.includes(p))];
  const out = [...original];
  const itemSchema = resolved(items);
  for (const element of patch) {
    if (!isObject(element)) throw new ApiError(badRequest(`invalid strategic merge patch: a list merged by ${key} holds objects`));
    const at = out.findIndex((o) => isObject(o) && o[key] === element[key]);
    if (element[DIRECTIVE] === "delete") {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = mergeObject(out[at] as JsonObject, element, itemSchema);
    else out.push(fresh(element, items));
  }
  return out;
}

/** `$setElementOrder`: the listed elements in the listed order, then any others as they were. */
function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (v: unknown) => (key !== undefined && isObject(v) ? v[key] : v);
  const rank = new Map(order.map((o, i) => [id(o), i]));
  return [...list].sort((a, b) => (rank.get(id(a)) ?? order.length) - (rank.get(id(b)) ?? order.length));
}

/** Strategic merge patch of `target` (an object of the kind `schema` describes; without one, maps merge and lists are replaced). */
export function strategicMergePatch(target: unknown, patch: unknown, schema: Schema | undefined): unknown {
  if (!isObject(patch)) throw new ApiError(badRequest("invalid strategic merge patch: the body must be a JSON object"));
  return mergeObject(isObject(target) ? target : {}, patch, schema);
}
