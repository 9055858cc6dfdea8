/**
 * @module
 * The limits on `kube` mode's reviews of new tokens, under a hand-moved clock: a burst per
 * client, then its rate; the same for the isolate, across clients; reviews in flight per
 * isolate; a bounded memory of clients; and who a client is.
 */
import { describe, expect, it } from "vitest";
import { clientOf, ReviewLimiter, type ReviewLimits } from "../../src/auth/review-limiter.ts";

const limits: ReviewLimits = { perClientBurst: 3, perClientPerSecond: 2, isolateBurst: 8, isolatePerSecond: 4, inFlight: 5, maxClients: 4 };

function limiter() {
  const clock = { now: 1_000_000 };
  return { limiter: new ReviewLimiter(limits, () => clock.now), clock };
}

const released = (slot: ReturnType<ReviewLimiter["take"]>) => {
  if (!("release" in slot)) throw new Error(`limited: ${JSON.stringify(slot)}`);
  slot.release();
};

describe("ReviewLimiter", () => {
  it("lets a client start its burst at once, then its rate, and says when to try again", () => {
    const { limiter: l, clock } = limiter();
    for (let i = 0; i < 3; i++) released(l.take("a"));
    expect(l.take("a")).toEqual({ retryAfterSeconds: 1, limit: "client" });
    clock.now += 499;
    expect(l.take("a")).toEqual({ retryAfterSeconds: 1, limit: "client" });
    clock.now += 1;
    released(l.take("a"));
    expect(l.take("a")).toMatchObject({ limit: "client" });
    // A client's limit is its own.
    released(l.take("b"));
    // Refilled, never beyond the burst.
    clock.now += 60_000;
    for (let i = 0; i < 3; i++) released(l.take("a"));
    expect(l.take("a")).toMatchObject({ limit: "client" });
  });

  it("holds reviews in flight in the isolate to its bound, across clients, until they are released", () => {
    const { limiter: l } = limiter();
    const slots = ["a", "b", "c", "d", "e"].map((c) => l.take(c));
    expect(l.take("f")).toEqual({ retryAfterSeconds: 1, limit: "inFlight" });
    const first = slots[0]!;
    if (!("release" in first)) throw new Error("limited");
    first.release();
    first.release(); // twice is once
    expect(l.take("f")).toHaveProperty("release");
    expect(l.take("g")).toEqual({ retryAfterSeconds: 1, limit: "inFlight" });
  });

  it("holds the isolate to its own burst and rate across clients", () => {
    const { limiter: l, clock } = limiter();
    for (let i = 0; i < 8; i++) released(l.take(`c${i}`));
    expect(l.take("a")).toEqual({ retryAfterSeconds: 1, limit: "isolate" });
    clock.now += 250;
    released(l.take("a"));
    expect(l.take("b")).toMatchObject({ limit: "isolate" });
  });

  it("remembers a bounded number of clients, forgetting the least recently seen", () => {
    const { limiter: l } = limiter();
    for (let i = 0; i < 3; i++) released(l.take("a"));
    expect(l.take("a")).toMatchObject({ limit: "client" });
    for (const c of ["b", "c", "d", "e"]) released(l.take(c));
    // "a" was forgotten: a full bucket again.
    released(l.take("a"));
  });
});

describe("clientOf", () => {
  const from = (address?: string) => clientOf(new Request("http://relay.test/", { headers: address === undefined ? {} : { "cf-connecting-ip": address } }));

  it("is the address Cloudflare's edge gives, an IPv6 one by its /64, and one shared client without it", () => {
    expect(from("203.0.113.7")).toBe("203.0.113.7");
    expect(from("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(from("2001:DB8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(from("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(from("::1")).toBe("0:0:0:0::/64");
    expect(from()).toBe("");
  });
});
