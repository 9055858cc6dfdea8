import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CachedObject } from "../../src/hub/cache.ts";
import { listPage, type ListSource } from "../../src/hub/reads.ts";
import { decodeContinue, encodeContinue, page, SnapshotStore, type Snapshot } from "../../src/hub/snapshots.ts";
import type { ListOptions } from "../../src/k8s/options.ts";

const obj = (key: string): CachedObject => ({ uid: key, key, rv: 1, json: "{}" });
const snapshot = (rv: number, keys: string[]): Snapshot => ({ rv, objects: keys.map(obj) });

describe("continue tokens", () => {
  it("round-trip in the API server's shape, and reject anything else", () => {
    const token = encodeContinue({ rv: 42, start: "ns/pod-ü" });
    expect(JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(token.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))))).toEqual({
      v: "meta.k8s.io/v1",
      rv: 42,
      start: "ns/pod-ü\u0000",
    });
    expect(decodeContinue(token)).toEqual({ rv: 42, start: "ns/pod-ü" });
    expect(decodeContinue("not-a-token")).toBeUndefined();
    expect(decodeContinue(btoa(JSON.stringify({ v: "other", rv: 1, start: "" })))).toBeUndefined();
  });
});

describe("page", () => {
  it("pages in key order with a token and the count left", () => {
    const s = snapshot(7, ["a", "b", "c", "d", "e"]);
    const first = page(s, 2);
    expect(first.objects.map((o) => o.key)).toEqual(["a", "b"]);
    expect(first.remaining).toBe(3);
    const second = page(s, 2, decodeContinue(first.continue!)!.start);
    expect(second.objects.map((o) => o.key)).toEqual(["c", "d"]);
    const last = page(s, 2, decodeContinue(second.continue!)!.start);
    expect([last.objects.map((o) => o.key), last.continue, last.remaining]).toEqual([["e"], undefined, undefined]);
    expect(page(s, undefined).objects).toHaveLength(5);
  });

  it("property: following the tokens yields the whole snapshot once, in order", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), (keys, limit) => {
        const s = snapshot(1, [...keys].sort());
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const p = page(s, limit, after);
          seen.push(...p.objects.map((o) => o.key));
          if (!p.continue) break;
          after = decodeContinue(p.continue)!.start;
        }
        expect(seen).toEqual([...keys].sort());
      }),
      { seed: 11, numRuns: 200 },
    );
  });
});

describe("SnapshotStore", () => {
  it("keeps the newest few, each for a limited time", () => {
    const store = new SnapshotStore(2, 1000);
    store.keep(snapshot(1, []), 0);
    store.keep(snapshot(2, []), 0);
    store.keep(snapshot(3, []), 0);
    expect(store.get(1, 10)).toBeUndefined();
    expect(store.get(2, 10)?.rv).toBe(2);
    expect(store.get(3, 2000)).toBeUndefined();
  });
});

describe("listPage", () => {
  const options = (o: Partial<ListOptions>): ListOptions => ({ resourceVersion: { kind: "unset" }, resourceVersionMatch: undefined, limit: undefined, continue: undefined, ...o });
  function source(head: number, keys: string[], reachable = head): ListSource & { waited: number[] } {
    const waited: number[] = [];
    return {
      waited,
      current: () => snapshot(head, keys),
      waitFor: async (rv) => {
        waited.push(rv);
        return rv <= reachable;
      },
      snapshots: new SnapshotStore(4, 60_000),
    };
  }
  const ok = async (s: ListSource, o: Partial<ListOptions>) => {
    const r = await listPage(s, options(o), 0);
    if (!r.ok) throw new Error(r.status.message);
    return r.value;
  };
  const status = async (s: ListSource, o: Partial<ListOptions>) => {
    const r = await listPage(s, options(o), 0);
    if (r.ok) throw new Error("expected a Status");
    return [r.status.code, r.status.reason];
  };

  it("unset and 0 give the current state", async () => {
    expect((await ok(source(9, ["a"]), {})).rv).toBe(9);
    expect((await ok(source(9, ["a"]), { resourceVersion: { kind: "zero" } })).rv).toBe(9);
  });

  it("N not older than: current once reached, 504 if it is not within the wait", async () => {
    const s = source(9, ["a"], 12);
    expect((await ok(s, { resourceVersion: { kind: "exact", rv: 12 } })).rv).toBe(9);
    expect(s.waited).toEqual([12]);
    expect(await status(source(9, ["a"]), { resourceVersion: { kind: "exact", rv: 20 } })).toEqual([504, "Timeout"]);
  });

  it("Exact N (or N with a limit): the current state if it is at N, else 410", async () => {
    expect((await ok(source(9, ["a"]), { resourceVersion: { kind: "exact", rv: 9 }, resourceVersionMatch: "Exact" })).rv).toBe(9);
    expect(await status(source(9, ["a"]), { resourceVersion: { kind: "exact", rv: 5 }, limit: 10 })).toEqual([410, "Expired"]);
  });

  it("continue serves the token's retained snapshot; a lost or foreign token is 410 or 400", async () => {
    const s = source(9, ["a", "b", "c"]);
    const first = await ok(s, { limit: 2 });
    const later = { ...s, current: () => snapshot(11, ["a", "b", "c", "d"]) };
    const second = await ok(later, { continue: first.continue!, limit: 2 });
    expect([second.rv, second.objects.map((o) => o.key)]).toEqual([9, ["c"]]);
    expect(await status(source(11, ["a"]), { continue: first.continue! })).toEqual([410, "Expired"]);
    expect(await status(s, { continue: "garbage" })).toEqual([400, "BadRequest"]);
  });
});
