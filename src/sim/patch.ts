/**
 * @module
 * PATCH bodies: JSON merge patch (RFC 7386, `k8s/merge-patch.ts`), JSON patch (RFC 6902; written
 * here, not taken from `fast-json-patch`, which refuses `__proto__` with an error of its own and
 * finds a `constructor` every object inherits, where the API server sees ordinary keys) and
 * strategic merge patch, which merges lists by the keys and strategies the
 * kind's OpenAPI schema gives (`x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy`:
 * containers by name, ports by containerPort, env by name...) and reads the directives kubectl
 * writes: `$patch` (replace, delete, merge), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
 * `$setElementOrder/<field>` (apimachinery `strategicpatch`). None modifies what it is given.
 */
import { applyMergePatch } from "../k8s/merge-patch.ts";
import { badRequest, failure } from "../k8s/status.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject as isObject, ownValue, setOwn } from "./meta.ts";
import { resolved, type Schema } from "./schemas.ts";

type JsonObject = Record<string, unknown>;

/** RFC 7386 (`k8s/merge-patch.ts`: every key an object's own, `constructor` and `__proto__` too). */
export const mergePatch = applyMergePatch;

const rejected = (message: string): ApiError => new ApiError(failure(422, "Invalid", `the server rejected our request due to an error in our request: ${message}`));

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/"))) {
    throw new ApiError(badRequest(`invalid JSON patch: "${String(pointer)}" is not a JSON pointer`));
  }
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The container that holds the last segment of `path`, and that segment. */
function locate(doc: unknown, path: string[]): { parent: Record<string, unknown> | unknown[]; key: string } {
  let node: unknown = doc;
  for (const segment of path.slice(0, -1)) {
    node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? ownValue(node, segment) : undefined;
    if (node === undefined) throw rejected(`path /${path.join("/")} does not exist`);
  }
  const key = path[path.length - 1];
  if (key === undefined || (!Array.isArray(node) && !isObject(node))) throw rejected(`cannot address /${path.join("/")}`);
  return { parent: node, key };
}

function read(doc: unknown, path: string[]): unknown {
  if (path.length === 0) return doc;
  const { parent, key } = locate(doc, path);
  const value = Array.isArray(parent) ? parent[Number(key)] : ownValue(parent, key);
  if (value === undefined) throw rejected(`path /${path.join("/")} does not exist`);
  return value;
}

function remove(doc: unknown, path: string[]): void {
  const { parent, key } = locate(doc, path);
  if (Array.isArray(parent)) {
    if (Number(key) >= parent.length) throw rejected(`path /${path.join("/")} does not exist`);
    parent.splice(Number(key), 1);
  } else {
    if (!Object.hasOwn(parent, key)) throw rejected(`path /${path.join("/")} does not exist`);
    delete parent[key];
  }
}

function add(doc: unknown, path: string[], value: unknown, replace: boolean): void {
  const { parent, key } = locate(doc, path);
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw rejected(`index ${key} is out of range`);
    parent.splice(index, replace ? 1 : 0, value);
  } else {
    if (replace && !Object.hasOwn(parent, key)) throw rejected(`path /${path.join("/")} does not exist`);
    setOwn(parent, key, value);
  }
}

/** RFC 6902 on a copy of `doc`. The root itself cannot be replaced. */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError(badRequest("invalid JSON patch: the body must be an array of operations"));
  const out = structuredClone(doc);
  for (const op of ops) {
    if (!isObject(op)) throw new ApiError(badRequest("invalid JSON patch: each operation must be an object"));
    const path = parsePointer(op.path);
    if (path.length === 0) throw rejected("the root of the object cannot be patched");
    switch (op.op) {
      case "add":
        add(out, path, structuredClone(op.value), false);
        break;
      case "replace":
        add(out, path, structuredClone(op.value), true);
        break;
      case "remove":
        remove(out, path);
        break;
      case "move":
      case "copy": {
        const from = parsePointer(op.from);
        const value = structuredClone(read(out, from));
        if (op.op === "move") remove(out, from);
        add(out, path, value, false);
        break;
      }
      case "test":
        if (JSON.stringify(read(out, path)) !== JSON.stringify(op.value)) throw rejected(`testing value ${String(op.path)} failed: test failed`);
        break;
      default:
        throw new ApiError(badRequest(`invalid JSON patch: unknown operation ${JSON.stringify(op.op)}`));
    }
  }
  return out;
}

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM = "$deleteFromPrimitiveList/";
const ELEMENT_ORDER = "$setElementOrder/";

/** The schema of `key`'s value in an object described by `schema`: a property, or a map's values. */
function fieldSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (!schema) return undefined;
  const property = schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
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
      const current = ownValue(out, field);
      if (Array.isArray(current) && Array.isArray(value))
        setOwn(
          out,
          field,
          current.filter((v) => !value.includes(v)),
        );
      continue;
    }
    // Keys are the object's own, whatever their names (`__proto__` is a key like any other).
    const schemaOf = fieldSchema(schema, key);
    const current = ownValue(out, key);
    if (value === null) delete out[key];
    else if (isObject(value)) {
      if (value[DIRECTIVE] === "delete") delete out[key];
      else setOwn(out, key, isObject(current) ? mergeObject(current, value, resolved(schemaOf)) : fresh(value, schemaOf));
    } else if (Array.isArray(value)) setOwn(out, key, mergeList(Array.isArray(current) ? current : [], value, schemaOf));
    else setOwn(out, key, value);
  }
  for (const [field, order] of orders) {
    const list = ownValue(out, field);
    if (Array.isArray(list) && Array.isArray(order)) setOwn(out, field, reorder(list, order, fieldSchema(schema, field)?.["x-kubernetes-patch-merge-key"]));
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
