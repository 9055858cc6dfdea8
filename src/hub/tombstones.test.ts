import { describe, expect, it } from "vitest";
import { database, durableStorage, type Database } from "../../test/kit/sqlite.ts";
import { HubStorage } from "./storage.ts";
import { Tombstones, type Tombstone, type TombstoneLimits } from "./tombstones.ts";

const gone = (name: string, rv: number, since: number): Tombstone => ({ uid: `u-${name}`, key: `ns/${name}`, rv, since, json: "{}" });

function open(limits: TombstoneLimits, db: Database = database()) {
  const storage = new HubStorage(durableStorage(db));
  storage.make();
  const tombstones = new Tombstones(() => storage.sql, limits);
  tombstones.restore();
  let horizon = 10;
  /** Write deletions at `now`; the horizon after. */
  const write = (deleted: Tombstone[], now = 1000) => {
    const written = storage.transaction(() => tombstones.write(deleted, now, horizon));
    tombstones.committed(written.count);
    horizon = written.horizon;
    return horizon;
  };
  const goneAfter = (rv: number) => tombstones.page(rv, rv, Number.MAX_SAFE_INTEGER, 100).rows.map((t) => t.uid);
  return { tombstones, write, goneAfter };
}

describe("Tombstones", () => {
  it("are kept up to their count, moving the horizon to the newest one dropped; a resume hears only of objects it had", () => {
    const { write, tombstones, goneAfter } = open({ max: 2, maxAgeMs: 86_400_000 });
    let horizon = 10;
    for (const [i, rv] of [11, 12, 13].entries()) horizon = write([gone(`p${i}`, rv, 10)]);
    expect(horizon).toBe(11);
    expect(tombstones.page(11, 11, 100, 10).rows.map((t) => t.rv)).toEqual([12, 13]);
    // An object that came after a resume's resourceVersion and left again is nothing to that resume.
    write([gone("late", 14, 13)]);
    expect(goneAfter(12)).toEqual(["u-p2"]);
  });

  it("count themselves across a restart, and an object deleted again once", () => {
    const db = database();
    const first = open({ max: 2, maxAgeMs: 86_400_000 }, db);
    first.write([gone("a", 11, 10)]);
    // Back, and deleted again: still one tombstone.
    first.write([gone("a", 12, 10)]);
    const again = open({ max: 2, maxAgeMs: 86_400_000 }, db);
    expect(again.write([gone("b", 13, 10)])).toBe(10);
    expect(again.write([gone("c", 14, 10)])).toBe(12);
    expect(again.goneAfter(10)).toEqual(["u-b", "u-c"]);
  });

  it("drop those older than their age", () => {
    const { write, goneAfter } = open({ max: 100, maxAgeMs: 1000 });
    write([gone("old", 11, 10)], 0);
    expect(write([gone("new", 12, 10)], 5000)).toBe(11);
    expect(goneAfter(10)).toEqual(["u-new"]);
  });
});
