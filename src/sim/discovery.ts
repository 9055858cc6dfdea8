/**
 * @module
 * Discovery documents for exactly the resources in `resources.ts`, stored ones and reviews:
 * `/version`, legacy discovery (`/api`, `/api/v1`, `/apis`, `/apis/{g}`, `/apis/{g}/{v}`) and
 * aggregated discovery (`APIGroupDiscoveryList`, what kubectl ≥1.30 asks for first). Shapes and field
 * order follow the API server's output (see `api/discovery/*.json` in kubernetes/kubernetes).
 */
import { DISCOVERABLE, GROUPS, SUBRESOURCES, type ApiResource } from "./resources.ts";

const VERSION_INFO = {
  major: "1",
  minor: "34",
  emulationMajor: "1",
  emulationMinor: "34",
  minCompatibilityMajor: "1",
  minCompatibilityMinor: "33",
  gitVersion: "v1.34.0",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-08-27T00:00:00Z",
  goVersion: "go1.24.6",
  compiler: "gc",
  platform: "linux/amd64",
};

const byName = (a: ApiResource, b: ApiResource): number => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0);

const inGroupVersion = (group: string, version: string): ApiResource[] => DISCOVERABLE.filter((r) => r.group === group && r.version === version).sort(byName);

const versionsOf = (group: string): string[] => [...new Set(DISCOVERABLE.filter((r) => r.group === group).map((r) => r.version))];

function apiResource(r: ApiResource): Record<string, unknown> {
  const entry: Record<string, unknown> = { name: r.resource, singularName: r.singularName, namespaced: r.namespaced, kind: r.kind, verbs: [...r.verbs] };
  if (r.shortNames.length) entry.shortNames = r.shortNames;
  if (r.categories.length) entry.categories = r.categories;
  if (r.storageVersionHash) entry.storageVersionHash = r.storageVersionHash;
  return entry;
}

/** A resource's entry followed by its subresources' (`deployments/scale`, with the Scale kind's group and version). */
const withSubresources = (r: ApiResource): Array<Record<string, unknown>> => [
  apiResource(r),
  ...SUBRESOURCES.filter((s) => s.parent === r).map((s) => ({
    name: `${r.resource}/${s.subresource}`,
    singularName: "",
    namespaced: r.namespaced,
    group: s.group,
    version: s.version,
    kind: s.kind,
    verbs: [...s.verbs],
  })),
];

function apiGroup(group: string): Record<string, unknown> {
  const versions = versionsOf(group).map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

function discoveryResource(r: ApiResource): Record<string, unknown> {
  // Custom resources report their group/version in responseKind; built-ins leave them empty.
  const responseKind = r.custom ? { group: r.group, version: r.version, kind: r.kind } : { group: "", version: "", kind: r.kind };
  const entry: Record<string, unknown> = {
    resource: r.resource,
    responseKind,
    scope: r.namespaced ? "Namespaced" : "Cluster",
    singularResource: r.singularName,
    verbs: [...r.verbs],
  };
  if (r.shortNames.length) entry.shortNames = r.shortNames;
  if (r.categories.length) entry.categories = r.categories;
  const subresources = SUBRESOURCES.filter((s) => s.parent === r).map((s) => ({ subresource: s.subresource, responseKind: { group: s.group, version: s.version, kind: s.kind }, verbs: [...s.verbs] }));
  if (subresources.length) entry.subresources = subresources;
  return entry;
}

function discoveryGroup(group: string): Record<string, unknown> {
  // From 1.34 empty metadata fields are omitted: the core group's item metadata is `{}`.
  return {
    metadata: group ? { name: group } : {},
    versions: versionsOf(group).map((version) => ({ version, resources: inGroupVersion(group, version).map(discoveryResource), freshness: "Current" })),
  };
}

const groupDiscoveryList = (groups: readonly string[]) => ({
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: groups.map(discoveryGroup),
});

/**
 * The document for a discovery path (without cluster prefix), or `undefined` if the path is
 * not one this server serves. `aggregated` only changes `/api` and `/apis`.
 */
export function discoveryDocument(path: string, aggregated: boolean, serverAddress: string): object | undefined {
  if (path === "/version") return VERSION_INFO;
  if (path === "/api") {
    if (aggregated) return groupDiscoveryList([""]);
    return { kind: "APIVersions", versions: versionsOf(""), serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }] };
  }
  if (path === "/apis") {
    if (aggregated) return groupDiscoveryList(GROUPS);
    return { kind: "APIGroupList", apiVersion: "v1", groups: GROUPS.map(apiGroup) };
  }
  const core = /^\/api\/([^/]+)$/.exec(path);
  if (core?.[1] && versionsOf("").includes(core[1])) {
    // The core group's resource list carries no apiVersion; named groups' lists do.
    return { kind: "APIResourceList", groupVersion: core[1], resources: inGroupVersion("", core[1]).flatMap(withSubresources) };
  }
  const named = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  const group = named?.[1];
  if (group === undefined || !GROUPS.includes(group)) return undefined;
  const version = named?.[2];
  if (version === undefined) return { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group) };
  if (!versionsOf(group).includes(version)) return undefined;
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: `${group}/${version}`, resources: inGroupVersion(group, version).flatMap(withSubresources) };
}
