import { describe, expect, it } from "vitest";
import { Backoff, retryAfterMs } from "../../src/k8s/backoff.ts";

describe("Backoff", () => {
  it("doubles up to the cap, jittered within [half, full], and resets", () => {
    const low = new Backoff({ initialMs: 800, maxMs: 30_000, random: () => 0 });
    const high = new Backoff({ initialMs: 800, maxMs: 30_000, random: () => 0.999999 });
    const lows = Array.from({ length: 8 }, () => low.next());
    const highs = Array.from({ length: 8 }, () => high.next());
    expect(lows).toEqual([400, 800, 1600, 3200, 6400, 12800, 15000, 15000]);
    expect(highs).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    low.reset();
    expect(low.next()).toBe(400);
  });

  it("never waits less than the server's Retry-After", () => {
    const b = new Backoff({ initialMs: 800, maxMs: 30_000, random: () => 0.5 });
    expect(b.next(5000)).toBe(5000);
  });

  it("reads Retry-After as seconds or as a date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(null)).toBe(0);
    expect(retryAfterMs("soon")).toBe(0);
  });
});
