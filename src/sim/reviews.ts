/**
 * @module
 * The reviews the relay's `kube` auth mode asks for: SelfSubjectReview ("who am I"),
 * SelfSubjectAccessReview ("may I") and SelfSubjectRulesReview ("what may I, in this
 * namespace"), answered from the caller's identity and rules as the registries' `Create` does
 * (kubernetes `pkg/registry/authentication/selfsubjectreview`,
 * `pkg/registry/authorization/selfsubjectaccessreview`, `.../selfsubjectrulesreview`). Nothing
 * is stored.
 */
import { goQuote } from "../k8s/labels.ts";
import type { ResourcePath } from "../k8s/path.ts";
import { badRequest } from "../k8s/status.ts";
import { ApiError, invalid } from "./errors.ts";
import { acceptBody, isJsonObject, timestamp } from "./meta.ts";
import { authorize, rulesFor, type Attributes, type Identity } from "./rbac.ts";
import { REVIEWS } from "./resources.ts";

/** Builds the created review from the request body. */
export type Answer = (identity: Identity, body: unknown) => object;

const AUTHENTICATION = "authentication.k8s.io/v1";
const AUTHORIZATION = "authorization.k8s.io/v1";

function selfSubjectReview(identity: Identity, body: unknown): object {
  acceptBody(body, AUTHENTICATION, "SelfSubjectReview");
  // The registry stamps creationTimestamp with the time of the review; uid and extra are empty here, so omitted.
  return {
    kind: "SelfSubjectReview",
    apiVersion: AUTHENTICATION,
    metadata: { creationTimestamp: timestamp(Date.now()) },
    status: { userInfo: { username: identity.username, groups: identity.groups } },
  };
}

// authorization/v1 field order; empty strings are omitted (`omitempty`) when the review is echoed.
const RESOURCE_FIELDS = ["namespace", "verb", "group", "version", "resource", "subresource", "name"] as const;
const NON_RESOURCE_FIELDS = ["path", "verb"] as const;

/** String fields of an attributes object, "" where absent (400 where not a string, as the decoder would). */
function stringFields<F extends string>(value: Record<string, unknown>, fields: readonly F[], where: string): Record<F, string> {
  const out = {} as Record<F, string>;
  for (const field of fields) {
    const v = value[field] ?? "";
    if (typeof v !== "string") throw new ApiError(badRequest(`${where}.${field} must be a string`));
    out[field] = v;
  }
  return out;
}

const nonEmpty = (fields: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== ""));

/** `%#v` of the internal attributes struct, as field.Invalid prints a struct value. */
const goStruct = (type: string, fields: Record<string, string>): string =>
  `authorization.${type}{${Object.entries(fields)
    .map(([k, v]) => `${k[0]?.toUpperCase()}${k.slice(1)}:${goQuote(v)}`)
    .join(", ")}}`;

const invalidReview = (field: string, value: string, detail: string) =>
  new ApiError(invalid("SelfSubjectAccessReview", "authorization.k8s.io", "", field, "FieldValueInvalid", `Invalid value: ${value}: ${detail}`));

function selfSubjectAccessReview(identity: Identity, body: unknown): object {
  const review = acceptBody(body, AUTHORIZATION, "SelfSubjectAccessReview");
  const spec = isJsonObject(review.spec) ? review.spec : {};
  const attributesAt = (name: string): Record<string, unknown> | undefined => {
    const value = spec[name];
    if (value === undefined || value === null) return undefined;
    if (!isJsonObject(value)) throw new ApiError(badRequest(`spec.${name} must be an object`));
    return value;
  };
  const resourceAttributes = attributesAt("resourceAttributes");
  const nonResourceAttributes = attributesAt("nonResourceAttributes");
  let attributes: Attributes;
  let echoed: Record<string, unknown>;
  if (resourceAttributes) {
    if (nonResourceAttributes) {
      const fields = stringFields(nonResourceAttributes, NON_RESOURCE_FIELDS, "spec.nonResourceAttributes");
      throw invalidReview("spec.nonResourceAttributes", goStruct("NonResourceAttributes", fields), "cannot be specified in combination with resourceAttributes");
    }
    const fields = stringFields(resourceAttributes, RESOURCE_FIELDS, "spec.resourceAttributes");
    attributes = { kind: "resource", ...fields };
    // Selectors travel with the review (AuthorizeWithSelectors); RBAC does not look at them.
    const selectors = Object.fromEntries(["fieldSelector", "labelSelector"].filter((k) => isJsonObject(resourceAttributes[k])).map((k) => [k, resourceAttributes[k]]));
    echoed = { resourceAttributes: { ...nonEmpty(fields), ...selectors } };
  } else if (nonResourceAttributes) {
    const fields = stringFields(nonResourceAttributes, NON_RESOURCE_FIELDS, "spec.nonResourceAttributes");
    attributes = { kind: "nonResource", ...fields };
    echoed = { nonResourceAttributes: nonEmpty(fields) };
  } else {
    throw invalidReview("spec.resourceAttributes", '"null"', "exactly one of nonResourceAttributes or resourceAttributes must be specified");
  }
  const decision = authorize(identity, attributes);
  // The API server takes only empty metadata (not checked here) and, since 1.34, omits the zero creationTimestamp.
  return {
    kind: "SelfSubjectAccessReview",
    apiVersion: AUTHORIZATION,
    metadata: {},
    spec: echoed,
    status: { allowed: decision.allowed, reason: decision.reason || undefined },
  };
}

function selfSubjectRulesReview(identity: Identity, body: unknown): object {
  const review = acceptBody(body, AUTHORIZATION, "SelfSubjectRulesReview");
  const spec = isJsonObject(review.spec) ? review.spec : {};
  const namespace = spec.namespace ?? "";
  if (typeof namespace !== "string") throw new ApiError(badRequest("spec.namespace must be a string"));
  if (namespace === "") throw new ApiError(badRequest("no namespace on request"));
  // The registry answers with the status alone: the spec is not echoed, and RBAC's rules are complete.
  return { kind: "SelfSubjectRulesReview", apiVersion: AUTHORIZATION, metadata: {}, spec: {}, status: { ...rulesFor(identity, namespace), incomplete: false } };
}

const ANSWERS: Record<string, Answer> = {
  selfsubjectreviews: selfSubjectReview,
  selfsubjectaccessreviews: selfSubjectAccessReview,
  selfsubjectrulesreviews: selfSubjectRulesReview,
};

/**
 * The answer for a review's collection path, or `undefined` if the path names no review this
 * cluster serves: without `selfSubjectReviews` it is one from before Kubernetes 1.28, where
 * SelfSubjectReview is not served in authentication.k8s.io/v1 (so its path is a 404).
 */
export function reviewAnswer(path: ResourcePath, served: { selfSubjectReviews: boolean }): Answer | undefined {
  const review = REVIEWS.find((r) => r.group === path.group && r.version === path.version && r.resource === path.resource);
  if (!review || (review.resource === "selfsubjectreviews" && !served.selfSubjectReviews)) return undefined;
  return ANSWERS[review.resource];
}
