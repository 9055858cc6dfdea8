/**
 * @module
 * Parse Kubernetes API paths the way the API server's `RequestInfoFactory` does
 * (apiserver `pkg/endpoints/request/requestinfo.go`), plus this relay's
 * `/clusters/{name}/` prefix for named clusters.
 */
import { ALL_CLUSTERS, isMemberSet, mergedCluster } from "./members.ts";
import { badRequest, type Result } from "./status.ts";

export interface ResourcePath {
  kind: "resource";
  /** Named cluster from `/clusters/{name}/` (a merged key's set: `*`, or canonical as `members.ts` makes it); `undefined` is the default cluster. */
  cluster: string | undefined;
  /** API group; `""` is the core group (`/api/v1`). */
  group: string;
  version: string;
  /** Plural resource name, e.g. `pods`. */
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** The deprecated `/watch/` form (`/api/v1/watch/pods`). */
  legacyWatch: boolean;
}

/** `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`. */
export interface DiscoveryPath {
  kind: "discovery";
  cluster: string | undefined;
  /** The path without the cluster prefix, e.g. `/apis/apps/v1`. */
  path: string;
}

export interface InvalidPath {
  kind: "invalid";
  /** Why the path is not an API path, for a 404 message. */
  reason: string;
}

export type ApiPath = ResourcePath | DiscoveryPath | InvalidPath;

// Namespace subresources keep the `namespaces` resource (requestinfo.go `namespaceSubresources`).
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const RESOURCE = /^[a-z][a-z0-9-]*$/;

export const isDnsLabel = (s: string): boolean => s.length <= 63 && DNS_LABEL.test(s);
export const isDnsSubdomain = (s: string): boolean => s.length <= 253 && DNS_SUBDOMAIN.test(s);

/** `IsValidPathSegmentName`: names travel in URL segments, so `.`, `..`, `/` and `%` are out. */
export const isValidObjectName = (s: string): boolean => s.length > 0 && s.length <= 253 && s !== "." && s !== ".." && !/[/%]/.test(s);

/**
 * A cluster segment that names a set, checked and canonicalised: `*` as it is (expanded by
 * `resolveMembers` against the configuration), a set sorted and deduped.
 */
export function parseMemberSet(segment: string): Result<string> {
  if (segment === ALL_CLUSTERS) return { ok: true, value: ALL_CLUSTERS };
  // `a,` is the set of `a` alone (its canonical form): objects renamed as in any merged key.
  const names = (segment.endsWith(",") ? segment.slice(0, -1) : segment).split(",");
  const bad = names.find((name) => !isDnsLabel(name));
  if (bad !== undefined) return { ok: false, status: badRequest(`a cluster set is cluster names (DNS labels) separated by commas, or "*": ${JSON.stringify(bad)} is not a cluster name`) };
  return { ok: true, value: mergedCluster(names) };
}

const invalid = (reason: string): InvalidPath => ({ kind: "invalid", reason });

/**
 * Parse a URL path (already percent-decoded segment by segment is not required: segments are
 * decoded here). Returns `invalid` with a reason for anything that is not an API path.
 */
export function parseApiPath(pathname: string): ApiPath {
  let parts = pathname.split("/").filter((p) => p.length > 0);
  try {
    parts = parts.map((p) => decodeURIComponent(p));
  } catch {
    return invalid("the path is not valid percent-encoding");
  }
  let cluster: string | undefined;
  if (parts[0] === "clusters") {
    const name = parts[1];
    if (name !== undefined && isMemberSet(name)) {
      // A merged key's clusters (`*`, `a,b`): canonical here, checked against the configuration by the gate.
      const set = parseMemberSet(name);
      if (!set.ok) return invalid(set.status.message ?? "a malformed cluster set");
      cluster = set.value;
    } else {
      if (name === undefined || !isDnsLabel(name)) return invalid("a cluster name must be a DNS label");
      cluster = name;
    }
    parts = parts.slice(2);
  }
  const rest = `/${parts.join("/")}`;
  if (parts.length === 1 && parts[0] === "version") return { kind: "discovery", cluster, path: rest };

  let group: string;
  let version: string | undefined;
  let tail: string[];
  if (parts[0] === "api") {
    if (parts.length === 1) return { kind: "discovery", cluster, path: rest };
    group = "";
    version = parts[1];
    tail = parts.slice(2);
  } else if (parts[0] === "apis") {
    if (parts.length <= 3) {
      if (parts[1] !== undefined && !isDnsSubdomain(parts[1])) return invalid(`"${parts[1]}" is not an API group name`);
      if (parts[2] !== undefined && !VERSION.test(parts[2])) return invalid(`"${parts[2]}" is not an API version`);
      return { kind: "discovery", cluster, path: rest };
    }
    group = parts[1] ?? "";
    version = parts[2];
    tail = parts.slice(3);
    if (!isDnsSubdomain(group)) return invalid(`"${group}" is not an API group name`);
  } else {
    return invalid("not a Kubernetes API path");
  }
  if (version === undefined || !VERSION.test(version)) return invalid(`"${version}" is not an API version`);
  if (tail.length === 0) return { kind: "discovery", cluster, path: rest };

  let legacyWatch = false;
  if (tail[0] === "watch") {
    legacyWatch = true;
    tail = tail.slice(1);
    if (tail.length === 0) return invalid("a watch path needs a resource");
  }

  let namespace: string | undefined;
  if (tail[0] === "namespaces" && tail.length > 1) {
    namespace = tail[1];
    if (tail.length > 2 && !NAMESPACE_SUBRESOURCES.has(tail[2] ?? "")) tail = tail.slice(2);
  }
  const [resource, name, subresource, ...extra] = tail;
  if (resource === undefined || !RESOURCE.test(resource)) return invalid(`"${resource}" is not a resource name`);
  if (extra.length > 0) return invalid("the path has more segments than resource/name/subresource");
  // `/api/v1/namespaces/{name}` names a Namespace object: it is cluster-scoped, not "in" itself.
  if (resource === "namespaces") namespace = undefined;
  if (namespace !== undefined && !isDnsLabel(namespace)) return invalid(`namespace "${namespace}" is not a DNS label`);
  if (name !== undefined && !isValidObjectName(name)) return invalid(`"${name}" is not a valid object name`);
  if (legacyWatch && subresource !== undefined) return invalid("subresources cannot be watched");
  return { kind: "resource", cluster, group, version, resource, namespace, name, subresource, legacyWatch };
}

/** The collection path of a resource, e.g. `/apis/apps/v1/namespaces/x/deployments` (no cluster prefix). */
export function collectionPath(p: { group: string; version: string; resource: string; namespace?: string | undefined }): string {
  const base = p.group === "" ? `/api/${p.version}` : `/apis/${p.group}/${p.version}`;
  return p.namespace === undefined ? `${base}/${p.resource}` : `${base}/namespaces/${encodeURIComponent(p.namespace)}/${p.resource}`;
}

/** The `apiVersion` string of a group/version: `v1` or `apps/v1`. */
export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`);
