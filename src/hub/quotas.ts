/**
 * @module
 * A hub's share of the relay's quotas, against amplification: every distinct key costs the
 * cluster an upstream watch, so a cluster has at most `maxHubs` hubs watching, and of those one
 * subject's requests may have started at most `maxHubsPerSubject`; every subscription costs a
 * hub's time, so a subject holds at most `maxPerSubject` of them across all hubs. The counts
 * live in Quota objects (one per cluster, one per subject and cluster for hubs, one per subject
 * for subscriptions); the hub claims and releases its share, and renews it from its heartbeat.
 *
 * A claim sets this hub's count in a Quota object, which checks the total atomically; the
 * claims of one subject from one hub are made one after another, so two subscriptions that
 * arrive together can never both be counted as the same one.
 */
import { HEARTBEAT_MS } from "../heartbeat.ts";
import type { QuotaName } from "../metrics/catalog.ts";
import type { Quota } from "../quota/quota.ts";
import { tooManyRequests } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";

/** A claim outlives three missed heartbeats before a crashed hub's share is given back. */
export const LEASE_MS = 3 * HEARTBEAT_MS;

export interface QuotaLimits {
  maxHubs: number;
  maxHubsPerSubject: number;
  maxPerSubject: number;
}

export class HubQuotas {
  readonly #quotas: DurableObjectNamespace<Quota>;
  readonly #cluster: string;
  readonly #hub: string;
  readonly #limits: QuotaLimits;
  readonly #log: Log;
  readonly #refused: (quota: QuotaName) => void;
  /** This hub's subscriptions per subject. */
  readonly #subjects = new Map<string, number>();
  /** Each subject's claims from this hub, one after another. */
  readonly #queues = new Map<string, Promise<unknown>>();
  #watching = false;
  /** Whose request started the upstream watch: the share it is charged to. */
  #opener: string | undefined;
  /** Whose share a stopped hub's stored state still counts against, until it is deleted. */
  #keeper: string | undefined;

  /** `refused`: told of each refusal, by quota (metrics). */
  constructor(quotas: DurableObjectNamespace<Quota>, cluster: string, hub: string, limits: QuotaLimits, log: Log, refused: (quota: QuotaName) => void) {
    this.#quotas = quotas;
    this.#refused = refused;
    this.#cluster = cluster;
    this.#hub = hub;
    this.#limits = limits;
    this.#log = log;
  }

  #hubs() {
    return this.#quotas.getByName(`hubs:${this.#cluster}`);
  }

  #hubsOf(subject: string) {
    return this.#quotas.getByName(`hubs:${JSON.stringify([this.#cluster, subject])}`);
  }

  #subscriptionsOf(subject: string) {
    return this.#quotas.getByName(`subject:${subject}`);
  }

  /** Run `claim` after the earlier claims on the same counter from this hub have been answered. */
  #serially<T>(counter: string, claim: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(counter) ?? Promise.resolve();
    const next = previous.then(claim, claim);
    const tail = next.catch(() => undefined);
    this.#queues.set(counter, tail);
    void tail.then(() => {
      if (this.#queues.get(counter) === tail) this.#queues.delete(counter);
    });
    return next;
  }

  #claimHubOf(subject: string, count: number, leaseMs = LEASE_MS) {
    return this.#serially(`hubs ${subject}`, () => this.#hubsOf(subject).claim(this.#hub, count, this.#limits.maxHubsPerSubject, leaseMs));
  }

  /** Claim the subject's current count from this hub (lowering or renewing is always granted). */
  #renewSubscriptions(subject: string) {
    return this.#serially(`subscriptions ${subject}`, () => this.#subscriptionsOf(subject).claim(this.#hub, this.#subjects.get(subject) ?? 0, this.#limits.maxPerSubject, LEASE_MS));
  }

  /**
   * Before the hub opens an upstream watch for `subject` (absent without auth): `undefined`, or
   * the 429 saying the subject, or the cluster, has enough.
   */
  async admitHub(subject: string | undefined): Promise<Status | undefined> {
    if (subject !== undefined) {
      const own = await this.#claimHubOf(subject, 1);
      if (!own.granted) {
        this.#log("hub refused: the subject's share of the cluster's hubs is full", { subject, maxHubsPerSubject: this.#limits.maxHubsPerSubject });
        this.#refused("max_hubs_per_subject");
        return tooManyRequests(
          `"${subject}" already keeps ${own.total} distinct keys watched on cluster "${this.#cluster}", or stored there since it last watched them (MAX_HUBS_PER_SUBJECT is ${this.#limits.maxHubsPerSubject}; a key's state is kept for HUB_RETENTION_SECONDS after its watch stops); try again later or share an existing watch`,
          own.retryAfterSeconds,
        );
      }
    }
    const claim = await this.#hubs().claim(this.#hub, 1, this.#limits.maxHubs, LEASE_MS);
    const lost = !claim.granted || (this.#watching && this.#opener !== subject);
    // Refused, or another request started the hub meanwhile: this subject's share goes back.
    if (lost && subject !== undefined) void this.#claimHubOf(subject, 0).catch(() => undefined);
    if (!claim.granted) {
      this.#log("hub refused: the cluster's active hub quota is full", { maxHubs: this.#limits.maxHubs });
      this.#refused("max_hubs");
      return tooManyRequests(
        `the relay already watches ${this.#limits.maxHubs} distinct keys on cluster "${this.#cluster}" (MAX_HUBS); try again later or share an existing watch`,
        claim.retryAfterSeconds,
      );
    }
    if (!lost) {
      this.#watching = true;
      this.#opener = subject;
      // The stored state this watch goes on from is now the new opener's to answer for.
      if (this.#keeper !== undefined && this.#keeper !== subject) void this.#claimHubOf(this.#keeper, 0).catch(() => undefined);
      this.#keeper = undefined;
    }
    return undefined;
  }

  /**
   * The hub stopped watching upstream: the cluster's share goes back; its opener's share stays
   * for as long as the hub keeps its stored state (`retentionMs`), so what one subject makes the
   * relay store is bounded by its share of hubs, as what it makes the relay watch is.
   */
  releaseHub(retentionMs: number): void {
    this.#watching = false;
    void this.#hubs()
      .claim(this.#hub, 0, this.#limits.maxHubs, LEASE_MS)
      .catch(() => undefined);
    const opener = this.#opener;
    this.#opener = undefined;
    this.#keeper = opener;
    if (opener !== undefined) void this.#claimHubOf(opener, 1, retentionMs + LEASE_MS).catch(() => undefined);
  }

  /** The hub's stored state was deleted: whoever it still counted against has the share back. */
  reclaimed(): void {
    const keeper = this.#keeper;
    this.#keeper = undefined;
    if (keeper !== undefined) void this.#claimHubOf(keeper, 0).catch(() => undefined);
  }

  /** Before a subscriber of `subject` is accepted: `undefined`, or the 429. */
  async admitSubscriber(subject: string): Promise<Status | undefined> {
    const claim = await this.#serially(`subscriptions ${subject}`, async () => {
      const answer = await this.#subscriptionsOf(subject).claim(this.#hub, (this.#subjects.get(subject) ?? 0) + 1, this.#limits.maxPerSubject, LEASE_MS);
      // Added to the count as it is now, not set to the one claimed: a release may have landed
      // meanwhile, and its renewal (queued behind this claim) sends the count that results.
      if (answer.granted) this.#subjects.set(subject, (this.#subjects.get(subject) ?? 0) + 1);
      return answer;
    });
    if (claim.granted) return undefined;
    this.#log("subscription refused: the subject's quota is full", { subject, max: this.#limits.maxPerSubject });
    this.#refused("max_subscriptions_per_subject");
    return tooManyRequests(`"${subject}" already holds ${claim.total} watches through this relay (MAX_SUBSCRIPTIONS_PER_SUBJECT is ${this.#limits.maxPerSubject})`, claim.retryAfterSeconds);
  }

  releaseSubscriber(subject: string): void {
    const count = Math.max(0, (this.#subjects.get(subject) ?? 0) - 1);
    if (count === 0) this.#subjects.delete(subject);
    else this.#subjects.set(subject, count);
    void this.#renewSubscriptions(subject).catch(() => undefined);
  }

  /** From the heartbeat: keep this hub's claims alive. */
  renew(): void {
    if (this.#watching) {
      void this.#hubs()
        .claim(this.#hub, 1, this.#limits.maxHubs, LEASE_MS)
        .catch(() => undefined);
      if (this.#opener !== undefined) void this.#claimHubOf(this.#opener, 1).catch(() => undefined);
    }
    for (const subject of this.#subjects.keys()) void this.#renewSubscriptions(subject).catch(() => undefined);
  }
}
