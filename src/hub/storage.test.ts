import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { watchKey } from "../k8s/key.ts";
import { HubStorage, type HubIdentity } from "./storage.ts";

const identity: HubIdentity = {
  key: watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null }),
  kind: "Pod",
  listKind: "PodList",
  apiVersion: "v1",
};

const tables = (db: ReturnType<typeof database>) => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name);

describe("HubStorage", () => {
  it("makes its tables with its first write, not before: a hub only asked about stores nothing", () => {
    const db = database();
    const storage = new HubStorage(durableStorage(db));
    expect([storage.holdsState, storage.identity(), storage.history()]).toEqual([false, undefined, undefined]);
    expect(tables(db)).toEqual([]);
    storage.transaction(() => {
      storage.setMeta("identity", JSON.stringify(identity));
      for (const name of ["head", "start", "horizon"]) storage.setMeta(name, 10);
    });
    expect(tables(db)).toEqual(["events", "meta", "objects", "tombstones", "versions", "view_rows"]);
    expect(new HubStorage(durableStorage(db)).history()).toEqual({ ...identity, head: 10, start: 10, horizon: 10 });
  });

  it("refuses a row over the platform's 2 MB, as the platform's SQLite does, where the local one would take it", () => {
    const storage = new HubStorage(durableStorage());
    storage.make();
    const row = (text: string) => storage.sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", "big", text);
    row("x".repeat(2_000_000 - 3));
    expect(() => row("x".repeat(2_000_000 - 2))).toThrow(/SQLITE_TOOBIG .*at most 2000000/);
    // Bytes, not characters: 700,000 three-byte characters are 2.1 MB.
    expect(() => row("€".repeat(700_000))).toThrow(/SQLITE_TOOBIG/);
    row("é".repeat(999_998));
  });

  it("writes a transaction all or nothing", () => {
    const db = database();
    const storage = new HubStorage(durableStorage(db));
    storage.setMeta("head", 1);
    expect(() =>
      storage.transaction(() => {
        storage.setMeta("head", 2);
        throw new Error("the write fails halfway");
      }),
    ).toThrow("halfway");
    expect(new HubStorage(durableStorage(db)).meta("head")).toBe("1");
  });

  it("starts afresh over another schema's tables (a hub written by an earlier version)", () => {
    const db = database();
    db.exec("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE objects (uid TEXT PRIMARY KEY, json TEXT); INSERT INTO meta VALUES ('identity', '{}')");
    const storage = new HubStorage(durableStorage(db));
    expect([storage.holdsState, storage.identity(), tables(db)]).toEqual([false, undefined, []]);
  });

  it("deletes everything it stored", async () => {
    const db = database();
    const storage = new HubStorage(durableStorage(db));
    storage.setMeta("identity", JSON.stringify(identity));
    await storage.clear();
    expect([storage.holdsState, storage.identity(), tables(db)]).toEqual([false, undefined, []]);
  });
});
