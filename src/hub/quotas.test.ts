import { beforeEach, describe, expect, it } from "vitest";
import type { Claim, Quota } from "../quota/quota.ts";
import { Changes } from "../../test/kit/wait.ts";
import { HubQuotas, type QuotaLimits } from "./quotas.ts";

/**
 * Quota objects as the hub sees them through their stubs: each answers asynchronously (an RPC:
 * the caller goes on, and other claims may be answered, before this one is), and checks and sets
 * a holder's count atomically, as the Durable Object does.
 */
class Quotas {
  readonly counters = new Map<string, Map<string, number>>();
  /** Claims of 0 (a share given back) answered: what the hub sends without waiting for it. */
  #releases = 0;
  /** While set, claims wait for it before they are answered. */
  #held: Promise<void> | undefined;
  #resume = () => {};
  #waiting = 0;
  readonly #changes = new Changes(2_000);
  getByName(name: string) {
    const claims = this.counters.get(name) ?? new Map<string, number>();
    this.counters.set(name, claims);
    return {
      claim: async (holder: string, count: number, max: number): Promise<Claim> => {
        if (this.#held) {
          this.#waiting++;
          this.#changes.changed();
          await this.#held;
          this.#waiting--;
        }
        await null;
        const held = claims.get(holder) ?? 0;
        const others = [...claims].filter(([h]) => h !== holder).reduce((n, [, c]) => n + c, 0);
        if (count > held && others + count > max) return { granted: false, total: others + held, retryAfterSeconds: 90 };
        if (count === 0) {
          claims.delete(holder);
          this.#releases++;
          this.#changes.changed();
        } else {
          claims.set(holder, count);
        }
        return { granted: true, total: others + count, retryAfterSeconds: 0 };
      },
    };
  }
  total(name: string): number {
    return [...(this.counters.get(name)?.values() ?? [])].reduce((a, b) => a + b, 0);
  }
  /** Hold every claim's answer until `resume`. */
  hold(): void {
    this.#held = new Promise((resolve) => {
      this.#resume = resolve;
    });
  }
  resume(): void {
    this.#held = undefined;
    this.#resume();
  }
  /** Once a claim is waiting for its answer. */
  claimWaiting(): Promise<void> {
    return this.#changes.until("a claim to be sent", () => this.#waiting > 0);
  }
  /** Once `n` shares in all have been given back. */
  released(n: number): Promise<void> {
    return this.#changes.until(`${n} shares given back`, () => this.#releases >= n);
  }
}

const limits: QuotaLimits = { maxHubs: 3, maxHubsPerSubject: 1, maxPerSubject: 5 };
const RETENTION_MS = 600_000;
/** The quotas each refusal names, as the hub reports them to the metrics. */
let refusals: string[] = [];
const quotasFor = (quotas: Quotas, hub: string) =>
  new HubQuotas(
    quotas as unknown as DurableObjectNamespace<Quota>,
    "c1",
    hub,
    limits,
    () => undefined,
    (quota) => void refusals.push(quota),
  );
const ofSubject = (subject: string) => `hubs:${JSON.stringify(["c1", subject])}`;

describe("HubQuotas", () => {
  beforeEach(() => {
    refusals = [];
  });

  it("subscriptions asked for at the same moment stop at the subject's limit, across hubs", async () => {
    const quotas = new Quotas();
    const hubs = [quotasFor(quotas, "h1"), quotasFor(quotas, "h2")];
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => hubs[i % 2]!.admitSubscriber("alice")));
    expect(answers.filter((a) => a === undefined)).toHaveLength(5);
    expect(answers.filter((a) => a?.code === 429)).toHaveLength(11);
    expect(quotas.total("subject:alice")).toBe(5);
    expect(refusals).toEqual(Array(11).fill("max_subscriptions_per_subject"));
  });

  it("a subscription that leaves gives its place back", async () => {
    const quotas = new Quotas();
    const hub = quotasFor(quotas, "h1");
    for (let i = 0; i < 5; i++) expect(await hub.admitSubscriber("bob")).toBeUndefined();
    expect((await hub.admitSubscriber("bob"))?.code).toBe(429);
    hub.releaseSubscriber("bob");
    expect(await hub.admitSubscriber("bob")).toBeUndefined();
    expect(quotas.total("subject:bob")).toBe(5);
  });

  it("a release that lands while a claim is on its way is not lost (watch/unwatch cycles leak nothing)", async () => {
    const quotas = new Quotas();
    const hub = quotasFor(quotas, "h1");
    expect(await hub.admitSubscriber("carol")).toBeUndefined();
    // A subscription comes and goes 300 times; each time, the one before leaves while the next
    // one's claim is with the Quota object.
    for (let i = 0; i < 300; i++) {
      quotas.hold();
      const admitted = hub.admitSubscriber("carol");
      await quotas.claimWaiting();
      if (i > 0) hub.releaseSubscriber("carol");
      quotas.resume();
      expect(await admitted).toBeUndefined();
    }
    hub.releaseSubscriber("carol");
    // One held all along: the subject may open the other four of its five, and no more.
    for (let i = 0; i < 4; i++) expect(await hub.admitSubscriber("carol")).toBeUndefined();
    expect((await hub.admitSubscriber("carol"))?.code).toBe(429);
    expect(quotas.total("subject:carol")).toBe(5);
  });

  it("a subject's share of hubs: its second key is refused, another subject's is not; it holds until the stopped hub's storage is deleted", async () => {
    const quotas = new Quotas();
    const [a, b, c] = [quotasFor(quotas, "ka"), quotasFor(quotas, "kb"), quotasFor(quotas, "kc")];
    expect(await a.admitHub("alice")).toBeUndefined();
    expect((await b.admitHub("alice"))?.message).toContain("MAX_HUBS_PER_SUBJECT");
    expect(await c.admitHub("bob")).toBeUndefined();
    a.releaseHub(RETENTION_MS);
    await quotas.released(1); // the cluster's share: its watch stopped
    expect(quotas.total("hubs:c1")).toBe(1);
    // What alice made the relay store still counts against her share.
    expect((await b.admitHub("alice"))?.message).toContain("MAX_HUBS_PER_SUBJECT");
    a.reclaimed();
    await quotas.released(2);
    expect(await b.admitHub("alice")).toBeUndefined();
    expect(quotas.total(ofSubject("alice"))).toBe(1);
    expect(quotas.total("hubs:c1")).toBe(2);
    expect(refusals).toEqual(["max_hubs_per_subject", "max_hubs_per_subject"]);
  });

  it("a stopped hub started again by another subject: its stored state is the new opener's to answer for", async () => {
    const quotas = new Quotas();
    const hub = quotasFor(quotas, "k");
    expect(await hub.admitHub("alice")).toBeUndefined();
    hub.releaseHub(RETENTION_MS);
    expect(await hub.admitHub("bob")).toBeUndefined();
    await quotas.released(2); // the cluster's share at the stop, and alice's once bob took over
    expect([quotas.total(ofSubject("alice")), quotas.total(ofSubject("bob"))]).toEqual([0, 1]);
  });

  it("two subjects starting one hub at once: one is charged, the other's claim goes back", async () => {
    const quotas = new Quotas();
    const hub = quotasFor(quotas, "k");
    await Promise.all([hub.admitHub("alice"), hub.admitHub("bob")]);
    const charged = () => ["alice", "bob"].map((s) => quotas.total(ofSubject(s)));
    await quotas.released(1);
    expect(charged().sort()).toEqual([0, 1]);
    hub.releaseHub(RETENTION_MS);
    hub.reclaimed();
    await quotas.released(3); // and the hub, and its opener's share
    expect(quotas.total("hubs:c1")).toBe(0);
    expect(charged()).toEqual([0, 0]);
  });

  it("the cluster's limit holds whoever asks", async () => {
    const quotas = new Quotas();
    const hubs = ["a", "b", "c", "d"].map((k) => quotasFor(quotas, k));
    const answers = await Promise.all(hubs.map((h, i) => h.admitHub(`user-${i}`)));
    expect(answers.filter((a) => a === undefined)).toHaveLength(3);
    expect(answers.find((a) => a !== undefined)?.message).toContain("MAX_HUBS");
    expect(refusals).toEqual(["max_hubs"]);
    // The refused one's share of its subject's hubs went back too.
    await quotas.released(1);
    expect([0, 1, 2, 3].reduce((n, i) => n + quotas.total(ofSubject(`user-${i}`)), 0)).toBe(3);
  });
});
