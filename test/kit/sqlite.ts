/**
 * A Durable Object's SQLite storage, as far as the hub uses it, over Node's SQLite: `sql.exec`
 * with cursors, `transactionSync` that rolls back when its function throws, `deleteAll`. The
 * database outlives the storage made on it, as a Durable Object's does across restarts. For
 * unit tests of the hub's storage-backed parts, run in Node.
 */

/** What the fake needs of Node's SQLite (files type-checked with the Workers types know no `node:` modules). */
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

const { DatabaseSync } = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => Database };

export function database(): Database {
  return new DatabaseSync(":memory:");
}

export function durableStorage(db = database()): DurableObjectStorage {
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
  const deleteAll = async () => {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    for (const { name } of tables) db.exec(`DROP TABLE IF EXISTS "${name}"`);
  };
  return { sql: { exec }, transactionSync, deleteAll, deleteAlarm: async () => undefined } as unknown as DurableObjectStorage;
}
