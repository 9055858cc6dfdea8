/**
 * @module
 * What a request asks to do, in the terms authorization is decided in: a verb on a resource of
 * a group, in a namespace (or across all of them), on a cluster. The same attributes go to a
 * JWT rule check and to a SelfSubjectAccessReview.
 */
import type { KubeVerb } from "../k8s/types.ts";

/** The verbs the relay serves: it is read-only. */
export type Verb = Extract<KubeVerb, "get" | "list" | "watch">;

export interface Access {
  cluster: string;
  verb: Verb;
  group: string;
  resource: string;
  /** `undefined`: every namespace, or a cluster-scoped resource. */
  namespace: string | undefined;
  /** A single object (`get`, or a watch by name). */
  name?: string | undefined;
  /** A subresource of it (`log` of a pod: `get` on `pods/log`), as RBAC names them. */
  subresource?: string | undefined;
}

/** The resource as RBAC rules name it: `pods`, or `pods/log` for a subresource. */
export const ruleResource = (access: Access): string => (access.subresource ? `${access.resource}/${access.subresource}` : access.resource);

/** What a subscriber was granted, and how to keep checking it. */
export interface Grant {
  subject: string;
  /** jwt: when the token expires (epoch ms). */
  expiresAt?: number | undefined;
  /** kube: the subscriber's token and what it was allowed, to ask the cluster again. */
  recheck?: { token: string; access: Access } | undefined;
}

/** One string per distinct access, for caches of answers about it. */
export const accessKey = (access: Access): string => JSON.stringify([access.cluster, access.verb, access.group, ruleResource(access), access.namespace ?? "", access.name ?? ""]);

/** RBAC's wording: `User "alice" cannot watch resource "pods" in API group "" in the namespace "dev"` (`"pods/log"` for a subresource). */
export function describeDenial(subject: string, access: Access): string {
  const where = access.namespace === undefined ? "at the cluster scope" : `in the namespace "${access.namespace}"`;
  return `User "${subject}" cannot ${access.verb} resource "${ruleResource(access)}" in API group "${access.group}" ${where}`;
}
