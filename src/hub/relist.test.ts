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

/** A hub's collection holding `before`, and `listed` staged as a relist arriving in pages of two, in the order given. */
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
  list.begin(true);
  let stagedRows = 0;
  for (let i = 0; i < listed.length; i += 2) {
    const differing = list.differing(listed.slice(i, i + 2), (o) => o);
    list.add(differing, 0);
    stagedRows += differing.length;
  }
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
  /** The relist as a new history: the collection made the list's in place (after `diff`). */
  const replace = () => storage.transaction(() => list.replaceDiffering());
  return { diff, events, now, replace, collection, pauses: () => pauses, staged: () => stagedRows };
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

  it("refuses histories it cannot represent exactly, and then makes the collection the list's in place", async () => {
    const cases: Array<[string, ObjectRecord[], ObjectRecord[], number, number]> = [
      ["went back in time", [object("a", "a", 5), object("b", "b", 2)], [object("a", "a", 4), object("b", "b", 2)], 6, 10],
      ["appeared before the gap", [object("b", "b", 2)], [object("a", "a", 3), object("b", "b", 2)], 6, 10],
      ["more deletes than revisions", [object("a", "a", 1), object("b", "b", 2)], [], 9, 10],
      ["list older than the collection", [object("a", "a", 1), object("b", "b", 12), object("c", "c", 3)], [object("a", "a", 1), object("c", "c", 3)], 12, 9],
      ["no revision left before the new one", [object("old", "x", 3), object("y", "y", 4)], [object("new", "x", 6), object("y", "y", 4)], 5, 10],
    ];
    for (const [what, before, listed, from, to] of cases) {
      const relist = staged(before, listed);
      expect(await relist.diff(from, to), what).toBeUndefined();
      relist.replace();
      expect(
        relist.now().map((o) => [o.uid, o.rv]),
        what,
      ).toEqual(listed.map((o) => [o.uid, o.rv]));
    }
  });

  it("stages only what differs from the collection, whatever order the pages come in", async () => {
    const before = Array.from({ length: 30 }, (_, i) => object(`u${i}`, `p${String(i).padStart(2, "0")}`, i + 1));
    // By 50: two modified, one deleted, one new; the other 27 as they were.
    const modified = new Map([
      ["u3", 41],
      ["u20", 45],
    ]);
    const listed = [...before.filter((o) => o.uid !== "u7").map((o) => ({ ...o, rv: modified.get(o.uid) ?? o.rv })), object("n", "p30", 47)];
    const types = (e: ObjectEvent) => [e.type, e.object.uid, e.object.rv];
    const expected = [
      ["MODIFIED", "u3", 41],
      ["MODIFIED", "u20", 45],
      ["ADDED", "n", 47],
      ["DELETED", "u7", 50],
    ];
    for (const order of [listed, [...listed].reverse(), [...listed.slice(15), ...listed.slice(0, 15)]]) {
      const relist = staged(before, order);
      expect(await relist.diff(30, 50)).toBe(4);
      expect(relist.staged()).toBe(3);
      expect(relist.events(30).map(types)).toEqual(expected);
      expect(relist.now().map((o) => o.uid)).toEqual([...listed].sort((x, y) => (x.key < y.key ? -1 : 1)).map((o) => o.uid));
    }
  });

  it("property: applying the difference gives exactly the listed state, in strictly increasing versions inside the gap, however many keys a step compares and in whatever order the list comes", async () => {
    // A random history: objects created, updated, deleted and recreated, one revision each.
    const op = fc.record({ kind: fc.constantFrom("create", "update", "delete"), name: fc.integer({ min: 0, max: 6 }), idle: fc.integer({ min: 0, max: 2 }) });
    // The order the list comes in: the key's (etcd's), backwards, or the objects' creation.
    const order = fc.constantFrom("keys", "reversed", "created");
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        order,
        async (ops, cut, page, step, listOrder) => {
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
          const byKey = [...live.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
          const listed = listOrder === "keys" ? byKey : listOrder === "reversed" ? [...byKey].reverse() : [...live.values()];
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
          expect(now().map((o) => [o.uid, o.rv])).toEqual(byKey.map((o) => [o.uid, o.rv]));
        },
      ),
      { seed: 7, numRuns: 400 },
    );
  });
});
