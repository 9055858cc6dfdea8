/**
 * @module
 * PATCH bodies: JSON merge patch (RFC 7386) and JSON patch (RFC 6902). Strategic merge patch
 * is applied as a merge patch: lists are replaced rather than merged by key, which is enough
 * for `kubectl label/annotate/patch` on the simulator's objects.
 */
import { badRequest, failure } from "../k8s/status.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject as isObject, ownValue, setOwn } from "./meta.ts";

/** RFC 7386: `null` removes a key, objects merge recursively, anything else replaces. `target` is not modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, mergePatch(ownValue(out, key), value));
  }
  return out;
}

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
        if (JSON.stringify(read(out, path)) !== JSON.stringify(op.value)) throw rejected(`test failed at ${String(op.path)}`);
        break;
      default:
        throw new ApiError(badRequest(`invalid JSON patch: unknown operation ${JSON.stringify(op.op)}`));
    }
  }
  return out;
}
