/**
 * @module
 * Who may watch what, decided in the Worker before any hub is touched (`AUTH_MODE`):
 * - `jwt`: the relay's own HS256 tokens, whose `rules` claim lists what they may read;
 * - `kube`: the subscriber's Kubernetes token, checked by the cluster (SelfSubjectReview,
 *   SelfSubjectAccessReview; on clusters before 1.28 the latter alone), decisions cached
 *   briefly per token hash and access, a token the cluster refused too (for less long), and
 *   the reviews of tokens not known yet limited per client and per isolate (`review-limiter.ts`);
 * - `none`: everyone may read everything (local use only);
 * - unset: nothing is served until it is configured.
 * `DENY_RESOURCES` are refused whatever the token says. Logs name the subject and the
 * decision, never the token.
 */
import { accessKey, describeDenial, ruleResource, type Access } from "../auth/access.ts";
import { verifyJwt } from "../auth/jwt.ts";
import { authMode, type AuthMode } from "../auth/mode.ts";
import { answersAnyToken, answersAnyTokenProblem, mayAccess, whoAmI, type Review } from "../auth/kube.ts";
import { clientOf, REVIEW_LIMITS, ReviewLimiter, type ReviewLimit } from "../auth/review-limiter.ts";
import { allows, type Rule } from "../auth/rules.ts";
import { bearerToken, tokenId } from "../auth/token.ts";
import { list } from "../config.ts";
import type { Vars } from "../vars.ts";
import { failure, forbidden, serviceUnavailable, tooManyRequests, unauthorized, type Result } from "../k8s/status.ts";
import { hostRefusal } from "./hosts.ts";
import { BEARER_PROTOCOL_PREFIX, isWebSocketUpgrade } from "../k8s/websocket.ts";
import type { Status } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import type { Log } from "../log.ts";
import type { RefusalReason } from "../metrics/catalog.ts";
import { join } from "./shared-work.ts";

/** Who is asking, as the hub needs to know it to keep checking. */
export interface Identity {
  mode: AuthMode;
  /** `undefined` only in `none` mode. */
  subject: string | undefined;
  /** jwt: when the token expires (epoch ms). */
  expiresAt?: number;
  /** jwt: what the token grants. */
  rules?: Rule[];
  /** kube: the subscriber's token, for the cluster's reviews (kept in memory only). */
  token?: string;
  tokenId?: string;
}

const NOT_ACCEPTED = "the cluster does not accept this bearer token";
/** How long a kube-mode decision stands before the cluster is asked again. */
const DECISION_TTL_MS = 30_000;
const DECISIONS_MAX = 10_000;
/**
 * How long a token the cluster refused (401) is refused without asking again: long enough that
 * a client repeating one bad token costs the cluster one review per period, short enough that
 * a token the cluster starts accepting (just issued, a clock a little behind) works soon.
 */
const REFUSAL_TTL_MS = 10_000;
const REFUSALS_MAX = 10_000;

/**
 * How long an isolate trusts what it found of a cluster's upstream (whether it answers a made-up
 * token), and how long a failure to find out stands before it asks again.
 */
const UPSTREAM_CHECK_TTL_MS = 5 * 60_000;
const UPSTREAM_CHECK_RETRY_MS = 5_000;

/** A review the limits did not let start. */
type Limited = { ok: false; retryAfterSeconds: number; limit: ReviewLimit };

/** `DENY_RESOURCES` (default `secrets`): `resource` in any group, or `resource.group`; a subresource too (`pods/log`), or its resource. */
export function deniedResource(env: Vars, group: string, resource: string, subresource?: string): boolean {
  return list(env, "DENY_RESOURCES", ["secrets"]).some((d) => d === resource || d === `${resource}.${group}` || (subresource !== undefined && d === `${resource}/${subresource}`));
}

/** A browser WebSocket may only come from the relay's own origin or an `ALLOWED_ORIGINS` one (cross-site WebSocket hijacking). */
export function originAllowed(env: Vars, request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null || !isWebSocketUpgrade(request)) return true;
  const allowed = list(env, "ALLOWED_ORIGINS");
  return allowed.includes("*") || allowed.includes(origin) || origin === new URL(request.url).origin;
}

/** The 403 for a WebSocket from an origin not allowed. */
export function originRefusal(env: Vars, request: Request, refused: (reason: RefusalReason) => void): Status | undefined {
  if (originAllowed(env, request)) return undefined;
  refused("origin");
  return failure(403, "Forbidden", `WebSocket connections from origin ${request.headers.get("origin")} are not allowed (ALLOWED_ORIGINS)`, {});
}

/** Before any token: `AUTH_MODE` is set, and the request names a host the relay answers to. */
export function frontDoor(env: Vars, request: Request, refused: (reason: RefusalReason) => void): Result<AuthMode> {
  const mode = authMode(env);
  if (!mode.ok) return mode;
  const wrongHost = hostRefusal(env, mode.value, new URL(request.url));
  if (!wrongHost) return mode;
  refused("host");
  return { ok: false, status: wrongHost };
}

const forbiddenFor = (access: Access, message: string): Status => forbidden(access.resource, access.name, message, access.group);

/** One per isolate: it holds the cache of the cluster's recent decisions. */
export class Authenticator {
  readonly #decisions = new Map<string, { value: string | boolean; until: number }>();
  /** Token reviews the cluster answered 401, until when they stand; apart, so refusals cannot push decisions out. */
  readonly #refusals = new Map<string, number>();
  /** Reviews being asked, shared by the requests that need the same answer meanwhile. */
  readonly #asking = new Map<string, Promise<Review<string | boolean>>>();
  readonly #limiter = new ReviewLimiter(REVIEW_LIMITS, () => Date.now());
  /** Per cluster: why kube mode cannot use its upstream (`undefined`: it can), and until when that stands. */
  readonly #upstreamChecks = new Map<string, { problem: Promise<string | undefined>; until: number }>();
  readonly #log: Log;
  readonly #refused: (reason: RefusalReason) => void;

  /** `refused`: told of each refusal, by reason (metrics). */
  constructor(log: Log, refused: (reason: RefusalReason) => void) {
    this.#log = log;
    this.#refused = refused;
  }

  /**
   * Who the request is, before anything about its cluster is said: `upstream` is `undefined` for
   * a cluster that is not configured, which in `kube` mode (where only a cluster can vouch for a
   * token) is refused exactly as a token that cluster does not accept. `counted`: whether a
   * refusal counts as the request's (a merged key's member refusing the token does not, `gate.ts`).
   */
  async authenticate(mode: AuthMode, env: Vars, request: Request, upstream: Upstream | undefined, counted = true): Promise<Result<Identity>> {
    const refused = counted ? this.#refused : () => undefined;
    if (mode === "none") return { ok: true, value: { mode, subject: undefined } };
    const credential = this.#token(request, refused);
    if (!credential.ok) return credential;
    const token = credential.value;
    if (mode === "jwt") {
      const verified = await verifyJwt(token, env.AUTH_JWT_SECRET as string);
      if ("refused" in verified) return this.#refuse(verified.refused, refused);
      return { ok: true, value: { mode, subject: verified.subject, expiresAt: verified.expiresAt, rules: verified.rules } };
    }
    if (!upstream) return this.#refuse(NOT_ACCEPTED, refused);
    const problem = await this.kubeUpstreamProblem(upstream);
    if (problem !== undefined) {
      refused("unverifiable");
      return { ok: false, status: serviceUnavailable(`the relay cannot verify the bearer token with cluster "${upstream.cluster}": ${problem}`, 5) };
    }
    const id = await tokenId(token);
    const subject = await this.#cached(`who|${upstream.cluster}|${id}`, () => whoAmI(upstream, token, id), clientOf(request));
    if (!subject.ok) {
      if ("retryAfterSeconds" in subject) return this.#limited(subject, refused);
      if (subject.unauthenticated) return this.#refuse(NOT_ACCEPTED, refused);
      refused("unverifiable");
      return { ok: false, status: serviceUnavailable(`the relay cannot verify the bearer token now: ${subject.reason}`, 5) };
    }
    return { ok: true, value: { mode, subject: subject.value as string, token, tokenId: id } };
  }

  /** The request's bearer token, or the 401 for its absence or form. */
  #token(request: Request, refused: (reason: RefusalReason) => void): Result<string> {
    const credential = bearerToken(request);
    if (!credential.ok) return this.#refuse(credential.reason, refused);
    if (credential.token === undefined) return this.#refuse(`no bearer token (Authorization: Bearer, or the ${BEARER_PROTOCOL_PREFIX}<token> WebSocket subprotocol beside one other)`, refused);
    return { ok: true, value: credential.token };
  }

  /** `undefined` when allowed; otherwise the 403 (or, if the cluster cannot be asked, 503: fail closed). */
  async authorize(identity: Identity, access: Access, upstream: Upstream, env: Vars): Promise<Status | undefined> {
    const subject = identity.subject ?? "anonymous";
    if (deniedResource(env, access.group, access.resource, access.subresource)) {
      return this.#deny(subject, access, forbiddenFor(access, `the relay never relays ${ruleResource(access)} (DENY_RESOURCES)`), "denied_resource");
    }
    let allowed: boolean;
    if (identity.mode === "none") allowed = true;
    else if (identity.mode === "jwt") allowed = allows(identity.rules ?? [], access);
    else {
      const key = `may|${identity.tokenId}|${accessKey(access)}`;
      const review = await this.#cached(key, () => mayAccess(upstream, identity.token as string, access));
      if (!review.ok) {
        this.#log("access check failed: denied", { subject, cluster: access.cluster, verb: access.verb, resource: access.resource, namespace: access.namespace, reason: review.reason });
        this.#refused("unverifiable");
        return serviceUnavailable(`the relay cannot check this access now, so it refuses it: ${review.reason}`, 5);
      }
      allowed = review.value === true;
    }
    if (!allowed) return this.#deny(subject, access, forbiddenFor(access, describeDenial(subject, access)), "forbidden");
    this.#log("access allowed", { subject, cluster: access.cluster, verb: access.verb, group: access.group, resource: access.resource, namespace: access.namespace }, "debug");
    return undefined;
  }

  /**
   * Whether the identity may do `access`, for a summary of its rights rather than a request: the
   * same decision as `authorize` (and, in `kube` mode, the same cached review), without its
   * refusals counted or logged; `undefined` when the cluster cannot be asked.
   */
  async may(identity: Identity, access: Access, upstream: Upstream): Promise<boolean | undefined> {
    if (identity.mode === "none") return true;
    if (identity.mode === "jwt") return allows(identity.rules ?? [], access);
    const review = await this.#cached(`may|${identity.tokenId}|${accessKey(access)}`, () => mayAccess(upstream, identity.token as string, access));
    return review.ok ? review.value === true : undefined;
  }

  #deny(subject: string, access: Access, status: Status, reason: RefusalReason): Status {
    this.#refused(reason);
    this.#log("access denied", { subject, cluster: access.cluster, verb: access.verb, group: access.group, resource: access.resource, namespace: access.namespace });
    return status;
  }

  #refuse(reason: string, refused = this.#refused): { ok: false; status: Status } {
    refused("unauthenticated");
    this.#log("authentication refused", { reason });
    return { ok: false, status: unauthorized(`Unauthorized: ${reason}`) };
  }

  /**
   * Why kube mode cannot verify tokens through this cluster's upstream, or `undefined`: an
   * upstream that answers a made-up token's review as some user (a client-certificate
   * `kubectl proxy`) would answer every subscriber's review for that user. Asked once per
   * isolate and period (`/readyz` asks too), so it costs the cluster one review now and then.
   */
  kubeUpstreamProblem(upstream: Upstream): Promise<string | undefined> {
    const now = Date.now();
    const last = this.#upstreamChecks.get(upstream.cluster);
    if (last && last.until > now)
      return join(last.problem, () => {
        // Not settled in time: the request that started the check may be gone (`shared-work.ts`); check anew.
        if (this.#upstreamChecks.get(upstream.cluster) === last) this.#upstreamChecks.delete(upstream.cluster);
        return this.kubeUpstreamProblem(upstream);
      });
    const entry = { problem: this.#checkUpstream(upstream), until: now + UPSTREAM_CHECK_TTL_MS };
    this.#upstreamChecks.set(upstream.cluster, entry);
    return entry.problem;
  }

  async #checkUpstream(upstream: Upstream): Promise<string | undefined> {
    const answer = await answersAnyToken(upstream);
    const entry = this.#upstreamChecks.get(upstream.cluster);
    if (!answer.ok) {
      if (entry) entry.until = Math.min(entry.until, Date.now() + UPSTREAM_CHECK_RETRY_MS);
      return `it could not check the upstream: ${answer.reason}`;
    }
    if (answer.value === undefined) return undefined;
    const problem = answersAnyTokenProblem("the upstream", answer.value);
    this.#log("kube mode refused: the upstream answers any token", { cluster: upstream.cluster, user: answer.value });
    return problem;
  }

  /** The 429 for a token review the limits did not let start. */
  #limited(limited: Limited, refused: (reason: RefusalReason) => void): { ok: false; status: Status } {
    refused("rate_limited");
    const { perClientBurst, perClientPerSecond, isolateBurst, isolatePerSecond, inFlight } = REVIEW_LIMITS;
    const why = {
      client: `the relay asks the cluster about at most ${perClientBurst} new tokens at once and ${perClientPerSecond} a second for one client`,
      isolate: `the relay asks the cluster about at most ${isolateBurst} new tokens at once and ${isolatePerSecond} a second for all its clients`,
      inFlight: `the relay asks the cluster about at most ${inFlight} new tokens at a time`,
    }[limited.limit];
    this.#log("token review limited", { limit: limited.limit });
    return { ok: false, status: tooManyRequests(`too many tokens to review: ${why}; try again in ${limited.retryAfterSeconds} s`, limited.retryAfterSeconds) };
  }

  /**
   * A cluster review, reused for a short while (a 401 too, for less long); failures to ask are
   * never cached. Requests that need a review being asked wait for its answer. With `client`,
   * a review is a token's, and starts only within the limits.
   */
  #cached<T extends string | boolean>(key: string, review: () => Promise<Review<T>>): Promise<Review<T>>;
  #cached<T extends string | boolean>(key: string, review: () => Promise<Review<T>>, client: string): Promise<Review<T> | Limited>;
  async #cached<T extends string | boolean>(key: string, review: () => Promise<Review<T>>, client?: string): Promise<Review<T> | Limited> {
    const now = Date.now();
    const hit = this.#decisions.get(key);
    if (hit && hit.until > now) return { ok: true, value: hit.value as T };
    const refusedUntil = this.#refusals.get(key);
    if (refusedUntil !== undefined && refusedUntil > now) return { ok: false, unauthenticated: true, reason: "the cluster refused this token a moment ago" };
    const asking = this.#asking.get(key) as Promise<Review<T>> | undefined;
    if (asking)
      return join(asking, () => {
        // Not answered in time: the request that asked may be gone (`shared-work.ts`); ask anew, or join whoever did.
        if (this.#asking.get(key) === asking) this.#asking.delete(key);
        return client === undefined ? this.#cached(key, review) : this.#cached(key, review, client);
      });
    const slot = client === undefined ? undefined : this.#limiter.take(client);
    if (slot && "retryAfterSeconds" in slot) return { ok: false, ...slot };
    const answer = review().then((result) => {
      const at = Date.now();
      if (result.ok) remember(this.#decisions, key, { value: result.value, until: at + DECISION_TTL_MS }, DECISIONS_MAX);
      else if (result.unauthenticated) remember(this.#refusals, key, at + REFUSAL_TTL_MS, REFUSALS_MAX);
      return result;
    });
    this.#asking.set(key, answer);
    try {
      return await answer;
    } finally {
      if (this.#asking.get(key) === answer) this.#asking.delete(key);
      slot?.release();
    }
  }
}

/** Set `key` in a Map bounded to `max` entries, the oldest going first. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
