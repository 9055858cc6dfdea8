/**
 * @module
 * The gate every API request passes before its route, and the operator routes too.
 */
import { ALL_CLUSTERS, isMemberSet, membersOf } from "../k8s/members.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import type { RefusalReason } from "../metrics/catalog.ts";
import type { Result } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { configuredClusters, upstreamFor, type Upstream } from "../upstream.ts";
import type { Vars } from "../vars.ts";
import { frontDoor, originRefusal, type Authenticator, type Identity } from "./auth.ts";
import { atMost, MEMBER_REVIEWS_AT_ONCE } from "./member-access.ts";
import { notFoundPath } from "./resource-resolver.ts";

/**
 * What every API request passes before its route (after the size limits every request passes):
 * auth mode, host, token, cluster, origin. The token comes before the cluster, so nobody learns which clusters exist without one.
 */
export interface Gate {
  upstream: Upstream;
  identity: Identity;
  /**
   * `kube` mode, a merged key: each configured member's answer about the token (who it is there,
   * or its refusal); `identity` and `upstream` are the first member's that accepts it.
   */
  members?: ReadonlyMap<string, Result<Identity>>;
}

/** The gate, as the routes that mount beside the API's call it. */
export type GateCheck = (env: Vars, request: Request, cluster: string) => Promise<Result<Gate>>;

/**
 * `refused`: told of a refusal at the front door, by reason (metrics). A merged key (`*`,
 * `a,b`) passes as its first member, whose discovery it serves; in `kube` mode, where only a
 * cluster can vouch for a token, as the first member that accepts it (`memberGate`).
 */
export async function gate(env: Vars, request: Request, cluster: string, auth: Authenticator, refused: (reason: RefusalReason) => void): Promise<Result<Gate>> {
  const mode = frontDoor(env, request, refused);
  if (!mode.ok) return mode;
  if (mode.value === "kube" && isMemberSet(cluster)) return memberGate(env, request, cluster, auth, refused);
  const named = isMemberSet(cluster) ? firstMember(env, cluster) : cluster;
  const upstream = upstreamFor(env, named);
  const identity = await auth.authenticate(mode.value, env, request, upstream);
  if (!identity.ok) return identity;
  if (!upstream) return { ok: false, status: notFoundPath(`cluster "${named}" is not configured`) };
  const wrongOrigin = originRefusal(env, request, refused);
  if (wrongOrigin) return { ok: false, status: wrongOrigin };
  return { ok: true, value: { upstream, identity: identity.value } };
}

/** The cluster a merged key's request passes the gate as: its first member (`*`: the first configured cluster). */
function firstMember(env: Vars, set: string): string {
  return (membersOf(set) ?? configuredClusters(env).sort())[0] ?? DEFAULT_CLUSTER;
}

/** Which refusal a request gets when no member accepts its token: try again later (429, 503) before "not accepted". */
const REFUSAL_ORDER: Array<[number, RefusalReason]> = [
  [429, "rate_limited"],
  [503, "unverifiable"],
  [401, "unauthenticated"],
];

/**
 * `kube` mode, a merged key: each configured member's cluster asked who the token is, a few at a
 * time; it passes if one accepts it. A member's refusal is not the request's (it is left out,
 * `member-access.ts`), so only the refusal of all is counted.
 */
async function memberGate(env: Vars, request: Request, set: string, auth: Authenticator, refused: (reason: RefusalReason) => void): Promise<Result<Gate>> {
  const configured = configuredClusters(env);
  const names = set === ALL_CLUSTERS ? [...new Set(configured)].sort() : [...new Set(membersOf(set))].filter((name) => configured.includes(name));
  const answers = await atMost(names, MEMBER_REVIEWS_AT_ONCE, (name) => auth.authenticate("kube", env, request, upstreamFor(env, name), false));
  const first = answers.findIndex((answer) => answer.ok);
  if (first < 0) {
    // No member configured: refused as a token no cluster accepts, before any cluster is named.
    if (names.length === 0) return (await auth.authenticate("kube", env, request, undefined)) as { ok: false; status: Status };
    const statuses = answers.map((answer) => (answer as { status: Status }).status);
    const [code, reason] = REFUSAL_ORDER.find(([code]) => statuses.some((s) => s.code === code)) ?? [statuses[0]!.code, "unauthenticated"];
    refused(reason);
    return { ok: false, status: statuses.find((s) => s.code === code)! };
  }
  const wrongOrigin = originRefusal(env, request, refused);
  if (wrongOrigin) return { ok: false, status: wrongOrigin };
  const identity = answers[first] as { ok: true; value: Identity };
  return { ok: true, value: { upstream: upstreamFor(env, names[first]!)!, identity: identity.value, members: new Map(names.map((name, i) => [name, answers[i]!])) } };
}
