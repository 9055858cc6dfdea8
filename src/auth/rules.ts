/**
 * @module
 * The `rules` claim of the relay's JWTs: RBAC-like grants of get/list/watch.
 * `{"clusters"?: [...], "apiGroups": [...], "resources": [...], "namespaces": [...]}`, with
 * `"*"` as a wildcard and `""` as the core group. `namespaces: ["*"]` also grants watches across
 * all namespaces and cluster-scoped resources; a rule without `clusters` covers every cluster.
 * Subresources are named as RBAC names them: `pods/log`, or `*` then `/log` for that subresource
 * of any resource; `pods` alone does not grant `pods/log`, as in RBAC.
 */
import { ruleResource, type Access } from "./access.ts";

export interface Rule {
  clusters?: string[];
  apiGroups: string[];
  resources: string[];
  namespaces: string[];
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

/** Validate a `rules` claim; returns why it is malformed instead of guessing. */
export function parseRules(claim: unknown): Rule[] | string {
  if (claim === undefined) return [];
  if (!Array.isArray(claim)) return "the rules claim must be a list";
  const rules: Rule[] = [];
  for (const [i, r] of claim.entries()) {
    if (typeof r !== "object" || r === null) return `rules[${i}] must be an object`;
    const { clusters, apiGroups, resources, namespaces } = r as Record<string, unknown>;
    if (clusters !== undefined && !isStrings(clusters)) return `rules[${i}].clusters must be a list of strings`;
    if (!isStrings(apiGroups) || !isStrings(resources) || !isStrings(namespaces)) {
      return `rules[${i}] needs apiGroups, resources and namespaces as lists of strings`;
    }
    rules.push(clusters === undefined ? { apiGroups, resources, namespaces } : { clusters, apiGroups, resources, namespaces });
  }
  return rules;
}

const covers = (allowed: readonly string[], value: string) => allowed.includes("*") || allowed.includes(value);

// RBAC's `ResourceMatches`: `*`, the resource (with its subresource), or `*/<subresource>`.
const coversResource = (allowed: readonly string[], access: Access) => covers(allowed, ruleResource(access)) || (access.subresource !== undefined && allowed.includes(`*/${access.subresource}`));

export function allows(rules: readonly Rule[], access: Access): boolean {
  return rules.some(
    (r) =>
      (r.clusters === undefined || covers(r.clusters, access.cluster)) &&
      covers(r.apiGroups, access.group) &&
      coversResource(r.resources, access) &&
      // Across all namespaces (or cluster-scoped) needs the wildcard; one namespace needs it listed.
      (access.namespace === undefined ? r.namespaces.includes("*") : covers(r.namespaces, access.namespace)),
  );
}
