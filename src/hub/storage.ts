/**
 * @module
 * The hub's SQLite database: its schema, its meta (the key it serves, the head, the window's
 * start, the net-change horizon), the transaction every batch is written in, and its deletion.
 * The collection (`collection.ts`), the window's events (`window.ts`), the tombstones
 * (`tombstones.ts`) and the rows live views read (`view-rows.ts`) are tables of it; what they hold lives here and not in the isolate's memory,
 * whose 128 MB a hub shares with its neighbours (DESIGN.md, "Memory").
 *
 * Each upstream batch is written in one transaction before it is fanned out; the output gate
 * holds every send until the write is durable, so a subscriber never holds a resourceVersion
 * the hub could forget (invariant 4).
 */
import type { WatchKey } from "../k8s/key.ts";
import type { ReplicaRole } from "./replicas.ts";
import { ROW_BYTES, utf8BytesOver } from "./row-limit.ts";
import type { Sql } from "./sql.ts";
import { viewRowsTable } from "./view-rows.ts";

/** Bumped when the tables change shape: a hub with another version's tables starts afresh. */
const SCHEMA_VERSION = "3";

/** The collection's shape, under `name` (a staged list is made beside the current one). */
export const objectsTable = (name: string): string =>
  `CREATE TABLE IF NOT EXISTS ${name} (key TEXT PRIMARY KEY, uid TEXT NOT NULL, rv INTEGER NOT NULL, since INTEGER NOT NULL, json TEXT NOT NULL) WITHOUT ROWID`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
${objectsTable("objects")};
CREATE INDEX IF NOT EXISTS objects_by_rv ON objects (rv);
${viewRowsTable("view_rows")};
CREATE TABLE IF NOT EXISTS versions (key TEXT NOT NULL, until INTEGER NOT NULL, uid TEXT NOT NULL, rv INTEGER NOT NULL, since INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (key, until)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (rv INTEGER PRIMARY KEY, offset INTEGER NOT NULL, size INTEGER NOT NULL, line TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tombstones (uid TEXT PRIMARY KEY, key TEXT NOT NULL, rv INTEGER NOT NULL, since INTEGER NOT NULL, at INTEGER NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tombstones_by_rv ON tombstones (rv);
CREATE INDEX IF NOT EXISTS tombstones_by_age ON tombstones (at);
`;

/** Tables of an earlier schema, dropped before this one is made. */
const TABLES = ["meta", "objects", "versions", "events", "tombstones", "view_rows", "listed", "listed_rows", "diff", "diff_old"];

/**
 * A statement whose values would make a row over the platform's limit fails as the platform's
 * SQLite fails it (`SQLITE_TOOBIG`), also where the local one would take it: a statement's
 * strings and BLOBs together, which for an insert are its row.
 */
function refuseOverRow(bindings: readonly SqlStorageValue[]): void {
  // At most 3 bytes of UTF-8 a UTF-16 unit: counted exactly only when that bound is over.
  let most = 0;
  for (const value of bindings) {
    if (typeof value === "string") most += value.length * 3;
    else if (value instanceof ArrayBuffer) most += value.byteLength;
  }
  if (most <= ROW_BYTES) return;
  let bytes = 0;
  for (const value of bindings) {
    if (typeof value === "string") bytes += utf8BytesOver(value, 0);
    else if (value instanceof ArrayBuffer) bytes += value.byteLength;
  }
  if (bytes > ROW_BYTES) throw new Error(`string or blob too big: SQLITE_TOOBIG (${bytes} bytes in one statement's values; Durable Object SQL holds at most ${ROW_BYTES} in a row)`);
}

/** What identifies the collection: the key, and the kinds learned from the first list; for a replica hub, which one it is. */
export interface HubIdentity {
  key: WatchKey;
  kind: string;
  listKind: string;
  apiVersion: string;
  replica?: ReplicaRole | undefined;
}

/** Where the hub's history stands, as stored. */
export interface StoredHistory extends HubIdentity {
  /** Newest resourceVersion reached (event or bookmark): where the upstream watch resumes. */
  head: number;
  /** Oldest resourceVersion a subscriber can resume from exactly. */
  start: number;
  /** Resumes for net changes reach back to here (exclusive). */
  horizon: number;
}

export class HubStorage {
  readonly #storage: DurableObjectStorage;
  /** The database as the hub's parts use it: each statement's rows written are counted. */
  readonly #counted: Sql;
  #rowsWritten = 0;
  /**
   * The schema exists: made by the first write, not before, so a hub that is only asked about
   * (`/_relay/stats`) or refuses a request before it syncs stores nothing.
   */
  #made = false;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    const sql = storage.sql;
    // A statement that returns no rows has run once `exec` returns, and its cursor says what it wrote.
    this.#counted = {
      exec: <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: SqlStorageValue[]) => {
        refuseOverRow(bindings);
        const cursor = sql.exec<T>(query, ...bindings);
        this.#rowsWritten += cursor.rowsWritten ?? 0;
        return cursor;
      },
    };
    if (this.#exists("meta")) {
      const version = this.#sql.exec<{ value: string }>("SELECT value FROM meta WHERE name = 'schema'").toArray()[0]?.value;
      // Another version's tables (or a relist that never finished making them): start afresh.
      if (version !== SCHEMA_VERSION) this.#drop();
      else this.#made = true;
    }
  }

  get sql(): Sql {
    return this.#counted;
  }

  /** Rows this instance has written (what the platform bills writes by), for the hub's numbers. */
  get rowsWritten(): number {
    return this.#rowsWritten;
  }

  get #sql(): SqlStorage {
    return this.#storage.sql;
  }

  #exists(table: string): boolean {
    return this.#sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table).toArray().length > 0;
  }

  #drop(): void {
    for (const table of TABLES) this.#sql.exec(`DROP TABLE IF EXISTS ${table}`);
  }

  /** Make the schema if it is not there: before the hub's first write. */
  make(): void {
    if (this.#made) return;
    this.#sql.exec(SCHEMA);
    this.#setMeta("schema", SCHEMA_VERSION);
    this.#made = true;
  }

  /** Whether anything is stored. */
  get holdsState(): boolean {
    return this.#made;
  }

  /** The database's size in bytes, as the platform bills it. */
  get bytes(): number {
    return this.#sql.databaseSize;
  }

  /** Run `write` in one transaction: all of it is stored, or none. */
  transaction<T>(write: () => T): T {
    this.make();
    return this.#storage.transactionSync(write);
  }

  /** Delete everything the hub stored (and its alarm): a hub idle past its retention. */
  async clear(): Promise<void> {
    await this.#storage.deleteAlarm();
    await this.#storage.deleteAll();
    this.#made = false;
  }

  /** The key and kinds this hub serves, if it has ever synced. */
  identity(): HubIdentity | undefined {
    const identity = this.meta("identity");
    return identity === undefined ? undefined : (JSON.parse(identity) as HubIdentity);
  }

  /** Where the stored history stands, if there is one. */
  history(): StoredHistory | undefined {
    const identity = this.identity();
    if (!identity) return undefined;
    const number = (name: string) => Number(this.meta(name) ?? 0);
    const head = number("head");
    return { ...identity, head, start: number("start"), horizon: Number(this.meta("horizon") ?? head) };
  }

  meta(name: string): string | undefined {
    if (!this.#made) return undefined;
    return this.#sql.exec<{ value: string }>("SELECT value FROM meta WHERE name = ?", name).toArray()[0]?.value;
  }

  /** Set a meta value (inside the caller's transaction, or as a write of its own). */
  setMeta(name: string, value: string | number): void {
    this.make();
    this.#setMeta(name, String(value));
  }

  #setMeta(name: string, value: string): void {
    this.#sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", name, value);
  }
}
