/**
 * @module
 * Field selectors as the API server reads them: a port of apimachinery `pkg/fields/selector.go`
 * (`ParseSelector`, value escaping, `Selector.Matches`), then each resource's field labels as the
 * list/watch handler checks them through `Scheme.ConvertFieldLabel`: the per-kind funcs in
 * kubernetes `pkg/apis/<group>/<version>/conversion.go`, `runtime.DefaultMetaV1FieldSelectorConversion`
 * for other built-ins, and the apiextensions-apiserver converter for custom resources. The
 * selectable values of an object follow the `ToSelectableFields` funcs of `pkg/registry/...`.
 */
import { compareCodePoints, goQuote, SelectorError } from "./labels.ts";

export interface FieldRequirement {
  field: string;
  operator: "=" | "!=";
  value: string;
}

/** AND of its requirements; no requirements selects everything. */
export interface FieldSelector {
  requirements: FieldRequirement[];
}

// ---------------------------------------------------------------------------------------------
// Parsing (apimachinery pkg/fields/selector.go)

/** Terms split at commas not escaped by a backslash; escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === "\\") inSlash = true;
    else if (c === ",") {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// `==` before `=`, so `a==b` does not leave `=b` as the value.
const TERM_OPERATORS = ["!=", "==", "="] as const;

/** Splits at the first operator; the left-hand side has no escaping. */
function splitTerm(term: string): [lhs: string, op: (typeof TERM_OPERATORS)[number], rhs: string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** `UnescapeValue`: `\\`, `\,` and `\=` are the only escapes, and `,`/`=` must be escaped. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = "";
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== "\\" && c !== "," && c !== "=") throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === "\\") inSlash = true;
    // Go formats the rune with %v, which prints its number: `=` reads as 61.
    else if (c === "," || c === "=") throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new SelectorError("invalid field selector: invalid escape sequence: \\");
  return out;
}

/** `EscapeValue`. */
const escapeValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`);

/**
 * Parses a `fieldSelector` as `fields.ParseSelector` does. Like upstream, terms are processed
 * in sorted order (so the first error reported is upstream's), and a term with an empty field
 * and an empty value (`=`) is dropped. Throws `SelectorError`.
 */
export function parseFieldSelector(input: string): FieldSelector {
  if (input === "") return { requirements: [] };
  const parts = splitTerms(input).sort(compareCodePoints);
  const requirements: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === "") continue;
    const split = splitTerm(part);
    if (split === undefined) throw new SelectorError(`invalid selector: '${input}'; can't understand '${part}'`);
    const [field, op, rhs] = split;
    const value = unescapeValue(rhs);
    if (field === "" && value === "") continue;
    requirements.push({ field, operator: op === "!=" ? "!=" : "=", value });
  }
  return { requirements };
}

/**
 * The canonical string: `==` written `=`, values re-escaped, duplicates removed, requirements
 * sorted by field, operator (`=` first), then value. Throws `SelectorError` for a field name
 * that cannot be written back unambiguously (never one from `parseFieldSelector`).
 */
export function formatFieldSelector(selector: FieldSelector): string {
  const terms = new Set<string>();
  const sorted = selector.requirements
    .filter((r) => r.field !== "" || r.value !== "")
    .sort((a, b) => compareCodePoints(a.field, b.field) || Number(a.operator === "!=") - Number(b.operator === "!=") || compareCodePoints(a.value, b.value));
  for (const r of sorted) {
    const term = `${r.field}${r.operator}${escapeValue(r.value)}`;
    const split = splitTerms(term);
    if (split.length !== 1 || splitTerm(term)?.[0] !== r.field) {
      throw new SelectorError(`field selector label cannot be written unambiguously: ${goQuote(r.field)}`);
    }
    terms.add(term);
  }
  return [...terms].join(",");
}

/** `Selector.Matches`: an absent field reads as `""`. */
export function matchesFields(selector: FieldSelector, fields: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => {
    const actual = Object.hasOwn(fields, r.field) ? (fields[r.field] ?? "") : "";
    return r.operator === "=" ? actual === r.value : actual !== r.value;
  });
}

// ---------------------------------------------------------------------------------------------
// Field labels per resource

type Read = (object: unknown) => string;

interface KindRules {
  /** Every label a request may use, mapped to the label the selector is matched with. */
  readonly accepted: ReadonlyMap<string, string>;
  /** The 400 message for a label the resource does not accept. */
  readonly reject: (label: string) => string;
  /** How to read each selectable label; an accepted label missing here always reads `""`. */
  readonly selectable: ReadonlyMap<string, Read>;
}

function get(object: unknown, path: string): unknown {
  let node = object;
  for (const part of path.split(".")) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const str =
  (path: string): Read =>
  (o) => {
    const v = get(o, path);
    return typeof v === "string" ? v : "";
  };
// strconv.FormatBool of a field that defaults to false.
const bool =
  (path: string): Read =>
  (o) =>
    String(get(o, path) === true);
// strconv.Itoa of an int32 that defaults to 0.
const int =
  (path: string): Read =>
  (o) => {
    const v = get(o, path);
    return typeof v === "number" && Number.isInteger(v) ? String(v) : "0";
  };
// The first non-empty of several fields (how upstream derives some values from the internal type).
const firstOf =
  (...reads: Read[]): Read =>
  (o) => {
    for (const read of reads) {
      const v = read(o);
      if (v !== "") return v;
    }
    return "";
  };

const NAME: Record<string, Read> = { "metadata.name": str("metadata.name") };
const NAME_AND_NAMESPACE: Record<string, Read> = { ...NAME, "metadata.namespace": str("metadata.namespace") };

const unsupported = (label: string): string => `field label not supported: ${label}`;

interface KindSpec {
  /** Accepted labels and how to read them; `null` for one upstream accepts but never sets. */
  fields: Record<string, Read | null>;
  /** Legacy spellings rewritten to an accepted label. */
  aliases?: Record<string, string>;
  reject?: (label: string) => string;
}

function kindRules(spec: KindSpec): KindRules {
  const accepted = new Map<string, string>();
  const selectable = new Map<string, Read>();
  for (const [label, read] of Object.entries(spec.fields)) {
    accepted.set(label, label);
    if (read !== null) selectable.set(label, read);
  }
  for (const [alias, label] of Object.entries(spec.aliases ?? {})) accepted.set(alias, label);
  return { accepted, selectable, reject: spec.reject ?? unsupported };
}

/** The events fields of the core/v1 wire format (core `EventToSelectableFields`). */
const CORE_EVENT_FIELDS: Record<string, Read> = {
  "involvedObject.kind": str("involvedObject.kind"),
  "involvedObject.namespace": str("involvedObject.namespace"),
  "involvedObject.name": str("involvedObject.name"),
  "involvedObject.uid": str("involvedObject.uid"),
  "involvedObject.apiVersion": str("involvedObject.apiVersion"),
  "involvedObject.resourceVersion": str("involvedObject.resourceVersion"),
  "involvedObject.fieldPath": str("involvedObject.fieldPath"),
  reason: str("reason"),
  reportingComponent: str("reportingComponent"),
  source: firstOf(str("source.component"), str("reportingComponent")),
  type: str("type"),
  ...NAME_AND_NAMESPACE,
};

/**
 * events.k8s.io/v1 accepts its own spellings (`regarding.*`, `reportingController`), not the
 * core ones, and the relay forwards the selector upstream as written, so they stay as they are
 * and are read from the events.k8s.io wire format (k8s.io/api events/v1 `EventToSelectableFields`).
 */
const EVENTS_V1_FIELDS: Record<string, Read> = {
  reason: str("reason"),
  "regarding.kind": str("regarding.kind"),
  "regarding.namespace": str("regarding.namespace"),
  "regarding.name": str("regarding.name"),
  "regarding.uid": str("regarding.uid"),
  "regarding.apiVersion": str("regarding.apiVersion"),
  "regarding.resourceVersion": str("regarding.resourceVersion"),
  "regarding.fieldPath": str("regarding.fieldPath"),
  reportingController: str("reportingController"),
  source: firstOf(str("deprecatedSource.component"), str("reportingController")),
  type: str("type"),
  ...NAME_AND_NAMESPACE,
};

/** Kinds with their own conversion func, keyed `group/resource` (`/pods` for the core group). */
const KINDS: ReadonlyMap<string, KindRules> = new Map([
  [
    "/pods",
    kindRules({
      fields: {
        ...NAME_AND_NAMESPACE,
        "spec.nodeName": str("spec.nodeName"),
        "spec.restartPolicy": str("spec.restartPolicy"),
        "spec.schedulerName": str("spec.schedulerName"),
        // v1's deprecated spec.serviceAccount fills in for an empty serviceAccountName.
        "spec.serviceAccountName": firstOf(str("spec.serviceAccountName"), str("spec.serviceAccount")),
        "spec.hostNetwork": bool("spec.hostNetwork"),
        "status.phase": str("status.phase"),
        // Upstream reads PodIPs[0]; in v1, a set podIP is authoritative over podIPs.
        "status.podIP": firstOf(str("status.podIP"), (o) => {
          const ips = get(o, "status.podIPs");
          return Array.isArray(ips) ? str("ip")(ips[0]) : "";
        }),
        // Accepted by the conversion func but never set by ToSelectableFields, so it reads "".
        "status.podIPs": null,
        "status.nominatedNodeName": str("status.nominatedNodeName"),
      },
      aliases: { "spec.host": "spec.nodeName" },
    }),
  ],
  ["/nodes", kindRules({ fields: { ...NAME, "spec.unschedulable": bool("spec.unschedulable") } })],
  ["/namespaces", kindRules({ fields: { "status.phase": str("status.phase"), ...NAME } })],
  ["/secrets", kindRules({ fields: { type: str("type"), ...NAME_AND_NAMESPACE } })],
  ["/services", kindRules({ fields: { ...NAME_AND_NAMESPACE, "spec.clusterIP": str("spec.clusterIP"), "spec.type": str("spec.type") } })],
  ["/replicationcontrollers", kindRules({ fields: { ...NAME_AND_NAMESPACE, "status.replicas": int("status.replicas") } })],
  ["/events", kindRules({ fields: CORE_EVENT_FIELDS })],
  ["events.k8s.io/events", kindRules({ fields: EVENTS_V1_FIELDS })],
  [
    "batch/jobs",
    kindRules({
      fields: { ...NAME_AND_NAMESPACE, "status.successful": int("status.succeeded") },
      reject: (label) => `field label ${goQuote(label)} not supported for Job`,
    }),
  ],
  ["certificates.k8s.io/certificatesigningrequests", kindRules({ fields: { ...NAME, "spec.signerName": str("spec.signerName") } })],
  ["certificates.k8s.io/clustertrustbundles", kindRules({ fields: { ...NAME, "spec.signerName": str("spec.signerName") } })],
  [
    "resource.k8s.io/resourceslices",
    kindRules({
      fields: { ...NAME, "spec.nodeName": str("spec.nodeName"), "spec.driver": str("spec.driver") },
      // The message names the request's version; v1 is the served GA version.
      reject: (label) => `field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: ${label}`,
    }),
  ],
]);

/**
 * Built-in resources with no conversion func of their own: upstream falls back to
 * `runtime.DefaultMetaV1FieldSelectorConversion`, which accepts metadata.namespace even for
 * cluster-scoped kinds and words its error differently. (apps/v1 registers no func, so
 * replicasets reject status.replicas although the registry could select on it: kubernetes#135136.)
 */
const DEFAULT_META_BUILTINS: ReadonlySet<string> = new Set(
  Object.entries({
    "": "componentstatuses configmaps endpoints limitranges persistentvolumeclaims persistentvolumes podtemplates resourcequotas serviceaccounts",
    apps: "controllerrevisions daemonsets deployments replicasets statefulsets",
    autoscaling: "horizontalpodautoscalers",
    batch: "cronjobs",
    "networking.k8s.io": "ingresses ingressclasses networkpolicies ipaddresses servicecidrs",
    policy: "poddisruptionbudgets",
    "rbac.authorization.k8s.io": "clusterrolebindings clusterroles rolebindings roles",
    "storage.k8s.io": "csidrivers csinodes csistoragecapacities storageclasses volumeattachments volumeattributesclasses",
    "scheduling.k8s.io": "priorityclasses",
    "coordination.k8s.io": "leases leasecandidates",
    "discovery.k8s.io": "endpointslices",
    "node.k8s.io": "runtimeclasses",
    "admissionregistration.k8s.io":
      "mutatingwebhookconfigurations validatingwebhookconfigurations validatingadmissionpolicies validatingadmissionpolicybindings mutatingadmissionpolicies mutatingadmissionpolicybindings",
    "apiextensions.k8s.io": "customresourcedefinitions",
    "apiregistration.k8s.io": "apiservices",
    "flowcontrol.apiserver.k8s.io": "flowschemas prioritylevelconfigurations",
    "resource.k8s.io": "deviceclasses resourceclaims resourceclaimtemplates",
    "storagemigration.k8s.io": "storageversionmigrations",
    "internal.apiserver.k8s.io": "storageversions",
  }).flatMap(([group, resources]) => resources.split(" ").map((r) => `${group}/${r}`)),
);

const DEFAULT_META_RULES = kindRules({
  fields: NAME_AND_NAMESPACE,
  reject: (label) => `${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
});
// Custom resources: the apiextensions-apiserver converter only knows object metadata.
const CUSTOM_NAMESPACED_RULES = kindRules({ fields: NAME_AND_NAMESPACE });
const CUSTOM_CLUSTER_RULES = kindRules({ fields: NAME });

function rulesFor(group: string, resource: string, namespaced: boolean): KindRules {
  const key = `${group}/${resource}`;
  const rules = KINDS.get(key);
  if (rules !== undefined) return rules;
  if (DEFAULT_META_BUILTINS.has(key)) return DEFAULT_META_RULES;
  return namespaced ? CUSTOM_NAMESPACED_RULES : CUSTOM_CLUSTER_RULES;
}

/**
 * Every label a request for the resource may use, aliases included (pods: `spec.host`). An
 * unknown resource is treated as a custom resource: `metadata.name`, plus `metadata.namespace`
 * when namespaced. `namespaced` only matters there: built-ins accept what their kind accepts.
 */
export function supportedFieldLabels(group: string, resource: string, namespaced: boolean): readonly string[] {
  return [...rulesFor(group, resource, namespaced).accepted.keys()];
}

/**
 * Checks every requirement the way the API server's list/watch handler does (in the
 * selector's order, so the first failure reported is upstream's) and rewrites aliases to the
 * label they stand for. Throws `SelectorError` with the resource's own wording, e.g.
 * `field label not supported: foo`.
 */
export function validateFieldSelector(selector: FieldSelector, group: string, resource: string, namespaced: boolean): FieldSelector {
  const rules = rulesFor(group, resource, namespaced);
  return {
    requirements: selector.requirements.map((r) => {
      const field = rules.accepted.get(r.field);
      if (field === undefined) throw new SelectorError(rules.reject(r.field));
      return { ...r, field };
    }),
  };
}

/**
 * The selectable field values of an object (wire JSON) of the resource, keyed by the labels a
 * validated selector uses. Missing values read as upstream's defaults (`""`, `"false"`, `"0"`).
 */
export function fieldsOf(group: string, resource: string, object: unknown): Record<string, string> {
  // Namespace included either way: a cluster-scoped object has none and reads "", as upstream.
  const rules = rulesFor(group, resource, true);
  const fields: Record<string, string> = {};
  for (const [label, read] of rules.selectable) fields[label] = read(object);
  return fields;
}
