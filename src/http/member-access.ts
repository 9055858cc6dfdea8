/**
 * @module
 * Which members of a merged key a request may read (DESIGN.md, "One watch across clusters"):
 * each member is asked as its own cluster's request would be, a few at a time. In `kube` mode
 * each member's cluster vouches for the token itself (the gate asked each, `gate.ts`) and says
 * what it may do there; a member that refuses the token, says no, or cannot be asked is left
 * out (fail closed: the relay cannot say the subject may read it). A review the limits did not
 * let start is a `429` of the whole: it is to be tried again, not an answer about the member.
 */
import type { Access } from "../auth/access.ts";
import type { Result } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { upstreamFor } from "../upstream.ts";
import type { Vars } from "../vars.ts";
import type { Authenticator, Identity } from "./auth.ts";

/** Members' clusters asked at once for one request: as many connections as a Worker's request may have open together. */
export const MEMBER_REVIEWS_AT_ONCE = 6;

/** `each(item)` for every item, at most `limit` at a time; the answers in the items' order. */
export async function atMost<T, R>(items: readonly T[], limit: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const answers = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      answers[i] = await each(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return answers;
}

/** What a request may read of a merged key: the members, those left out, and the refusal to answer when none is readable. */
export interface MemberDecision {
  readable: string[];
  leftOut: string[];
  /** The first `403` among the members', else the first refusal: the answer when none is readable. */
  refusal: Status | undefined;
}

/**
 * Whether the request may do `accessIn(member)` in each member. `identity`: the gate's; `members`:
 * in `kube` mode, each member's own answer about the token (its identity there, or its refusal).
 * A `429` of any member is the result's refusal.
 */
export async function decideMembers(
  auth: Authenticator,
  env: Vars,
  who: { identity: Identity; members: ReadonlyMap<string, Result<Identity>> | undefined },
  members: readonly string[],
  accessIn: (member: string) => Access,
): Promise<Result<MemberDecision>> {
  const decisions = await atMost(members, MEMBER_REVIEWS_AT_ONCE, async (member): Promise<Status | undefined> => {
    const identity = who.members?.get(member) ?? { ok: true as const, value: who.identity };
    if (!identity.ok) return identity.status;
    return auth.authorize(identity.value, accessIn(member), upstreamFor(env, member)!, env);
  });
  const limited = decisions.find((d) => d?.code === 429);
  if (limited) return { ok: false, status: limited };
  const refusals = decisions.filter((d): d is Status => d !== undefined);
  return {
    ok: true,
    value: {
      readable: members.filter((_, i) => decisions[i] === undefined),
      leftOut: members.filter((_, i) => decisions[i] !== undefined),
      refusal: refusals.find((d) => d.code === 403) ?? refusals[0],
    },
  };
}
