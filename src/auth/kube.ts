/**
 * @module
 * `AUTH_MODE=kube`: the subscriber's own Kubernetes token, checked by the cluster itself. A
 * SelfSubjectReview says who the token is (and whether it is valid at all); a
 * SelfSubjectAccessReview says whether that user may do what the request asks. Both are made
 * with the subscriber's token, never the relay's. A cluster older than 1.28 has no
 * SelfSubjectReview: there a SelfSubjectAccessReview alone says the token is valid, and the
 * subject is named after the token's hash.
 */
import type { Upstream } from "../upstream.ts";
import type { Access } from "./access.ts";

export type Review<T> = { ok: true; value: T } | { ok: false; unauthenticated: boolean; reason: string; status?: number };

const SELF_SUBJECT_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const SELF_SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

async function post(upstream: Upstream, token: string, path: string, body: unknown): Promise<Review<Record<string, unknown>>> {
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
export async function whoAmI(upstream: Upstream, token: string, tokenId: string): Promise<Review<string>> {
  const review = await post(upstream, token, SELF_SUBJECT_REVIEWS, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
  if (!review.ok) return review.status === 404 ? accepted(upstream, token, tokenId) : review;
  const username = (review.value.status as { userInfo?: { username?: unknown } } | undefined)?.userInfo?.username;
  return typeof username === "string" && username !== "" ? { ok: true, value: username } : { ok: false, unauthenticated: false, reason: "the cluster's review names no user" };
}

/**
 * Whether the cluster takes the token at all: any SelfSubjectAccessReview it answers says so
 * (an invalid token gets 401 whatever it asks), so ask one any authenticated user may make.
 */
async function accepted(upstream: Upstream, token: string, tokenId: string): Promise<Review<string>> {
  const review = await post(upstream, token, SELF_SUBJECT_ACCESS_REVIEWS, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { nonResourceAttributes: { path: "/api", verb: "get" } },
  });
  return review.ok ? { ok: true, value: hashedSubject(tokenId) } : review;
}

/** Whether the token's user may do `access` (SelfSubjectAccessReview). */
export async function mayAccess(upstream: Upstream, token: string, access: Access): Promise<Review<boolean>> {
  const resourceAttributes: Record<string, string> = { verb: access.verb, group: access.group, resource: access.resource };
  if (access.namespace !== undefined) resourceAttributes.namespace = access.namespace;
  if (access.name !== undefined) resourceAttributes.name = access.name;
  const review = await post(upstream, token, SELF_SUBJECT_ACCESS_REVIEWS, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes },
  });
  if (!review.ok) return review;
  return { ok: true, value: (review.value.status as { allowed?: unknown } | undefined)?.allowed === true };
}
