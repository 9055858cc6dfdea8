/**
 * @module
 * Who a request comes from and what it may do: bearer tokens map to users (or to the relay's
 * own all-powerful identity), and each user's rules are evaluated the way the RBAC authorizer
 * does (kubernetes `plugin/pkg/auth/authorizer/rbac`), with its reasons and the API server's
 * 403 wording (apiserver `endpoints/handlers/responsewriters/errors.go`). Users can be replaced
 * at any time; the next request sees the new rules.
 */
import { goQuote } from "../k8s/labels.ts";
import { badRequest, failure, forbidden, unauthorized } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import { isJsonObject } from "./meta.ts";

/**
 * One grant: `"*"` matches any verb, group or resource; `""` is the core group. Without
 * `namespaces` (or with `"*"` among them) it holds cluster-wide, like a ClusterRoleBinding, and so
 * also for cluster-scoped resources and all-namespaces requests; otherwise only in the listed
 * namespaces, like RoleBindings.
 */
export interface Rule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  namespaces?: string[];
}

export interface User {
  name: string;
  groups?: string[];
  tokens: string[];
  rules: Rule[];
}

/** What a request asks, as the authorizer sees it (apiserver `authorizer.Attributes`). */
export type Attributes =
  | { kind: "resource"; verb: string; group: string; resource: string; subresource: string; namespace: string; name: string }
  | { kind: "nonResource"; verb: string; path: string };

export interface Decision {
  allowed: boolean;
  /** RBAC names the binding that allowed; a denial has no reason. */
  reason: string;
}

/** An RBAC PolicyRule: resource rules have groups and resources, non-resource rules URLs. */
interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  nonResourceURLs?: readonly string[];
}

/** A rule with the binding that grants it: cluster-wide, or in one namespace. */
interface Grant {
  rule: PolicyRule;
  namespace?: string;
  /** The binding as RBAC describes it in a reason. */
  source: string;
}

/** An authenticated caller (apiserver `user.Info`) with the grants that apply to it, in RBAC's visiting order. */
export interface Identity {
  username: string;
  groups: string[];
  grants: Grant[];
}

const AUTHENTICATED = "system:authenticated";

const clusterBinding = (name: string, role: string, subject: string): string => `ClusterRoleBinding ${goQuote(name)} of ClusterRole ${goQuote(role)} to ${subject}`;

// The bootstrap policy every cluster has, bound to all authenticated users: anyone may ask who
// they are and what they may do, and read discovery (bootstrappolicy `system:basic-user`, `system:discovery`).
const EVERYONE = `Group ${goQuote(AUTHENTICATED)}`;
const BASIC_USER = clusterBinding("system:basic-user", "system:basic-user", EVERYONE);
const DEFAULT_GRANTS: readonly Grant[] = [
  { rule: { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"] }, source: BASIC_USER },
  { rule: { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] }, source: BASIC_USER },
  {
    rule: { verbs: ["get"], nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"] },
    source: clusterBinding("system:discovery", "system:discovery", EVERYONE),
  },
];

const RELAY_NAMESPACE = "kube-watch-relay";
const RELAY_ACCOUNT = "relay";

/** The relay's own credential (the `token` option): a ServiceAccount bound to cluster-admin. */
const RELAY: Identity = (() => {
  // RBAC describes a ServiceAccount subject as "name/namespace" (rule.go `describeSubject`).
  const source = clusterBinding("kube-watch-relay", "cluster-admin", `ServiceAccount ${goQuote(`${RELAY_ACCOUNT}/${RELAY_NAMESPACE}`)}`);
  return {
    username: `system:serviceaccount:${RELAY_NAMESPACE}:${RELAY_ACCOUNT}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${RELAY_NAMESPACE}`, AUTHENTICATED],
    grants: [
      { rule: { verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, source },
      { rule: { verbs: ["*"], nonResourceURLs: ["*"] }, source },
    ],
  };
})();

/**
 * The user a client certificate names, as kubeadm's `admin.conf` (and kind's, k3s's) makes it:
 * in `system:masters`, which the API server lets do anything before RBAC is asked.
 */
export function certificateIdentity(username: string): Identity {
  const source = clusterBinding("cluster-admin", "cluster-admin", `Group ${goQuote("system:masters")}`);
  return {
    username,
    groups: ["system:masters", AUTHENTICATED],
    grants: [
      { rule: { verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, source },
      { rule: { verbs: ["*"], nonResourceURLs: ["*"] }, source },
    ],
  };
}

/** A user's rules as RBAC objects: ClusterRole `sim:<name>`, bound cluster-wide or per namespace. */
function identityOf(user: User): Identity {
  const role = `sim:${user.name}`;
  const subject = `User ${goQuote(user.name)}`;
  const cluster: Grant[] = [];
  const namespaced: Grant[] = [];
  for (const { verbs, apiGroups, resources, namespaces } of user.rules) {
    const rule = { verbs, apiGroups, resources };
    if (!namespaces || namespaces.includes("*")) {
      cluster.push({ rule, source: clusterBinding(role, role, subject) });
    } else {
      for (const namespace of namespaces) namespaced.push({ rule, namespace, source: `RoleBinding ${goQuote(`${role}/${namespace}`)} of ClusterRole ${goQuote(role)} to ${subject}` });
    }
  }
  // The authenticator adds system:authenticated (AuthenticatedGroupAdder); RBAC visits ClusterRoleBindings before RoleBindings.
  const groups = user.groups?.includes(AUTHENTICATED) ? user.groups : [...(user.groups ?? []), AUTHENTICATED];
  return { username: user.name, groups, grants: [...cluster, ...DEFAULT_GRANTS, ...namespaced] };
}

const matches = (values: readonly string[] | undefined, value: string): boolean => (values ?? []).some((v) => v === "*" || v === value);

/** rbac.go `RuleAllows`, without resourceNames (rules here have none). */
function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!matches(rule.verbs, a.verb)) return false;
  if (a.kind === "nonResource") {
    // A trailing `*` is a prefix match (rbac/v1 helpers `NonResourceURLMatches`).
    return (rule.nonResourceURLs ?? []).some((url) => url === "*" || url === a.path || (url.endsWith("*") && a.path.startsWith(url.replace(/\*+$/, ""))));
  }
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return matches(rule.apiGroups, a.group) && (rule.resources ?? []).some((r) => r === "*" || r === combined || (a.subresource !== "" && r === `*/${a.subresource}`));
}

/** What SelfSubjectRulesReview reports: resource rules (verbs, apiGroups, resources) and non-resource rules (verbs, nonResourceURLs). */
export interface RulesInNamespace {
  resourceRules: Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>;
  nonResourceRules: Array<{ verbs: string[]; nonResourceURLs?: string[] }>;
}

/**
 * The rules that apply in `namespace` (rbac `RulesFor`: every ClusterRoleBinding's, then the
 * namespace's RoleBindings'), flattened: nothing says which is which, as the API server's answer.
 */
export function rulesFor(identity: Identity, namespace: string): RulesInNamespace {
  const rules: RulesInNamespace = { resourceRules: [], nonResourceRules: [] };
  for (const { rule, namespace: bound } of identity.grants) {
    if (bound !== undefined && bound !== namespace) continue;
    // authorization/v1 ResourceRule and NonResourceRule: empty lists are omitted.
    if (rule.nonResourceURLs) rules.nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
    else
      rules.resourceRules.push({
        verbs: [...rule.verbs],
        ...(rule.apiGroups?.length ? { apiGroups: [...rule.apiGroups] } : {}),
        ...(rule.resources?.length ? { resources: [...rule.resources] } : {}),
      });
  }
  return rules;
}

/** The first grant that allows, as RBAC visits them; a RoleBinding applies only to requests in its namespace. */
export function authorize(identity: Identity, attributes: Attributes): Decision {
  const namespace = attributes.kind === "resource" ? attributes.namespace : "";
  const grant = identity.grants.find((g) => (g.namespace === undefined || g.namespace === namespace) && ruleAllows(g.rule, attributes));
  return grant ? { allowed: true, reason: `RBAC: allowed by ${grant.source}` } : { allowed: false, reason: "" };
}

/** The 403 for a denied request: `pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "dev"`. */
export function forbiddenStatus(identity: Identity, a: Attributes, reason: string): Status {
  const user = `User ${goQuote(identity.username)}`;
  const why = reason ? `: ${reason}` : "";
  if (a.kind === "nonResource") return failure(403, "Forbidden", `forbidden: ${user} cannot ${a.verb} path ${goQuote(a.path)}${why}`, {});
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${goQuote(a.namespace)}` : "at the cluster scope";
  return forbidden(a.resource, a.name || undefined, `${user} cannot ${a.verb} resource ${goQuote(resource)} in API group ${goQuote(a.group)} ${scope}${why}`, a.group);
}

function strings(value: unknown, where: string, nonEmpty: boolean): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || (nonEmpty && v === ""))) {
    throw new ApiError(badRequest(`${where} must be a list of ${nonEmpty ? "non-empty " : ""}strings`));
  }
  return [...(value as string[])];
}

function parseRule(value: unknown, where: string): Rule {
  if (!isJsonObject(value)) throw new ApiError(badRequest(`${where} must be an object {verbs, apiGroups, resources, namespaces?}`));
  const rule: Rule = {
    verbs: strings(value.verbs, `${where}.verbs`, true),
    // "" is the core group.
    apiGroups: strings(value.apiGroups, `${where}.apiGroups`, false),
    resources: strings(value.resources, `${where}.resources`, true),
  };
  if (value.namespaces !== undefined) rule.namespaces = strings(value.namespaces, `${where}.namespaces`, true);
  return rule;
}

function parseUser(value: unknown, where: string): User {
  if (!isJsonObject(value)) throw new ApiError(badRequest(`${where} must be an object {name, groups?, tokens, rules}`));
  if (typeof value.name !== "string" || value.name === "") throw new ApiError(badRequest(`${where}.name must be a non-empty string`));
  const groups = value.groups === undefined ? {} : { groups: strings(value.groups, `${where}.groups`, true) };
  const tokens = strings(value.tokens, `${where}.tokens`, true);
  if (!Array.isArray(value.rules)) throw new ApiError(badRequest(`${where}.rules must be a list of rules`));
  return { name: value.name, ...groups, tokens, rules: value.rules.map((r, i) => parseRule(r, `${where}.rules[${i}]`)) };
}

/** The users and the relay's token: authentication, and the rules authorization evaluates. */
export class Users {
  readonly #relayToken: string | undefined;
  #users: User[] = [];
  #byToken = new Map<string, User>();

  constructor(relayToken: string | undefined, users: unknown) {
    this.#relayToken = relayToken;
    this.set(users);
  }

  /** Copies, so a caller cannot change rules behind the simulator's back. */
  list(): User[] {
    return structuredClone(this.#users);
  }

  /** Replace every user (400 on a malformed list); the next request is judged by the new ones. */
  set(users: unknown): void {
    if (!Array.isArray(users)) throw new ApiError(badRequest("users must be a list of {name, groups?, tokens, rules}"));
    const parsed = users.map((u, i) => parseUser(u, `users[${i}]`));
    const byToken = new Map<string, User>();
    for (const user of parsed) {
      for (const token of user.tokens) {
        // A token names exactly one identity, as it would in a real authenticator.
        if (token === this.#relayToken || byToken.has(token)) throw new ApiError(badRequest(`user "${user.name}": token "${token}" is already in use`));
        byToken.set(token, user);
      }
    }
    this.#users = parsed;
    this.#byToken = byToken;
  }

  /**
   * The caller of a request, from its `Authorization` header (bearertoken authenticator).
   * `undefined` is the open simulator: no `token` option and no credentials, so no identity and
   * no limits. A missing token when `token` is set, or a token nobody owns while a `token` or
   * users are configured, is a 401.
   */
  authenticate(authorization: string | undefined): Identity | undefined {
    const [scheme, token] = (authorization ?? "").trim().split(" ");
    const bearer = scheme?.toLowerCase() === "bearer" && token ? token : undefined;
    if (bearer !== undefined && bearer === this.#relayToken) return RELAY;
    const user = bearer === undefined ? undefined : this.#byToken.get(bearer);
    if (user) return identityOf(user);
    if (this.#relayToken !== undefined || (bearer !== undefined && this.#users.length > 0)) throw new ApiError(unauthorized());
    return undefined;
  }
}
