/**
 * @module
 * The OpenAPI v3 schemas of the kinds the simulator serves (`openapi-schemas.json`, made by
 * `npm run sim:schemas`, and the `Widget` custom resource's structural schema), and how to walk
 * them: a kind's schema by group/version/kind, a field's schema with its references resolved.
 * `openapi.ts` publishes them; strategic merge patch reads their patch strategies and merge keys,
 * and field validation their properties.
 */
import { readFileSync } from "node:fs";
import type { ApiResource } from "./resources.ts";

export type Schema = {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  "x-kubernetes-group-version-kind"?: Array<{ group: string; kind: string; version: string }>;
  "x-kubernetes-patch-strategy"?: string;
  "x-kubernetes-patch-merge-key"?: string;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
} & Record<string, unknown>;

const REF = "#/components/schemas/";
const META = `${REF}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;

/** A custom resource's schema as the API server publishes it from its CRD's structural schema. */
const WIDGET: Schema = {
  type: "object",
  description: "A Widget, the simulated cluster's custom resource (widgets.example.com).",
  properties: {
    apiVersion: { type: "string", description: "APIVersion defines the versioned schema of this representation of an object." },
    kind: { type: "string", description: "Kind is a string value representing the REST resource this object represents." },
    metadata: { allOf: [{ $ref: META }], description: "Standard object's metadata." },
    spec: {
      type: "object",
      description: "What the widget should be.",
      properties: { color: { type: "string", description: "red, green or blue." }, size: { type: "integer", format: "int64", description: "From 1 to 10." } },
    },
    status: { type: "object", description: "What the widget is.", properties: { phase: { type: "string", description: "Ready once made." } } },
  },
  "x-kubernetes-group-version-kind": [{ group: "example.com", kind: "Widget", version: "v1" }],
};

/** Every schema, by the name `$ref` uses. */
export const SCHEMAS: Readonly<Record<string, Schema>> = {
  ...(JSON.parse(readFileSync(new URL("./openapi-schemas.json", import.meta.url), "utf8")) as Record<string, Schema>),
  "com.example.v1.Widget": WIDGET,
};

const byKind = new Map<string, string>();
for (const [name, schema] of Object.entries(SCHEMAS)) {
  for (const gvk of schema["x-kubernetes-group-version-kind"] ?? []) byKind.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, name);
}

/** The name of a kind's schema (`io.k8s.api.apps.v1.Deployment`), if the simulator has it. */
export const schemaNameOf = (group: string, version: string, kind: string): string | undefined => byKind.get(`${group}/${version}/${kind}`);

/** The schema of a served resource's kind. */
export function kindSchema(r: Pick<ApiResource, "group" | "version" | "kind">): Schema | undefined {
  const name = schemaNameOf(r.group, r.version, r.kind);
  return name === undefined ? undefined : SCHEMAS[name];
}

/** `schema` with a reference (bare, or the API server's single-element `allOf`) replaced by what it names; its own extensions stay. */
export function resolved(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const target = schema.$ref ?? (schema.allOf?.length === 1 && !schema.properties ? schema.allOf[0]?.$ref : undefined);
  if (target === undefined) return schema;
  return { ...SCHEMAS[target.slice(REF.length)], ...pick(schema) };
}

/** A field's patch extensions, kept when its reference is resolved. */
function pick(schema: Schema): Schema {
  const out: Schema = {};
  for (const key of ["x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key"] as const) if (schema[key] !== undefined) out[key] = schema[key];
  return out;
}

/** The names of the schemas `names` reference, directly or not, themselves included. */
export function closure(names: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== "object") return;
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string") add(v.slice(REF.length));
      else visit(v);
    }
  };
  const add = (name: string): void => {
    if (seen.has(name) || !SCHEMAS[name]) return;
    seen.add(name);
    visit(SCHEMAS[name]);
  };
  for (const name of names) add(name);
  return seen;
}

export const schemaRef = (name: string): Schema => ({ $ref: `${REF}${name}` });
