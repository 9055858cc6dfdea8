import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { Collection, type ObjectEvent, type ObjectRecord } from "./collection.ts";
import { StagedList } from "./relist.ts";
import { HubStorage } from "./storage.ts";

function object(uid: string, name: string, rv: number, extra: Record<string, unknown> = {}): ObjectRecord {
  const json = JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { uid, name, namespace: "ns", resourceVersion: String(rv) }, ...extra });
  return { uid, key: `ns/${name}`, rv, json };
}

/** A hub's collection holding `before`, and `listed` staged as a list arriving in pages of two. */
function staged(before: readonly ObjectRecord[], listed: readonly ObjectRecord[]) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const collection = new Collection(() => storage.sql);
  const write = (events: readonly ObjectEvent[]) => {
    let added = 0;
    storage.transaction(() => {
      for (const { type, object } of events) {
        const replaced = collection.peek(object.key);
        added += collection.write(type, object, type === "ADDED" || !replaced ? object.rv : replaced.since, replaced, false);
      }
    });
    collection.committed(added);
  };
  write(before.map((o) => ({ type: "ADDED", object: o })));
  const list = new StagedList(
    () => storage.sql,
    (w) => storage.transaction(w),
  );
  list.begin();
  for (let i = 0; i < listed.length; i += 2) list.add(listed.slice(i, i + 2), 0);
  /** The difference's events, applied to the collection a page of `page` at a time as the feed does. */
  const events = (from: number, page = 3) => {
    const all: ObjectEvent[] = [];
    for (let after = from; ; ) {
      const next = list.events(after, page);
      if (next.length === 0) return all;
      write(next);
      all.push(...next);
      after = (next.at(-1) as ObjectEvent).object.rv;
    }
  };
  const now = () => storage.sql.exec<Omit<ObjectRecord, "row">>("SELECT key, uid, rv, json FROM objects ORDER BY key").toArray();
  let pauses = 0;
  /** The difference, compared `page` keys at a step, counting the pauses between steps. */
  const diff = (from: number, to: number, page?: number) => list.diff(from, to, async () => void pauses++, page);
  return { diff, events, now, collection, pauses: () => pauses };
}

describe("a staged list against the collection", () => {
  it("turns a gap into ADDED, MODIFIED and DELETED events at distinct versions in the gap", async () => {
    const { diff, events } = staged([object("a", "a", 5), object("b", "b", 6), object("c", "c", 7)], [object("a", "a", 5), object("b", "b", 12), object("d", "d", 11)]);
    expect(await diff(10, 15)).toBe(3);
    const emitted = events(10);
    expect(emitted.map((e) => [e.type, e.object.uid, e.object.rv])).toEqual([
      ["ADDED", "d", 11],
      ["MODIFIED", "b", 12],
      ["DELETED", "c", 15],
    ]);
    const deleted = JSON.parse(emitted[2]!.object.json);
    expect(deleted.metadata.resourceVersion).toBe("15"); // last state, at the deletion's RV
    expect(deleted.kind).toBe("Pod");
  });

  it("a name deleted and recreated in the gap: the old uid's DELETED comes before the new one's ADDED", async () => {
    const { diff, events, now } = staged([object("old", "x", 3)], [object("new", "x", 9)]);
    expect(await diff(5, 10)).toBe(2);
    expect(events(5).map((e) => [e.type, e.object.uid, e.object.rv])).toEqual([
      ["DELETED", "old", 8],
      ["ADDED", "new", 9],
    ]);
    expect(now().map((o) => o.uid)).toEqual(["new"]);
  });

  it("compares a page of keys a step and pauses between steps, with the same difference as in one step", async () => {
    const before = Array.from({ length: 20 }, (_, i) => object(`u${i}`, `p${String(i).padStart(2, "0")}`, i + 1));
    // By 60: half of them gone, a quarter modified and a quarter replaced by new objects of the same name (each deleted the revision before).
    let rv = 30;
    const listed = before.flatMap((o, i) => (i % 2 === 0 ? [] : i % 4 === 1 ? [{ ...o, rv: (rv += 2) }] : [object(`new${i}`, o.key.slice(3), (rv += 2))]));
    const whole = staged(before, listed);
    expect(await whole.diff(30, 60, 1000)).toBe(25);
    expect(whole.pauses()).toBe(0);
    const paged = staged(before, listed);
    expect(await paged.diff(30, 60, 4)).toBe(25);
    // 20 keys, 4 a step: at least 4 pauses in the comparison alone.
    expect(paged.pauses()).toBeGreaterThanOrEqual(4);
    const types = (e: ObjectEvent) => [e.type, e.object.uid, e.object.rv];
    expect(paged.events(30).map(types)).toEqual(whole.events(30).map(types));
  });

  it("refuses histories it cannot represent exactly", async () => {
    expect(await staged([object("a", "a", 5)], [object("a", "a", 4)]).diff(6, 10)).toBeUndefined(); // went back in time
    expect(await staged([], [object("a", "a", 3)]).diff(6, 10)).toBeUndefined(); // appeared before the gap
    expect(await staged([object("a", "a", 1), object("b", "b", 2)], []).diff(9, 10)).toBeUndefined(); // more deletes than revisions
    expect(await staged([], []).diff(10, 9)).toBeUndefined(); // list older than the collection
    expect(await staged([object("old", "x", 3)], [object("new", "x", 6)]).diff(5, 10)).toBeUndefined(); // no revision left before the new one
  });

  it("property: applying the difference gives exactly the listed state, in strictly increasing versions inside the gap, however many keys a step compares", async () => {
    // A random history: objects created, updated, deleted and recreated, one revision each.
    const op = fc.record({ kind: fc.constantFrom("create", "update", "delete"), name: fc.integer({ min: 0, max: 6 }), idle: fc.integer({ min: 0, max: 2 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 8 }), async (ops, cut, page, step) => {
        let rv = 100;
        let uidSeq = 0;
        const live = new Map<number, Omit<ObjectRecord, "row">>();
        let atCut: ObjectRecord[] | undefined;
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
        const { diff, events, now } = staged(atCut, listed);
        expect(await diff(cutRv, rv, step)).toBeDefined();
        const emitted = events(cutRv, page);
        const rvs = emitted.map((e) => e.object.rv);
        expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
        expect(new Set(rvs).size).toBe(rvs.length);
        for (const v of rvs) expect(v > cutRv && v <= rv).toBe(true);
        // A client that keys by name is never told a successor was deleted.
        const byName = new Map<string, string>();
        for (const e of emitted) {
          if (e.type === "DELETED") expect(byName.get(e.object.key) ?? e.object.uid).toBe(e.object.uid);
          else byName.set(e.object.key, e.object.uid);
        }
        expect(now().map((o) => [o.uid, o.rv])).toEqual(listed.sort((a, b) => (a.key < b.key ? -1 : 1)).map((o) => [o.uid, o.rv]));
      }),
      { seed: 7, numRuns: 400 },
    );
  });
});
