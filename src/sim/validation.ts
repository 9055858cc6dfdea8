/**
 * @module
 * Server-side field validation (`?fieldValidation=`, which kubectl sends as `Strict` since the
 * simulator's OpenAPI says it may): the fields of an object its kind's schema does not know, by
 * path (`spec.replica`, `spec.template.spec.containers[0].imagePullPolicyy`), refused with the API
 * server's 400 under `Strict`, and sent back as `Warning` headers under `Warn`.
 */
import { badRequest } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject } from "./meta.ts";
import { resolved, type Schema } from "./schemas.ts";

export type FieldValidation = "Ignore" | "Warn" | "Strict";

/** The `fieldValidation` parameter: absent is `Ignore` (what the simulator did before it validated). */
export function parseFieldValidation(query: URLSearchParams): FieldValidation {
  const value = query.get("fieldValidation");
  if (value === null || value === "") return "Ignore";
  if (value === "Ignore" || value === "Warn" || value === "Strict") return value;
  throw new ApiError(badRequest(`fieldValidation must be one of Ignore, Warn or Strict, not ${JSON.stringify(value)}`));
}

/** Paths of the fields in `value` that `schema` does not describe. */
export function unknownFields(value: unknown, schema: Schema | undefined, path = ""): string[] {
  const s = resolved(schema);
  if (!s || s["x-kubernetes-preserve-unknown-fields"]) return [];
  if (Array.isArray(value)) return s.items ? value.flatMap((v, i) => unknownFields(v, s.items, `${path}[${i}]`)) : [];
  if (!isJsonObject(value)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const property = s.properties?.[key] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
    if (property) out.push(...unknownFields(v, property, at));
    else if (s.properties && s.additionalProperties === undefined) out.push(at);
  }
  return out;
}

/** Apply `mode` to `object`: throw under Strict, or return the warnings to send under Warn. */
export function validateFields(object: KubeObject, schema: Schema | undefined, mode: FieldValidation): string[] {
  if (mode === "Ignore" || !schema) return [];
  const unknown = unknownFields(object, schema);
  if (unknown.length === 0) return [];
  if (mode === "Warn") return unknown.map((f) => `unknown field "${f}"`);
  const version = object.apiVersion?.split("/").at(-1) ?? "v1";
  throw new ApiError(badRequest(`${object.kind} in version "${version}" cannot be handled as a ${object.kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(", ")}`));
}
