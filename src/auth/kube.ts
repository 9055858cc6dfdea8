/**
 * @module
 * `AUTH_MODE=kube`: the subscriber's own Kubernetes token, checked by the cluster itself. A
 * SelfSubjectReview says who the token is (and whether it is valid at all); a
 * SelfSubjectAccessReview says whether that user may do what the request asks. Both are made
 * with the subscriber's token, never the relay's. A cluster older than 1.28 has no
 * SelfSubjectReview: there a SelfSubjectAccessReview alone says the token is valid, and the
 * subject is named after the token's hash.
 *
 * All of that holds only if the upstream authenticates each request by the token it carries.
 * One that authenticates requests itself answers every review for its own user, whatever the
 * token: `kubectl proxy` with a client-certificate kubeconfig does (the API server authenticates
 * a client certificate before any bearer token). `answersAnyToken` finds such an upstream by
 * asking who a made-up token is.
 */
import type { Access } from "./access.ts";
import { tokenId } from "./token.ts";

/** What the reviews are asked of: a cluster's `Upstream`, or (`npm start`'s check, in Node) a plain fetch of the same shape. */
export interface ReviewUpstream {
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
}

export type Review<T> = { ok: true; value: T } | { ok: false; unauthenticated: boolean; reason: string; status?: number };

const SELF_SUBJECT_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const SELF_SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

async function post(upstream: ReviewUpstream, token: string, path: string, body: unknown): Promise<Review<Record<string, unknown>>> {
  let response: Response;
  try {
    response = await upstream.fetch(path, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch (e) {
    return { ok: false, unauthenticated: false, reason: `the cluster could not be asked: ${(e as Error).message}` };
  }
  if (response.status === 401) return { ok: false, unauthenticated: true, reason: "the cluster does not accept this token" };
  if (!response.ok) return { ok: false, unauthenticated: false, reason: `the cluster answered ${response.status}`, status: response.status };
  try {
    return { ok: true, value: (await response.json()) as Record<string, unknown> };
  } catch {
    return { ok: false, unauthenticated: false, reason: "the cluster's review is not JSON" };
  }
}

/** The subject of a token on a cluster that cannot say whose it is: its hash (`tokenId`), never the token. */
export const hashedSubject = (tokenId: string): string => `token-sha256:${tokenId}`;

/** Who the token is (SelfSubjectReview, Kubernetes 1.28+; before, the token's hash). */
export async function whoAmI(upstream: ReviewUpstream, token: string, tokenId: string): Promise<Review<string>> {
  const review = await post(upstream, token, SELF_SUBJECT_REVIEWS, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
  if (!review.ok) return review.status === 404 ? accepted(upstream, token, tokenId) : review;
  const username = (review.value.status as { userInfo?: { username?: unknown } } | undefined)?.userInfo?.username;
  return typeof username === "string" && username !== "" ? { ok: true, value: username } : { ok: false, unauthenticated: false, reason: "the cluster's review names no user" };
}

/**
 * Whether the cluster takes the token at all: any SelfSubjectAccessReview it answers says so
 * (an invalid token gets 401 whatever it asks), so ask one any authenticated user may make.
 */
async function accepted(upstream: ReviewUpstream, token: string, tokenId: string): Promise<Review<string>> {
  const review = await post(upstream, token, SELF_SUBJECT_ACCESS_REVIEWS, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { nonResourceAttributes: { path: "/api", verb: "get" } },
  });
  return review.ok ? { ok: true, value: hashedSubject(tokenId) } : review;
}

/** Whether the token's user may do `access` (SelfSubjectAccessReview). */
export async function mayAccess(upstream: ReviewUpstream, token: string, access: Access): Promise<Review<boolean>> {
  const resourceAttributes: Record<string, string> = { verb: access.verb, group: access.group, resource: access.resource };
  if (access.namespace !== undefined) resourceAttributes.namespace = access.namespace;
  if (access.name !== undefined) resourceAttributes.name = access.name;
  if (access.subresource !== undefined) resourceAttributes.subresource = access.subresource;
  const review = await post(upstream, token, SELF_SUBJECT_ACCESS_REVIEWS, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes },
  });
  if (!review.ok) return review;
  return { ok: true, value: (review.value.status as { allowed?: unknown } | undefined)?.allowed === true };
}

const SELF_SUBJECT_RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

/** The rules the token's user has in `namespace` (SelfSubjectRulesReview): cluster-wide ones and the namespace's own, flattened. */
export async function rulesIn(
  upstream: ReviewUpstream,
  token: string,
  namespace: string,
): Promise<Review<{ rules: Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>; incomplete: boolean }>> {
  const review = await post(upstream, token, SELF_SUBJECT_RULES_REVIEWS, { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } });
  if (!review.ok) return review;
  const status = (review.value.status ?? {}) as { resourceRules?: unknown; incomplete?: unknown };
  const rules = Array.isArray(status.resourceRules) ? (status.resourceRules as Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>).filter((r) => Array.isArray(r?.verbs)) : [];
  return { ok: true, value: { rules, incomplete: status.incomplete === true } };
}

/**
 * Who the upstream says a made-up token is: `undefined` when it refuses it (401), as an API
 * server reached directly does; a user when it answers for it (the user its proxy authenticates
 * as; on a cluster before 1.28, which cannot name users, the made-up token's hashed subject);
 * a failure when it cannot be asked.
 */
export async function answersAnyToken(upstream: ReviewUpstream): Promise<Review<string | undefined>> {
  const token = `kube-watch-relay-check.${[...crypto.getRandomValues(new Uint8Array(24))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  const review = await whoAmI(upstream, token, await tokenId(token));
  if (review.ok) return review;
  if (review.unauthenticated) return { ok: true, value: undefined };
  // Authenticated, but not let ask who it is: still not a refusal of the token.
  if (review.status === 403) return { ok: true, value: "(a user the upstream does not name)" };
  return review;
}

/** Why kube mode cannot use an upstream that answers a made-up token as `user`, and what to do instead. */
export function answersAnyTokenProblem(where: string, user: string): string {
  return (
    `${where} answers a review for a made-up token as user "${user}", so AUTH_MODE=kube would give every token that user's rights. ` +
    "kubectl proxy does this when its kubeconfig authenticates with a client certificate (kind, kubeadm's admin.conf, k3s): the API server " +
    "authenticates the certificate before any bearer token. Point kube mode at the API server itself, or at a kubectl proxy whose kubeconfig " +
    "authenticates with a bearer token (a ServiceAccount token, or an exec plugin that issues tokens), which passes each caller's token through"
  );
}
