/**
 * @module
 * `npm run sim:schemas`: writes `src/sim/openapi-schemas.json`, the OpenAPI v3 schemas of the
 * kinds the simulator serves, as the API server publishes them (`io.k8s.api.core.v1.PodSpec`,
 * `allOf` references carrying descriptions, `x-kubernetes-group-version-kind` on each kind), so
 * that `kubectl explain`, client-side apply and server-side field validation have real schemas.
 * The types, formats, required fields and descriptions come from `@kubernetes/client-node`'s
 * generated models (themselves generated from the API server's OpenAPI); the patch strategies and
 * merge keys, which those models drop, from the table below (kubernetes `api/openapi-spec`). Run
 * it again after upgrading `@kubernetes/client-node`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const OUT = fileURLToPath(new URL("../src/sim/openapi-schemas.json", import.meta.url));
const MODELS = join(dirname(createRequire(import.meta.url).resolve("@kubernetes/client-node")), "gen", "models");

type Schema = Record<string, unknown> & { $ref?: string };

/** The kinds served (client-node model names), each with its group/version/kind. */
const ROOT_KINDS: Record<string, { group: string; kind: string; version: string }> = {
  V1Pod: { group: "", kind: "Pod", version: "v1" },
  V1Namespace: { group: "", kind: "Namespace", version: "v1" },
  V1Node: { group: "", kind: "Node", version: "v1" },
  V1ConfigMap: { group: "", kind: "ConfigMap", version: "v1" },
  V1Service: { group: "", kind: "Service", version: "v1" },
  V1Secret: { group: "", kind: "Secret", version: "v1" },
  CoreV1Event: { group: "", kind: "Event", version: "v1" },
  V1Deployment: { group: "apps", kind: "Deployment", version: "v1" },
  V1ReplicaSet: { group: "apps", kind: "ReplicaSet", version: "v1" },
  V1Scale: { group: "autoscaling", kind: "Scale", version: "v1" },
};

const META = new Set(["ObjectMeta", "ListMeta", "OwnerReference", "ManagedFieldsEntry", "LabelSelector", "LabelSelectorRequirement", "MicroTime", "Condition"]);
const APPS = /^(Deployment|ReplicaSet|RollingUpdateDeployment)/;

/** The API server's name for a client-node model: `V1PodSpec` is `io.k8s.api.core.v1.PodSpec`. */
function schemaName(model: string): string {
  const go = model.replace(/^(Core|Apps|Autoscaling)?V1/, "");
  if (META.has(go)) return `io.k8s.apimachinery.pkg.apis.meta.v1.${go}`;
  if (/^Scale(Spec|Status)?$/.test(go)) return `io.k8s.api.autoscaling.v1.${go}`;
  return `io.k8s.api.${APPS.test(go) ? "apps" : "core"}.v1.${go}`;
}

const merge = (key?: string, retainKeys = false): Schema => ({
  ...(key ? { "x-kubernetes-patch-merge-key": key } : {}),
  "x-kubernetes-patch-strategy": retainKeys ? "merge,retainKeys" : "merge",
});

/** Strategic merge patch's list keys and strategies (the `patchStrategy`/`patchMergeKey` tags of the Go types). */
const PATCH_KEYS: Record<string, Schema> = {
  "ObjectMeta.finalizers": merge(),
  "ObjectMeta.ownerReferences": merge("uid"),
  "PodSpec.containers": merge("name"),
  "PodSpec.initContainers": merge("name"),
  "PodSpec.ephemeralContainers": merge("name"),
  "PodSpec.volumes": merge("name", true),
  "PodSpec.imagePullSecrets": merge("name"),
  "PodSpec.hostAliases": merge("ip"),
  "PodSpec.topologySpreadConstraints": merge("topologyKey"),
  "PodSpec.schedulingGates": merge("name"),
  "PodSpec.resourceClaims": merge("name", true),
  "Container.ports": merge("containerPort"),
  "Container.env": merge("name"),
  "Container.volumeMounts": merge("mountPath"),
  "Container.volumeDevices": merge("devicePath"),
  "EphemeralContainer.ports": merge("containerPort"),
  "EphemeralContainer.env": merge("name"),
  "EphemeralContainer.volumeMounts": merge("mountPath"),
  "EphemeralContainer.volumeDevices": merge("devicePath"),
  "PodStatus.conditions": merge("type"),
  "PodStatus.podIPs": merge("ip"),
  "ServiceSpec.ports": merge("port"),
  "NodeSpec.podCIDRs": merge(),
  "NodeStatus.conditions": merge("type"),
  "NodeStatus.addresses": merge("type"),
  "NamespaceStatus.conditions": merge("type"),
  "DeploymentSpec.strategy": { "x-kubernetes-patch-strategy": "retainKeys" },
  "DeploymentStatus.conditions": merge("type"),
  "ReplicaSetStatus.conditions": merge("type"),
};

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

/** `'field'?: T` comments and the class comment of a generated model's declaration file. */
function declarations(model: string): { description: string; fields: Map<string, { description: string; required: boolean }> } {
  const text = readFileSync(join(MODELS, `${model}.d.ts`), "utf8");
  const unquote = (s: string) => s.replace(/\\(["'`\\])/g, "$1").trim();
  const comment = (block: string) =>
    unquote(
      block
        .split("\n")
        .map((line) => line.replace(/^\s*\*\s?/, ""))
        .join("\n"),
    );
  const classDoc = /\/\*\*\n((?:(?!\/\*\*)[\s\S])*?)\*\/\s*\nexport declare class/.exec(text);
  const fields = new Map<string, { description: string; required: boolean }>();
  for (const match of text.matchAll(/(?:\/\*\*\n((?:(?!\*\/)[\s\S])*?)\*\/\s*\n)?\s*'([^']+)'(\??):/g)) {
    fields.set(match[2] ?? "", { description: match[1] ? comment(match[1]) : "", required: match[3] !== "?" });
  }
  return { description: classDoc?.[1] ? comment(classDoc[1]) : "", fields };
}

const schemas: Record<string, Schema> = {};
const pending: string[] = [];

/** A reference to a model's schema, queueing the model. */
function ref(model: string): Schema {
  const name = schemaName(model);
  if (!(name in schemas) && !pending.includes(model)) pending.push(model);
  return { $ref: `#/components/schemas/${name}` };
}

const TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const PRIMITIVES: Record<string, Schema> = {
  [MICRO_TIME]: { description: "MicroTime is version of Time with microsecond level precision.", format: "date-time", type: "string" },
  [TIME]: {
    description: "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.",
    format: "date-time",
    type: "string",
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
    description:
      "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
    format: "int-or-string",
    type: "string",
  },
};

/** The schema of an attribute's type (`Array<V1Container>`, `{ [key: string]: string; }`, `number` int32...). */
function typeSchema(type: string, format: string): Schema {
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1]) return { type: "array", items: typeSchema(array[1], format) };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1]) return { type: "object", additionalProperties: typeSchema(map[1], "") };
  switch (type) {
    case "string":
      return format && format !== "int-or-string" ? { type: "string", format } : { type: "string" };
    case "number":
      return format === "double" ? { type: "number", format } : { type: "integer", format: format || "int64" };
    case "boolean":
      return { type: "boolean" };
    case "any":
      return { type: "object" };
    case "Date":
      return { $ref: `#/components/schemas/${TIME}` };
    case "V1MicroTime":
      return { $ref: `#/components/schemas/${MICRO_TIME}` };
    case "IntOrString":
      return { $ref: "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString" };
    default:
      if (!/^[A-Z][A-Za-z0-9]+$/.test(type)) throw new Error(`unhandled client-node type ${JSON.stringify(type)}`);
      return ref(type);
  }
}

async function model(name: string): Promise<void> {
  const module = (await import(pathToFileURL(join(MODELS, `${name}.js`)).href)) as Record<string, { attributeTypeMap?: Attribute[] }>;
  const attributes = module[name]?.attributeTypeMap;
  if (!attributes) throw new Error(`${name}: no attributeTypeMap in @kubernetes/client-node`);
  const { description, fields } = declarations(name);
  const goName = schemaName(name);
  const typeName = goName.split(".").at(-1) ?? goName;
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const a of [...attributes].sort((x, y) => (x.baseName < y.baseName ? -1 : 1))) {
    const field = fields.get(a.name);
    let property = typeSchema(a.type, a.format);
    const text = field?.description ?? "";
    // The API server's form: a reference wrapped in allOf, so the field keeps its own description.
    if (property.$ref) property = { allOf: [property], ...(["Date", "V1MicroTime", "IntOrString"].includes(a.type) ? {} : { default: {} }) };
    if (text) property.description = text;
    Object.assign(property, PATCH_KEYS[`${typeName}.${a.baseName}`] ?? {});
    properties[a.baseName] = property;
    if (field?.required) required.push(a.baseName);
  }
  const schema: Schema = { description, type: "object", properties };
  if (required.length) schema.required = required;
  const gvk = ROOT_KINDS[name];
  if (gvk) schema["x-kubernetes-group-version-kind"] = [gvk];
  schemas[goName] = schema;
}

for (const root of Object.keys(ROOT_KINDS)) pending.push(root);
for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
  if (!(schemaName(next) in schemas)) await model(next);
}
Object.assign(schemas, PRIMITIVES);
const sorted = Object.fromEntries(
  Object.keys(schemas)
    .sort()
    .map((k) => [k, schemas[k]]),
);
writeFileSync(OUT, `${JSON.stringify(sorted, null, 2)}\n`);
// In the layout the repository's formatter keeps.
execFileSync("npx", ["biome", "format", "--write", OUT], { stdio: "ignore" });
console.log(`wrote ${Object.keys(sorted).length} schemas to ${OUT}`);
