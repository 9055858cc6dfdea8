/**
 * @module
 * A merged key's clusters (DESIGN.md, "One watch across clusters"): `/clusters/*` names every
 * configured cluster, `/clusters/a,b` a set. A set is canonicalised (sorted, deduped) into the
 * key's cluster, so every spelling of one set shares one merge hub; a merged object is renamed
 * `<cluster>:<name>` (':' cannot appear in a Kubernetes name, so two clusters' objects never
 * collide in an informer keyed by namespace/name) and says its cluster and its own name and
 * resourceVersion in annotations.
 */
import { badRequest, type Result } from "./status.ts";
import type { KubeObject } from "./types.ts";

/** The path segment that names every configured cluster. */
export const ALL_CLUSTERS = "*";
/** The cluster an object of a merged key comes from. */
export const CLUSTER_ANNOTATION = "kube-watch-relay.dev/cluster";
/** The object's name in its cluster (the merged name is `<cluster>:<name>`). */
export const NAME_ANNOTATION = "kube-watch-relay.dev/name";
/** The object's resourceVersion in its cluster (the merged one is the merge hub's own sequence). */
export const CLUSTER_VERSION_ANNOTATION = "kube-watch-relay.dev/cluster-resource-version";
/** On a merged key's BOOKMARKs: the members whose changes are not arriving now (comma-separated). */
export const MEMBERS_BEHIND_ANNOTATION = "kube-watch-relay.dev/members-behind";
/** On a merged key's responses: the members whose changes are not arriving now (comma-separated). */
export const MEMBERS_BEHIND_HEADER = "kube-watch-relay-members-behind";
/** On a merged key's responses: the members left out because the subject may not read them. */
export const MEMBERS_LEFT_OUT_HEADER = "kube-watch-relay-members-left-out";

/** Whether a path's cluster segment names several clusters (`*` or a comma-separated set). */
export const isMemberSet = (segment: string): boolean => segment === ALL_CLUSTERS || segment.includes(",");

/**
 * The key's cluster for a set of members: sorted, deduped, joined by commas; a set of one keeps
 * a trailing comma, so a merged key is always told from its one cluster's (whose objects are not renamed).
 */
export function mergedCluster(members: readonly string[]): string {
  const sorted = [...new Set(members)].sort();
  return sorted.length === 1 ? `${sorted[0]},` : sorted.join(",");
}

/** The members of a merged key's cluster; `undefined` for one cluster's key. */
export function membersOf(cluster: string): string[] | undefined {
  if (!cluster.includes(",")) return undefined;
  return cluster.split(",").filter((name) => name.length > 0);
}

/** A set's members among the configured clusters (`*`: all of them), or a 404's message naming those that are not. */
export function resolveMembers(set: string, configured: readonly string[]): Result<string[]> {
  if (set === ALL_CLUSTERS) {
    if (configured.length === 0) return { ok: false, status: badRequest("no cluster is configured for /clusters/*") };
    return { ok: true, value: [...new Set(configured)].sort() };
  }
  const members = membersOf(set) ?? [set];
  const unknown = members.filter((name) => !configured.includes(name));
  if (unknown.length > 0) return { ok: false, status: { ...badRequest(`clusters not configured: ${unknown.join(", ")}`), code: 404, reason: "NotFound" } };
  return { ok: true, value: members };
}

/** The merged name of a cluster's object: `<cluster>:<name>`. */
export const mergedName = (cluster: string, name: string): string => `${cluster}:${name}`;

/** The cluster and own name a merged name says (`east:web`); `undefined` for a name that is not `<cluster>:<name>`. */
export function splitMergedName(merged: string): { cluster: string; name: string } | undefined {
  const at = merged.indexOf(":");
  if (at <= 0 || at === merged.length - 1) return undefined;
  return { cluster: merged.slice(0, at), name: merged.slice(at + 1) };
}

/**
 * A member's object as its merged key serves it: renamed `<cluster>:<name>`, at the merged
 * resourceVersion `rv`, its cluster, name and own resourceVersion in annotations. A new object:
 * the member's is not changed.
 */
export function mergedObject(cluster: string, object: KubeObject, rv: number): KubeObject {
  const metadata = object.metadata ?? {};
  const name = metadata.name ?? "";
  return {
    ...object,
    metadata: {
      ...metadata,
      name: mergedName(cluster, name),
      resourceVersion: String(rv),
      annotations: { ...metadata.annotations, [CLUSTER_ANNOTATION]: cluster, [NAME_ANNOTATION]: name, [CLUSTER_VERSION_ANNOTATION]: metadata.resourceVersion ?? "" },
    },
  };
}
