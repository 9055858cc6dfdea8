/**
 * @module
 * What a token may read through the relay, on one cluster, as the `AccessSummary` the relay
 * answers at `/_relay/access`: the rules that hold everywhere (every namespace at once, and
 * cluster-scoped resources), and the namespaces where it may read more, with those rules. Only
 * the relay's verbs (get, list, watch) are kept. It says what the token itself may do, and so no
 * more than trying would tell its holder: a namespace is named only where the token has rules
 * of its own there.
 *
 * In `jwt` mode the token's rules say it exactly. In `kube` mode the cluster says it: a
 * SelfSubjectRulesReview per namespace (which flattens the cluster-wide rules into each
 * namespace's), and SelfSubjectAccessReviews to tell which of the rules every namespace shares
 * hold cluster-wide, bounded (`kubeSummary`).
 */
import type { Access, Verb } from "./access.ts";
import type { Rule } from "./rules.ts";

export const SUMMARY_API_VERSION = "relay.kube-watch-relay.dev/v1";

/** authorization/v1's ResourceRule, the relay's verbs only. */
export interface ResourceRule {
  verbs: Verb[];
  apiGroups: string[];
  resources: string[];
}

export interface AccessSummary {
  kind: "AccessSummary";
  apiVersion: typeof SUMMARY_API_VERSION;
  metadata: Record<string, never>;
  status: {
    /** Who the token is (absent in `none` mode). */
    user?: string;
    cluster: string;
    /** What it may read across all namespaces, and of cluster-scoped resources. */
    clusterRules: ResourceRule[];
    /** Namespaces where it may read more than `clusterRules` say, with what more; by name. */
    namespaces: Array<{ name: string; resourceRules: ResourceRule[] }>;
    /** The answer may leave out some of what the token may read (`evaluationError` says why). */
    incomplete: boolean;
    evaluationError?: string;
  };
}

const VERBS: readonly Verb[] = ["get", "list", "watch"];

/** A rule's verbs that the relay serves (`*` is all of them); `undefined` when none. */
function relayRule(rule: { verbs: readonly string[]; apiGroups?: readonly string[]; resources?: readonly string[] }): ResourceRule | undefined {
  const verbs = rule.verbs.includes("*") ? [...VERBS] : VERBS.filter((v) => rule.verbs.includes(v));
  // A rule without groups or resources matches nothing, as RBAC matches them.
  if (verbs.length === 0 || !rule.resources?.length || !rule.apiGroups?.length) return undefined;
  return { verbs, apiGroups: [...(rule.apiGroups ?? [])], resources: [...rule.resources] };
}

const ruleKey = (rule: ResourceRule): string => JSON.stringify([rule.verbs, rule.apiGroups, rule.resources]);

export function summary(cluster: string, user: string | undefined, parts: Omit<AccessSummary["status"], "cluster" | "user">): AccessSummary {
  const namespaces = [...parts.namespaces].sort((a, b) => a.name.localeCompare(b.name));
  return { kind: "AccessSummary", apiVersion: SUMMARY_API_VERSION, metadata: {}, status: { ...(user === undefined ? {} : { user }), cluster, ...parts, namespaces } };
}

/** `none` mode: everything. */
export const everything = (cluster: string): AccessSummary =>
  summary(cluster, undefined, { clusterRules: [{ verbs: [...VERBS], apiGroups: ["*"], resources: ["*"] }], namespaces: [], incomplete: false });

/** `jwt` mode: the token's rules that cover `cluster`, as they say. */
export function jwtSummary(cluster: string, user: string, rules: readonly Rule[]): AccessSummary {
  const clusterRules: ResourceRule[] = [];
  const byNamespace = new Map<string, ResourceRule[]>();
  for (const rule of rules) {
    if (rule.clusters !== undefined && !rule.clusters.includes("*") && !rule.clusters.includes(cluster)) continue;
    const read: ResourceRule = { verbs: [...VERBS], apiGroups: [...rule.apiGroups], resources: [...rule.resources] };
    if (rule.namespaces.includes("*")) clusterRules.push(read);
    else for (const namespace of rule.namespaces) byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), read]);
  }
  return summary(cluster, user, { clusterRules, namespaces: [...byNamespace].map(([name, resourceRules]) => ({ name, resourceRules })), incomplete: false });
}

/** What `kubeSummary` asks the cluster. */
export interface KubeQuestions {
  /** The token's rules in a namespace (SelfSubjectRulesReview), or why they cannot be had. */
  rulesIn(namespace: string): Promise<{ ok: true; rules: Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>; incomplete: boolean } | { ok: false; reason: string }>;
  /** Whether the token may do `access` (SelfSubjectAccessReview; `namespace` undefined: across all of them). */
  may(access: Omit<Access, "cluster">): Promise<boolean | undefined>;
}

/** At most this many access reviews confirm which shared rules hold cluster-wide. */
export const MAX_CLUSTER_CHECKS = 30;

/**
 * `kube` mode: the cluster's answers for `namespaces` (those the relay knows of). A rule every
 * namespace's review reports may come from a ClusterRoleBinding or from a RoleBinding in each:
 * it counts as cluster-wide only once access reviews across all namespaces allow each of its
 * verbs on each of its groups and resources (at most `MAX_CLUSTER_CHECKS` of them; beyond, the
 * rest stay per namespace and the summary is incomplete).
 */
export async function kubeSummary(cluster: string, user: string, namespaces: readonly string[], ask: KubeQuestions, incomplete: string | undefined): Promise<AccessSummary> {
  const answers = await Promise.all(namespaces.map(async (name) => ({ name, answer: await ask.rulesIn(name) })));
  const reasons = new Set<string>(incomplete === undefined ? [] : [incomplete]);
  const found = new Map<string, ResourceRule[]>();
  for (const { name, answer } of answers) {
    if (!answer.ok) {
      reasons.add(answer.reason);
      continue;
    }
    if (answer.incomplete) reasons.add(`the cluster's rules for namespace "${name}" are incomplete`);
    const rules = new Map<string, ResourceRule>();
    for (const rule of answer.rules.map(relayRule)) if (rule) rules.set(ruleKey(rule), rule);
    found.set(name, [...rules.values()]);
  }
  const shared =
    [...found.values()].reduce<ResourceRule[] | undefined>((common, rules) => (common === undefined ? rules : common.filter((r) => rules.some((o) => ruleKey(o) === ruleKey(r)))), undefined) ?? [];
  const clusterRules: ResourceRule[] = [];
  let checks = 0;
  for (const rule of shared) {
    const accesses = rule.verbs.flatMap((verb) => rule.apiGroups.flatMap((group) => rule.resources.map((resource) => ({ verb, group, resource, namespace: undefined }))));
    if (checks + accesses.length > MAX_CLUSTER_CHECKS) {
      reasons.add(`the relay asks the cluster at most ${MAX_CLUSTER_CHECKS} questions about rules that may hold cluster-wide`);
      continue;
    }
    checks += accesses.length;
    const allowed = await Promise.all(accesses.map((access) => ask.may(access)));
    if (allowed.every((a) => a === true)) clusterRules.push(rule);
    else if (allowed.some((a) => a === undefined)) reasons.add("the cluster could not say whether some rules hold cluster-wide");
  }
  const everywhere = new Set(clusterRules.map(ruleKey));
  const more = [...found].flatMap(([name, rules]) => {
    const own = rules.filter((r) => !everywhere.has(ruleKey(r)));
    return own.length > 0 ? [{ name, resourceRules: own }] : [];
  });
  return summary(cluster, user, { clusterRules, namespaces: more, incomplete: reasons.size > 0, ...(reasons.size > 0 ? { evaluationError: [...reasons].join("; ") } : {}) });
}
