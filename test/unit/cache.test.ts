import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ObjectCache, relistDiff, type CachedObject, type ObjectEvent } from "../../src/hub/cache.ts";

function object(uid: string, name: string, rv: number, extra: Record<string, unknown> = {}): CachedObject {
  const json = JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { uid, name, namespace: "ns", resourceVersion: String(rv) }, ...extra });
  return { uid, key: `ns/${name}`, rv, json };
}

function applyAll(start: Iterable<CachedObject>, events: ObjectEvent[]): Map<string, CachedObject> {
  const cache = new ObjectCache();
  cache.replace(start, 0);
  for (const e of events) cache.apply(e);
  return new Map([...cache.values()].map((o) => [o.uid, o]));
}

describe("ObjectCache", () => {
  it("keeps a key-ordered snapshot that is shared until the next change", () => {
    const cache = new ObjectCache();
    cache.replace([object("b", "b", 2), object("a", "a", 1)], 0);
    const first = cache.snapshot();
    expect(first.map((o) => o.key)).toEqual(["ns/a", "ns/b"]);
    expect(cache.snapshot()).toBe(first);
    cache.apply({ type: "DELETED", object: object("a", "a", 3) });
    expect(cache.snapshot().map((o) => o.key)).toEqual(["ns/b"]);
    expect(first.length).toBe(2); // earlier snapshots are not mutated
  });
});

describe("relistDiff", () => {
  it("turns a gap into ADDED, MODIFIED and DELETED events at distinct versions in the gap", () => {
    const before = [object("a", "a", 5), object("b", "b", 6), object("c", "c", 7)];
    const listed = [object("a", "a", 5), object("b", "b", 12), object("d", "d", 11)];
    const events = relistDiff(before, listed, 10, 15)!;
    expect(events.map((e) => [e.type, e.object.uid, e.object.rv])).toEqual([
      ["ADDED", "d", 11],
      ["MODIFIED", "b", 12],
      ["DELETED", "c", 15],
    ]);
    const deleted = JSON.parse(events[2]!.object.json);
    expect(deleted.metadata.resourceVersion).toBe("15"); // last state, at the deletion's RV
    expect(deleted.kind).toBe("Pod");
  });

  it("a name deleted and recreated in the gap is a DELETED of the old uid and an ADDED of the new", () => {
    const events = relistDiff([object("old", "x", 3)], [object("new", "x", 9)], 5, 10)!;
    expect(events.map((e) => [e.type, e.object.uid])).toEqual([
      ["ADDED", "new"],
      ["DELETED", "old"],
    ]);
  });

  it("refuses histories it cannot represent exactly", () => {
    expect(relistDiff([object("a", "a", 5)], [object("a", "a", 4)], 6, 10)).toBeUndefined(); // went back in time
    expect(relistDiff([], [object("a", "a", 3)], 6, 10)).toBeUndefined(); // appeared before the gap
    expect(relistDiff([object("a", "a", 1), object("b", "b", 2)], [], 9, 10)).toBeUndefined(); // more deletes than revisions
    expect(relistDiff([], [], 10, 9)).toBeUndefined(); // list older than the cache
  });

  it("property: applying the diff to the cache gives exactly the listed state, in strictly increasing versions", () => {
    // A random history: objects created, updated, deleted and recreated, one revision each.
    const op = fc.record({ kind: fc.constantFrom("create", "update", "delete"), name: fc.integer({ min: 0, max: 6 }), idle: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.integer({ min: 0, max: 40 }), (ops, cut) => {
        let rv = 100;
        let uidSeq = 0;
        const live = new Map<number, CachedObject>();
        let atCut: CachedObject[] | undefined;
        let cutRv = rv;
        ops.forEach((o, i) => {
          if (i === cut) {
            atCut = [...live.values()];
            cutRv = rv;
          }
          rv += 1 + o.idle; // other keys' writes also consume revisions
          const current = live.get(o.name);
          if (o.kind === "create" && !current) live.set(o.name, object(`u${uidSeq++}`, `n${o.name}`, rv));
          else if (o.kind === "update" && current) live.set(o.name, object(current.uid, current.key.slice(3), rv, { spec: rv }));
          else if (o.kind === "delete" && current) live.delete(o.name);
        });
        if (atCut === undefined) {
          atCut = [...live.values()];
          cutRv = rv;
        }
        const listed = [...live.values()];
        const events = relistDiff(atCut, listed, cutRv, rv);
        expect(events).toBeDefined();
        const rvs = events!.map((e) => e.object.rv);
        expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
        expect(new Set(rvs).size).toBe(rvs.length);
        for (const v of rvs) expect(v > cutRv && v <= rv).toBe(true);
        const result = applyAll(atCut, events!);
        expect([...result.keys()].sort()).toEqual(listed.map((o) => o.uid).sort());
        for (const o of listed) expect(result.get(o.uid)!.rv).toBe(o.rv);
      }),
      { seed: 7, numRuns: 500 },
    );
  });
});
