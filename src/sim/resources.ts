/**
 * @module
 * The resources the simulator serves, with the discovery facts kubectl's RESTMapper needs
 * (kind, scope, verbs, short names, categories): the stored ones, and the create-only reviews.
 * Values for built-ins are the API server's own (`api/discovery/api__v1.json`,
 * `apis__authentication.k8s.io__v1.json`, `aggregated_v2.json` in kubernetes/kubernetes).
 */
import { apiVersionOf } from "../k8s/path.ts";

/** What discovery says about a served resource. */
export interface ApiResource {
  group: string;
  version: string;
  /** Plural, as in the URL. */
  resource: string;
  kind: string;
  singularName: string;
  namespaced: boolean;
  verbs: readonly string[];
  shortNames: readonly string[];
  categories: readonly string[];
  /** Only resources kept in storage have one. */
  storageVersionHash?: string;
  /** Custom resources: list items keep kind/apiVersion (kubernetes/kubernetes#63676). */
  custom: boolean;
}

/** A resource kept in the store: listed, watched, written. */
export interface ResourceDef extends ApiResource {
  /** `pods`, `deployments.apps`, `widgets.example.com`: unique, used in the store. */
  id: string;
  listKind: string;
  storageVersionHash: string;
  /** DELETE answers with the deleted object instead of a `Success` Status (pods, services). */
  returnDeletedObject: boolean;
  /** Zero-valued fields of the kind's empty Go struct, as they appear in a BOOKMARK object. */
  emptyFields: Readonly<Record<string, unknown>>;
}

/** Verbs the simulator implements (no `deletecollection`), so discovery says what is served. */
const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"] as const;

type Def = Omit<ResourceDef, "id" | "listKind" | "singularName" | "verbs" | "custom" | "returnDeletedObject" | "emptyFields" | "shortNames" | "categories"> &
  Partial<Pick<ResourceDef, "custom" | "returnDeletedObject" | "emptyFields" | "shortNames" | "categories">>;

function define(d: Def): ResourceDef {
  return {
    id: d.group ? `${d.resource}.${d.group}` : d.resource,
    listKind: `${d.kind}List`,
    singularName: d.kind.toLowerCase(),
    verbs: VERBS,
    custom: false,
    returnDeletedObject: false,
    emptyFields: {},
    shortNames: [],
    categories: [],
    ...d,
  };
}

export const RESOURCES: readonly ResourceDef[] = [
  define({
    group: "",
    version: "v1",
    resource: "pods",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    categories: ["all"],
    storageVersionHash: "xPOwRZ+Yhw8=",
    returnDeletedObject: true,
    // Since 1.34 the empty Pod omits creationTimestamp but keeps the non-omitempty `containers`.
    emptyFields: { spec: { containers: null }, status: {} },
  }),
  define({ group: "", version: "v1", resource: "namespaces", kind: "Namespace", namespaced: false, shortNames: ["ns"], storageVersionHash: "Q3oi5N2YM8M=" }),
  define({ group: "", version: "v1", resource: "nodes", kind: "Node", namespaced: false, shortNames: ["no"], storageVersionHash: "XwShjMxG9Fs=" }),
  define({ group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true, shortNames: ["cm"], storageVersionHash: "qFsyl6wFWjQ=" }),
  define({
    group: "",
    version: "v1",
    resource: "services",
    kind: "Service",
    namespaced: true,
    shortNames: ["svc"],
    categories: ["all"],
    storageVersionHash: "0/CO1lhkEBI=",
    returnDeletedObject: true,
  }),
  define({ group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true, storageVersionHash: "S6u1pOWzb84=" }),
  define({ group: "", version: "v1", resource: "events", kind: "Event", namespaced: true, shortNames: ["ev"], storageVersionHash: "r2yiGXH7wu8=" }),
  define({ group: "apps", version: "v1", resource: "deployments", kind: "Deployment", namespaced: true, shortNames: ["deploy"], categories: ["all"], storageVersionHash: "8aSe+NMegvE=" }),
  define({ group: "apps", version: "v1", resource: "replicasets", kind: "ReplicaSet", namespaced: true, shortNames: ["rs"], categories: ["all"], storageVersionHash: "P1RzHs8/mWQ=" }),
  define({ group: "example.com", version: "v1", resource: "widgets", kind: "Widget", namespaced: true, shortNames: ["wdg"], storageVersionHash: "Hq4hO6bQ4hE=", custom: true }),
];

/** A subresource with a kind of its own: `deployments/scale` reads and writes an `autoscaling/v1` `Scale`. */
export interface Subresource {
  parent: ResourceDef;
  subresource: string;
  group: string;
  version: string;
  kind: string;
  verbs: readonly string[];
}

/** The scale subresources `kubectl scale` finds in discovery (`scale.go`). */
export const SUBRESOURCES: readonly Subresource[] = RESOURCES.filter((r) => r.resource === "deployments" || r.resource === "replicasets").map((parent) => ({
  parent,
  subresource: "scale",
  group: "autoscaling",
  version: "v1",
  kind: "Scale",
  verbs: ["get", "patch", "update"],
}));

const review = (group: string, resource: string, kind: string): ApiResource => ({
  group,
  version: "v1",
  resource,
  kind,
  singularName: kind.toLowerCase(),
  namespaced: false,
  verbs: ["create"],
  shortNames: [],
  categories: [],
  custom: false,
});

/** Create-only reviews, answered from the caller's identity (`reviews.ts`) and never stored. */
export const REVIEWS: readonly ApiResource[] = [
  review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview"),
  review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
  review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
];

/** metrics-server's API (`metrics.ts`): get and list, no watch; computed, never stored. */
export const METRICS: readonly ApiResource[] = [
  { group: "metrics.k8s.io", version: "v1beta1", resource: "nodes", kind: "NodeMetrics", singularName: "", namespaced: false, verbs: ["get", "list"], shortNames: [], categories: [], custom: false },
  { group: "metrics.k8s.io", version: "v1beta1", resource: "pods", kind: "PodMetrics", singularName: "", namespaced: true, verbs: ["get", "list"], shortNames: [], categories: [], custom: false },
];

/** Everything discovery lists: built-in groups first, then aggregated APIs, custom resources last, as the API server orders `/apis`. */
export const DISCOVERABLE: readonly ApiResource[] = [...RESOURCES.filter((r) => !r.custom), ...REVIEWS, ...METRICS, ...RESOURCES.filter((r) => r.custom)];

/** Groups other than core, in the order `/apis` lists them (the API server's priority order). */
export const GROUPS: readonly string[] = [...new Set(DISCOVERABLE.filter((r) => r.group !== "").map((r) => r.group))];

export const apiVersionOfResource = (r: ResourceDef): string => apiVersionOf(r.group, r.version);

/** The resource a URL names, or `undefined` if this server does not serve it. */
export const findResource = (group: string, version: string, resource: string): ResourceDef | undefined => RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);

/** Look a resource up by id (`deployments.apps`) or by its plural alone (`deployments`). */
export function resourceByName(name: string): ResourceDef {
  const found = RESOURCES.find((r) => r.id === name) ?? RESOURCES.find((r) => r.resource === name);
  if (!found) throw new Error(`unknown resource "${name}": the simulator serves ${RESOURCES.map((r) => r.id).join(", ")}`);
  return found;
}
