/**
 * @module
 * How many token reviews `kube` mode asks the cluster for on behalf of tokens it does not know
 * yet. A token the cluster accepted or refused a moment ago is answered from the Worker's cache,
 * so only new tokens cost a review, and new tokens are what anyone, holding no valid token at
 * all, can send without end. Each review reaches the cluster's authenticators (webhooks, OIDC),
 * which are not public when the relay is; so new tokens are limited per client (a token bucket
 * per address: a burst, then a steady rate) and per isolate (another bucket, for clients with
 * many addresses, and reviews in flight at once, for a cluster that answers slowly). Beyond any
 * of them, the request gets 429 at once, with when to try again: no review, and no wait.
 */

export interface ReviewLimits {
  /** Reviews one client may start at once before its rate applies. */
  perClientBurst: number;
  /** Reviews one client may start a second, once its burst is spent. */
  perClientPerSecond: number;
  /** Reviews the isolate may start at once, all clients together, before its rate applies. */
  isolateBurst: number;
  /** Reviews the isolate may start a second, all clients together, once its burst is spent. */
  isolatePerSecond: number;
  /** Reviews in flight at once in this isolate, all clients together. */
  inFlight: number;
  /** Clients remembered; beyond, the least recently seen is forgotten (its bucket full again). */
  maxClients: number;
}

export const REVIEW_LIMITS: ReviewLimits = { perClientBurst: 20, perClientPerSecond: 2, isolateBurst: 100, isolatePerSecond: 50, inFlight: 32, maxClients: 10_000 };

/** A review may go ahead: `release()` once it is answered. Or the seconds to wait, and whose limit it was. */
export type ReviewSlot = { release(): void } | { retryAfterSeconds: number; limit: ReviewLimit };

/** Whose limit held a review back: the client's, the isolate's rate, or the reviews in flight. */
export type ReviewLimit = "client" | "isolate" | "inFlight";

interface Bucket {
  tokens: number;
  at: number;
}

/** `bucket` refilled at `rate` a second up to `burst`, as of `now`. */
const refilled = (bucket: Bucket | undefined, burst: number, rate: number, now: number): number => (bucket ? Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate) : burst);

/** When a bucket holding `tokens` will hold one. */
const wait = (tokens: number, rate: number): number => Math.ceil((1 - tokens) / rate);

export class ReviewLimiter {
  readonly #limits: ReviewLimits;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #isolate: Bucket | undefined;
  #inFlight = 0;

  constructor(limits: ReviewLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Whether `client` may start a review now. */
  take(client: string): ReviewSlot {
    if (this.#inFlight >= this.#limits.inFlight) return { retryAfterSeconds: 1, limit: "inFlight" };
    const now = this.#now();
    const { perClientBurst, perClientPerSecond, isolateBurst, isolatePerSecond } = this.#limits;
    const own = refilled(this.#buckets.get(client), perClientBurst, perClientPerSecond, now);
    const shared = refilled(this.#isolate, isolateBurst, isolatePerSecond, now);
    const starts = own >= 1 && shared >= 1;
    // Re-inserted on every use, so the Map's first entry is the client seen least recently.
    this.#buckets.delete(client);
    this.#buckets.set(client, { tokens: starts ? own - 1 : own, at: now });
    for (const oldest of this.#buckets.keys()) {
      if (this.#buckets.size <= this.#limits.maxClients) break;
      this.#buckets.delete(oldest);
    }
    if (own < 1) return { retryAfterSeconds: wait(own, perClientPerSecond), limit: "client" };
    if (shared < 1) return { retryAfterSeconds: wait(shared, isolatePerSecond), limit: "isolate" };
    this.#isolate = { tokens: shared - 1, at: now };
    this.#inFlight++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight--;
      },
    };
  }
}

/**
 * Who a request comes from, for the limits: the address Cloudflare's edge puts in
 * `CF-Connecting-IP` (an IPv6 address by its /64, which one host usually holds whole). Without
 * it (a local relay: everything comes from this machine) every request is the same client.
 */
export function clientOf(request: Request): string {
  const address = request.headers.get("cf-connecting-ip")?.trim() ?? "";
  if (!address.includes(":")) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::") ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
