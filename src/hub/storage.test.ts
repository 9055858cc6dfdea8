import { describe, expect, it } from "vitest";
import { watchKey } from "../k8s/key.ts";
import type { CachedObject } from "./cache.ts";
import { HubStorage, type HubIdentity } from "./storage.ts";

/** What the fake needs of Node's SQLite (this file is type-checked with the Workers types, which know no `node:` modules). */
interface Database {
  exec(sql: string): void;
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}
const { DatabaseSync } = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => Database };

/**
 * A Durable Object's SQLite storage, as far as the hub uses it, over Node's SQLite: `sql.exec`
 * with cursors, and `transactionSync` that rolls back when its function throws. The database
 * outlives a `HubStorage`, as a Durable Object's does across restarts.
 */
function durableStorage(db = new DatabaseSync(":memory:")): DurableObjectStorage {
  const exec = (query: string, ...bindings: SqlStorageValue[]) => {
    const several = query.trim().replace(/;$/, "").includes(";");
    let rows: unknown[] = [];
    if (several) db.exec(query);
    else rows = db.prepare(query).all(...bindings);
    return { toArray: () => rows, one: () => rows[0], [Symbol.iterator]: () => rows[Symbol.iterator]() };
  };
  const transactionSync = <T>(fn: () => T): T => {
    db.exec("BEGIN");
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (e) {
      db.exec("ROLLBACK");
      throw e;
    }
  };
  return { sql: { exec }, transactionSync } as unknown as DurableObjectStorage;
}

const identity: HubIdentity = {
  key: watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null }),
  kind: "Pod",
  listKind: "PodList",
  apiVersion: "v1",
};
const pod = (name: string, rv: number): CachedObject => ({ uid: `u-${name}`, key: `ns/${name}`, rv, json: JSON.stringify({ metadata: { name, resourceVersion: String(rv) } }) });
const line = (type: string, o: CachedObject) => `{"type":"${type}","object":${o.json}}\n`;
const limits = { max: 100, maxAgeMs: 86_400_000 };

describe("HubStorage", () => {
  it("restores after a restart what it was given: the objects as of the checkpoint, the window's events, head, start and horizon", () => {
    const db = new DatabaseSync(":memory:");
    const before = new HubStorage(durableStorage(db), limits);
    before.saveSnapshot(identity, [pod("a", 5), pod("b", 7)], 10);
    const a11 = pod("a", 11);
    const c12 = pod("c", 12);
    before.saveBatch({ events: [{ rv: 11, line: line("MODIFIED", a11) }], head: 11, start: 10, tombstones: [] }, 1000, 10);
    // A checkpoint: the objects table catches up with the events so far.
    before.saveBatch(
      {
        events: [{ rv: 12, line: line("ADDED", c12) }],
        head: 12,
        start: 10,
        checkpoint: {
          rv: 12,
          changed: [
            { object: a11, since: 10 },
            { object: c12, since: 12 },
          ],
          removed: ["u-b"],
        },
        tombstones: [{ object: pod("b", 12), since: 10 }],
      },
      1000,
      10,
    );
    before.saveHead(15); // a bookmark moved the head past the last event

    const after = new HubStorage(durableStorage(db), limits).load();
    expect(after?.key).toEqual(identity.key);
    expect([after?.head, after?.start, after?.checkpoint, after?.horizon]).toEqual([15, 10, 12, 10]);
    expect(after?.objects.map((o) => [o.object.uid, o.object.rv, o.since]).sort()).toEqual([
      ["u-a", 11, 10],
      ["u-c", 12, 12],
    ]);
    expect(after?.events.map((e) => e.rv)).toEqual([11, 12]);
    expect(new HubStorage(durableStorage(db), limits).tombstonesAfter(11).map((t) => t.object.uid)).toEqual(["u-b"]);
  });

  it("writes a batch all or nothing", () => {
    const db = new DatabaseSync(":memory:");
    const storage = new HubStorage(durableStorage(db), limits);
    storage.saveSnapshot(identity, [pod("a", 5)], 10);
    storage.saveBatch({ events: [{ rv: 11, line: line("MODIFIED", pod("a", 11)) }], head: 11, start: 10, tombstones: [] }, 1000, 10);
    // The second event repeats a resourceVersion: the batch fails, and its first event is not kept either.
    const failing = {
      events: [
        { rv: 12, line: line("MODIFIED", pod("a", 12)) },
        { rv: 11, line: "again" },
      ],
      head: 12,
      start: 10,
      tombstones: [],
    };
    expect(() => storage.saveBatch(failing, 1000, 10)).toThrow();
    expect(new HubStorage(durableStorage(db), limits).load()?.events.map((e) => e.rv)).toEqual([11]);
  });

  it("keeps tombstones up to their count, moving the horizon to the newest one dropped; a resume hears only of objects it had", () => {
    const storage = new HubStorage(durableStorage(), { max: 2, maxAgeMs: 86_400_000 });
    storage.saveSnapshot(identity, [], 10);
    let horizon = 10;
    for (const [i, rv] of [11, 12, 13].entries()) {
      horizon = storage.saveBatch({ events: [], head: rv, start: 10, tombstones: [{ object: pod(`p${i}`, rv), since: 10 }] }, 1000, horizon);
    }
    expect(horizon).toBe(11);
    expect(storage.tombstonesAfter(11).map((t) => t.object.rv)).toEqual([12, 13]);
    // An object that came after a resume's resourceVersion and left again is nothing to that resume.
    storage.saveBatch({ events: [], head: 14, start: 10, tombstones: [{ object: pod("late", 14), since: 13 }] }, 1000, horizon);
    expect(storage.tombstonesAfter(12).map((t) => t.object.uid)).toEqual(["u-p2"]);
  });

  it("counts its tombstones across a restart, and an object deleted again once", () => {
    const db = new DatabaseSync(":memory:");
    const first = new HubStorage(durableStorage(db), { max: 2, maxAgeMs: 86_400_000 });
    first.saveSnapshot(identity, [], 10);
    let horizon = first.saveBatch({ events: [], head: 11, start: 10, tombstones: [{ object: pod("a", 11), since: 10 }] }, 1000, 10);
    // Back, and deleted again: still one tombstone.
    horizon = first.saveBatch({ events: [], head: 12, start: 10, tombstones: [{ object: pod("a", 12), since: 10 }] }, 1000, horizon);
    const after = new HubStorage(durableStorage(db), { max: 2, maxAgeMs: 86_400_000 });
    horizon = after.saveBatch({ events: [], head: 13, start: 10, tombstones: [{ object: pod("b", 13), since: 10 }] }, 1000, horizon);
    expect(horizon).toBe(10);
    horizon = after.saveBatch({ events: [], head: 14, start: 10, tombstones: [{ object: pod("c", 14), since: 10 }] }, 1000, horizon);
    expect(horizon).toBe(12);
    expect(after.tombstonesAfter(10).map((t) => t.object.uid)).toEqual(["u-b", "u-c"]);
  });

  it("drops tombstones older than their age", () => {
    const storage = new HubStorage(durableStorage(), { max: 100, maxAgeMs: 1000 });
    storage.saveSnapshot(identity, [], 10);
    let horizon = storage.saveBatch({ events: [], head: 11, start: 10, tombstones: [{ object: pod("old", 11), since: 10 }] }, 0, 10);
    horizon = storage.saveBatch({ events: [], head: 12, start: 10, tombstones: [{ object: pod("new", 12), since: 10 }] }, 5000, horizon);
    expect(horizon).toBe(11);
    expect(storage.tombstonesAfter(10).map((t) => t.object.uid)).toEqual(["u-new"]);
  });
});
