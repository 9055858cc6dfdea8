import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { Collection, MEMBER_OF_KEY, type ObjectEvent, type ObjectRecord, type StoredObject } from "./collection.ts";
import { SnapshotRegistry, type Lease } from "./snapshots.ts";
import { HubStorage, objectsTable } from "./storage.ts";

const record = (name: string, uid: string, rv: number): ObjectRecord => ({ key: `ns/${name}`, uid, rv, json: JSON.stringify({ name, uid, rv }) });

/** A collection over its own database, with the snapshot registry that decides what it keeps, written as the feed writes it. */
function open(db = database()) {
  const storage = new HubStorage(durableStorage(db));
  storage.make();
  const collection = new Collection(() => storage.sql);
  let now = 0;
  const snapshots = new SnapshotRegistry({ kept: 2, ttlMs: 1000 }, () => now);
  snapshots.onChange = (oldest) => collection.prune(oldest);
  const apply = (...events: ObjectEvent[]) => {
    let added = 0;
    storage.transaction(() => {
      for (const { type, object } of events) {
        const replaced = collection.peek(object.key);
        const since = type === "ADDED" || !replaced ? object.rv : replaced.since;
        added += collection.write(type, object, since, replaced, replaced !== undefined && snapshots.sees(replaced.rv));
      }
    });
    collection.committed(added);
  };
  /** Every object at `at`, read a page of `limit` (and `maxBytes`) at a time. */
  const all = (at: number, limit: number, maxBytes?: number) => {
    const seen: StoredObject[] = [];
    for (let after = ""; ; ) {
      const { rows, more } = collection.page(at, after, limit, maxBytes);
      if (maxBytes !== undefined && rows.length > 1) expect(rows.reduce((n, r) => n + r.json.length, 0)).toBeLessThanOrEqual(maxBytes);
      seen.push(...rows);
      if (!more || rows.length === 0) return seen;
      after = (rows.at(-1) as StoredObject).key;
    }
  };
  /** The same, as the JSON a list joins, read with `joinedPage`: never more than `maxBytes` joined, unless one object is. */
  const joined = (at: number, limit: number, maxBytes?: number) => {
    const seen: string[] = [];
    for (let after = ""; ; ) {
      const page = collection.joinedPage(at, after, limit, maxBytes);
      if (maxBytes !== undefined && page.count > 1) expect(page.bytes.length).toBeLessThanOrEqual(maxBytes);
      if (page.count > 0) seen.push(new TextDecoder().decode(page.bytes));
      if (!page.more || page.count === 0) return seen.join(",");
      after = page.last;
    }
  };
  return { storage, collection, snapshots, apply, all, joined, advance: (ms: number) => (now += ms) };
}

describe("Collection", () => {
  it("writes changes, counts them, and knows since when each object is in the collection", () => {
    const { collection, apply } = open();
    apply({ type: "ADDED", object: record("a", "u1", 5) }, { type: "ADDED", object: record("b", "u2", 6) });
    apply({ type: "MODIFIED", object: record("a", "u1", 7) }, { type: "DELETED", object: record("b", "u2", 8) });
    expect(collection.size).toBe(1);
    expect(collection.get("ns/a")).toMatchObject({ uid: "u1", rv: 7, since: 5 });
    expect(collection.peek("ns/b")).toBeUndefined();
  });

  it("reads the objects whose name begins with a prefix, namespaced or not, a page at a time (a merged key's objects of one member)", () => {
    const { collection, apply } = open();
    const at = (key: string, rv: number): ObjectRecord => ({ key, uid: key, rv, json: JSON.stringify({ key }) });
    apply(...["ns1/b:x", "ns1/ab:y", "ns2/a:z", "a:cluster-scoped", "ns2/b:w", "b:v", "ns1/x"].map((key, i): ObjectEvent => ({ type: "ADDED", object: at(key, i + 1) })));
    const named = (prefix: string, limit: number) => {
      const seen: string[] = [];
      for (let after = ""; ; ) {
        const { rows, more } = collection.named(prefix, after, limit);
        seen.push(...rows.map((r) => r.key));
        if (!more || rows.length === 0) return seen;
        after = rows.at(-1)!.key;
      }
    };
    expect(named("b:", 1)).toEqual(["b:v", "ns1/b:x", "ns2/b:w"]);
    expect(named("a:", 10)).toEqual(["a:cluster-scoped", "ns2/a:z"]);
  });

  it("reads one member's objects by an index of the member, not by a scan of every object, also once a new history's list has replaced the objects", () => {
    const { collection, apply, storage } = open();
    const at = (key: string, rv: number): ObjectRecord => ({ key, uid: key, rv, json: JSON.stringify({ key }) });
    const keys = Array.from({ length: 60 }, (_, i) => `ns${i % 4}/${["east", "west", "north"][i % 3]}:pod-${i}`);
    apply(...keys.map((key, i): ObjectEvent => ({ type: "ADDED", object: at(key, i + 1) })));
    const west = (expected: string[]) => {
      const { rows, more } = collection.named("west:", "", 100);
      expect(more).toBe(false);
      expect(rows.map((r) => r.key)).toEqual(expected);
      const plan = storage.sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT key FROM objects WHERE ${MEMBER_OF_KEY} = ? AND key > ? ORDER BY key LIMIT ?`, "west:", "", 10)
        .toArray()
        .map((r) => r.detail);
      expect(plan.join("; ")).toMatch(/SEARCH objects USING (COVERING )?INDEX objects_by_member/);
    };
    west(keys.filter((k) => k.includes("/west:")).sort());
    // A new history: the list staged beside the objects takes their place, without the index.
    storage.transaction(() => {
      storage.sql.exec(objectsTable("listed"));
      for (const key of ["ns1/west:a", "ns1/east:b", "west:cluster-scoped"]) storage.sql.exec("INSERT INTO listed (key, uid, rv, since, json) VALUES (?, ?, 1, 1, '{}')", key, key);
      collection.replaceWithListed();
    });
    collection.recount();
    west(["ns1/west:a", "west:cluster-scoped"]);
  });

  it("a snapshot reads the collection as it was, while it changes; its kept versions go when it closes", () => {
    const { collection, snapshots, apply, all, storage } = open();
    apply({ type: "ADDED", object: record("a", "u1", 1) }, { type: "ADDED", object: record("b", "u2", 2) }, { type: "ADDED", object: record("c", "u3", 3) });
    const lease = snapshots.hold(3);
    apply({ type: "MODIFIED", object: record("a", "u1", 4) }, { type: "DELETED", object: record("b", "u2", 5) }, { type: "ADDED", object: record("d", "u4", 6) });
    expect(all(3, 1).map((o) => [o.key, o.rv])).toEqual([
      ["ns/a", 1],
      ["ns/b", 2],
      ["ns/c", 3],
    ]);
    expect(all(6, 2).map((o) => [o.key, o.rv])).toEqual([
      ["ns/a", 4],
      ["ns/c", 3],
      ["ns/d", 6],
    ]);
    expect([collection.sizeAt(3), collection.sizeAt(6), collection.keyAfter(3, "ns/a", 2), collection.keyAfter(3, "ns/b", 5)]).toEqual([3, 3, "ns/c", undefined]);
    expect(collection.changed(1, 3, 0, 10).rows.map((o) => o.rv)).toEqual([2, 3]);
    expect([collection.presentAt("ns/b", "u2", 3), collection.presentAt("ns/b", "u2", 6)]).toEqual([true, false]);
    const versions = () => storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM versions").one().n;
    expect(versions()).toBe(2);
    lease.release();
    expect(versions()).toBe(0);
  });

  it("a read stops at its bytes (or one object), and a snapshot's read never passes what it left unread of either table", () => {
    const { snapshots, apply, all, collection } = open();
    const sized = (name: string, uid: string, rv: number, pad: number): ObjectRecord => ({ ...record(name, uid, rv), json: JSON.stringify({ name, pad: "x".repeat(pad) }) });
    apply({ type: "ADDED", object: sized("a", "u1", 1, 10) }, { type: "ADDED", object: sized("b", "u2", 2, 100) }, { type: "ADDED", object: sized("c", "u3", 3, 10) });
    const lease = snapshots.hold(3);
    // c's version at 3 is kept apart: the snapshot reads a and b from the objects, c from the kept versions.
    apply({ type: "MODIFIED", object: sized("c", "u3", 4, 10) });
    const first = collection.page(3, "", 10, 70);
    expect([first.rows.map((o) => o.key), first.more]).toEqual([["ns/a"], true]);
    expect(collection.page(3, "", 10, 1).rows.map((o) => o.key)).toEqual(["ns/a"]);
    expect(all(3, 10, 70).map((o) => o.key)).toEqual(["ns/a", "ns/b", "ns/c"]);
    lease.release();
  });

  it("keeps no versions while no snapshot is open", () => {
    const { apply, storage } = open();
    apply({ type: "ADDED", object: record("a", "u1", 1) });
    apply({ type: "MODIFIED", object: record("a", "u1", 2) });
    expect(storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM versions").one().n).toBe(0);
  });

  it("property: every open snapshot, read a page at a time, is the collection as it was at its resourceVersion", () => {
    const op = fc.oneof(
      fc.record({ op: fc.constantFrom("create" as const, "update" as const, "delete" as const), name: fc.integer({ min: 0, max: 8 }) }),
      fc.record({ op: fc.constant("open" as const) }),
      fc.record({ op: fc.constant("close" as const), pick: fc.nat() }),
      fc.record({ op: fc.constant("read" as const), pick: fc.nat(), limit: fc.integer({ min: 1, max: 4 }), maxBytes: fc.integer({ min: 1, max: 120 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const { collection, snapshots, apply, all, joined } = open();
        const live = new Map<string, ObjectRecord>();
        const past = new Map<number, ObjectRecord[]>();
        const leases: Lease[] = [];
        let rv = 0;
        let uids = 0;
        const state = () => [...live.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
        past.set(0, []);
        for (const step of ops) {
          if (step.op === "open") {
            leases.push(snapshots.hold(rv));
            past.set(rv, state());
            continue;
          }
          if (step.op === "close") {
            leases.splice(step.pick % Math.max(1, leases.length), 1)[0]?.release();
            continue;
          }
          if (step.op === "read") {
            const lease = leases[step.pick % Math.max(1, leases.length)];
            if (lease) expect(all(lease.rv, step.limit, step.maxBytes).map((o) => [o.key, o.rv])).toEqual((past.get(lease.rv) ?? []).map((o) => [o.key, o.rv]));
            if (lease) expect(joined(lease.rv, step.limit, step.maxBytes)).toBe((past.get(lease.rv) ?? []).map((o) => o.json).join(","));
            continue;
          }
          const key = `ns/n${step.name}`;
          const current = live.get(key);
          rv++;
          if (step.op === "create" && !current) {
            const o = record(`n${step.name}`, `u${uids++}`, rv);
            live.set(key, o);
            apply({ type: "ADDED", object: o });
          } else if (step.op === "update" && current) {
            // Objects of different sizes, so that reads stop at their bytes here and there.
            const o = { ...current, rv, json: JSON.stringify({ rv, pad: "x".repeat(rv % 40) }) };
            live.set(key, o);
            apply({ type: "MODIFIED", object: o });
          } else if (step.op === "delete" && current) {
            live.delete(key);
            apply({ type: "DELETED", object: { ...current, rv } });
          }
        }
        for (const lease of leases) expect(all(lease.rv, 3, 60).map((o) => o.key)).toEqual((past.get(lease.rv) ?? []).map((o) => o.key));
        expect(joined(rv, 2)).toBe(
          state()
            .map((o) => o.json)
            .join(","),
        );
        expect(collection.size).toBe(live.size);
      }),
      { seed: 2026, numRuns: 300 },
    );
  });
});
