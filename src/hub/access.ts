/**
 * @module
 * Live streams keep their rights only while they have them. A JWT subscriber's stream ends
 * when its token expires; a kube-mode subscriber's access is reviewed again by the cluster on
 * an interval (one review per token and access, however many streams share them) and its
 * stream ends when the review says no — or when the cluster cannot be asked for two intervals
 * running, since a check that cannot be made must not count as a yes.
 */
import { accessKey, describeDenial, type Access, type Grant } from "../auth/access.ts";
import { mayAccess, type Review, type ReviewUpstream } from "../auth/kube.ts";
import { membersOf } from "../k8s/members.ts";
import { forbidden, serviceUnavailable, unauthorized } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { realClock, type Cancel, type Clock } from "./clock.ts";
import type { Subscriber } from "./subscriber.ts";
import type { Log } from "../log.ts";

export type AccessCheck = (token: string, access: Access) => Promise<Review<boolean>>;

/**
 * The re-check of a kube-mode grant: asked of the cluster its access names, never of the hub's
 * upstream (a replica's is its root hub, a merge hub's its members' hubs). A merged key's grant
 * names the members the subject could read when it began, and holds while each of them still
 * says yes (DESIGN.md, "One watch across clusters"): the first no or failure is the answer.
 */
export function clusterCheck(upstreamOf: (cluster: string) => ReviewUpstream | undefined): AccessCheck {
  return async (token, access) => {
    const reviews = await Promise.all(
      (membersOf(access.cluster) ?? [access.cluster]).map((cluster) => {
        const upstream = upstreamOf(cluster);
        return upstream ? mayAccess(upstream, token, { ...access, cluster }) : Promise.resolve({ ok: false as const, unauthenticated: false, reason: `cluster "${cluster}" is not configured` });
      }),
    );
    return reviews.find((review) => !review.ok || !review.value) ?? { ok: true, value: true };
  };
}
export type Revoke<S = Subscriber> = (subscriber: S, status: Status) => void;

interface Watched {
  grant: Grant;
  lastAllowed: number;
}

/** A watch hub's subscribers' rights, or a log hub's followers' (`src/logs`). */
export class AccessGuard<S extends { id: number } = Subscriber> {
  readonly #check: AccessCheck;
  readonly #intervalMs: number;
  readonly #revoke: Revoke<S>;
  readonly #log: Log;
  readonly #clock: Clock;
  readonly #expiries = new Map<S, Cancel>();
  readonly #rechecked = new Map<S, Watched>();
  #stopRechecks: Cancel | undefined;

  constructor(check: AccessCheck, intervalMs: number, revoke: Revoke<S>, log: Log, clock: Clock = realClock) {
    this.#check = check;
    this.#intervalMs = intervalMs;
    this.#revoke = revoke;
    this.#log = log;
    this.#clock = clock;
  }

  add(subscriber: S, grant: Grant): void {
    if (grant.expiresAt !== undefined) {
      const expire = this.#clock.after(Math.max(0, grant.expiresAt - this.#clock.now()), () => {
        this.#log("stream closed: token expired", { subject: grant.subject, subscriber: subscriber.id });
        this.#revoke(subscriber, unauthorized("Unauthorized: the bearer token has expired; reconnect with a fresh one"));
      });
      this.#expiries.set(subscriber, expire);
    }
    if (grant.recheck) {
      this.#rechecked.set(subscriber, { grant, lastAllowed: this.#clock.now() });
      this.#stopRechecks ??= this.#clock.every(this.#intervalMs, () => void this.recheck());
    }
  }

  remove(subscriber: S): void {
    this.#expiries.get(subscriber)?.();
    this.#expiries.delete(subscriber);
    this.#rechecked.delete(subscriber);
    if (this.#rechecked.size === 0) {
      this.#stopRechecks?.();
      this.#stopRechecks = undefined;
    }
  }

  /** Ask the cluster again for every (token, access) in use; end the streams it no longer allows. */
  async recheck(): Promise<void> {
    const groups = new Map<string, Array<[S, Watched]>>();
    for (const entry of this.#rechecked) {
      const { token, access } = entry[1].grant.recheck!;
      const key = `${token}\u0000${accessKey(access)}`;
      const group = groups.get(key) ?? [];
      group.push(entry);
      groups.set(key, group);
    }
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const { grant } = group[0]![1];
        const { token, access } = grant.recheck!;
        const review = await this.#check(token, access);
        const now = this.#clock.now();
        for (const [subscriber, watched] of group) {
          if (!this.#rechecked.has(subscriber)) continue; // left while the cluster was asked
          if (review.ok && review.value) {
            watched.lastAllowed = now;
          } else if (review.ok || review.unauthenticated) {
            this.#log("stream closed: access revoked", { subject: grant.subject, subscriber: subscriber.id, verb: access.verb, resource: access.resource, namespace: access.namespace });
            this.#revoke(
              subscriber,
              review.ok
                ? forbidden(access.resource, access.name, `${describeDenial(grant.subject, access)} (access was revoked during the watch)`, access.group)
                : unauthorized("Unauthorized: the cluster no longer accepts this bearer token"),
            );
          } else if (now - watched.lastAllowed > 2 * this.#intervalMs) {
            this.#log("stream closed: access cannot be re-verified", { subject: grant.subject, subscriber: subscriber.id, reason: review.reason });
            this.#revoke(subscriber, serviceUnavailable(`the relay cannot re-verify this watch's access: ${review.reason}`, 5));
          }
        }
      }),
    );
  }
}
