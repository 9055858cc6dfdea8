/**
 * @module
 * A hub's share of the relay's quotas, against amplification: every distinct key costs the
 * cluster an upstream watch, so a cluster has at most `maxHubs` hubs watching; every
 * subscription costs a hub's time, so a subject holds at most `maxPerSubject` of them across
 * all hubs. The counts live in Quota objects (one per cluster, one per subject); the hub claims
 * and releases its share, and renews it from its heartbeat.
 */
import type { Quota } from "../quota/quota.ts";
import { tooManyRequests } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";

/** A claim outlives three missed heartbeats before a crashed hub's share is given back. */
export const LEASE_MS = 90_000;

export interface QuotaLimits {
  maxHubs: number;
  maxPerSubject: number;
}

type Log = (message: string, fields?: Record<string, unknown>) => void;

export class HubQuotas {
  readonly #quotas: DurableObjectNamespace<Quota>;
  readonly #cluster: string;
  readonly #hub: string;
  readonly #limits: QuotaLimits;
  readonly #log: Log;
  /** This hub's subscriptions per subject. */
  readonly #subjects = new Map<string, number>();
  #watching = false;

  constructor(quotas: DurableObjectNamespace<Quota>, cluster: string, hub: string, limits: QuotaLimits, log: Log) {
    this.#quotas = quotas;
    this.#cluster = cluster;
    this.#hub = hub;
    this.#limits = limits;
    this.#log = log;
  }

  #hubs() {
    return this.#quotas.getByName(`hubs:${this.#cluster}`);
  }

  #subject(subject: string) {
    return this.#quotas.getByName(`subject:${subject}`);
  }

  /** Before the hub opens an upstream watch: `undefined`, or the 429 saying the cluster has enough. */
  async admitHub(): Promise<Status | undefined> {
    const claim = await this.#hubs().claim(this.#hub, 1, this.#limits.maxHubs, LEASE_MS);
    if (!claim.granted) {
      this.#log("hub refused: the cluster's active hub quota is full", { maxHubs: this.#limits.maxHubs });
      return tooManyRequests(`the relay already watches ${this.#limits.maxHubs} distinct keys on cluster "${this.#cluster}" (MAX_HUBS); try again later or share an existing watch`, claim.retryAfterSeconds);
    }
    this.#watching = true;
    return undefined;
  }

  /** The hub stopped watching upstream. */
  releaseHub(): void {
    this.#watching = false;
    void this.#hubs().claim(this.#hub, 0, this.#limits.maxHubs, LEASE_MS).catch(() => undefined);
  }

  /** Before a subscriber of `subject` is accepted: `undefined`, or the 429. */
  async admitSubscriber(subject: string): Promise<Status | undefined> {
    const count = (this.#subjects.get(subject) ?? 0) + 1;
    const claim = await this.#subject(subject).claim(this.#hub, count, this.#limits.maxPerSubject, LEASE_MS);
    if (!claim.granted) {
      this.#log("subscription refused: the subject's quota is full", { subject, max: this.#limits.maxPerSubject });
      return tooManyRequests(`"${subject}" already holds ${claim.total} watches through this relay (MAX_SUBSCRIPTIONS_PER_SUBJECT is ${this.#limits.maxPerSubject})`, claim.retryAfterSeconds);
    }
    this.#subjects.set(subject, count);
    return undefined;
  }

  releaseSubscriber(subject: string): void {
    const count = Math.max(0, (this.#subjects.get(subject) ?? 0) - 1);
    if (count === 0) this.#subjects.delete(subject);
    else this.#subjects.set(subject, count);
    void this.#subject(subject).claim(this.#hub, count, this.#limits.maxPerSubject, LEASE_MS).catch(() => undefined);
  }

  /** From the heartbeat: keep this hub's claims alive. */
  renew(): void {
    if (this.#watching) void this.#hubs().claim(this.#hub, 1, this.#limits.maxHubs, LEASE_MS).catch(() => undefined);
    for (const [subject, count] of this.#subjects) void this.#subject(subject).claim(this.#hub, count, this.#limits.maxPerSubject, LEASE_MS).catch(() => undefined);
  }
}
