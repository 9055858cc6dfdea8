/**
 * @module
 * The hub's current objects, in its storage (`objects`: by `namespace/name`, with uid,
 * resourceVersion, since when each is in the collection, and the JSON sent to subscribers), and
 * what a snapshot needs of their past. Memory holds none of them: a hub's collection may be
 * hundreds of MB of JSON, and its isolate has 128 MB for every object it hosts.
 *
 * Snapshots (a paged list's, a subscriber's initial state, a list being streamed) read the
 * collection as it was at their resourceVersion while it changes: a version an open snapshot
 * may see is kept when a change replaces it (`versions`: the version, and the resourceVersion it
 * was replaced at), so a snapshot at `S` is the current objects no newer than `S`, and the kept
 * versions made by `S` and replaced after it. Versions no open snapshot can see are dropped.
 */
import type { Sql } from "./sql.ts";
import { fitting, READ_BYTES } from "./row-limit.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import { objectVersion } from "../k8s/rv.ts";
import type { KubeObject } from "../k8s/types.ts";
import type { ViewRow } from "../k8s/view.ts";

/** An object as the hub serves it: its key (`namespace/name`, the order lists go in), uid, resourceVersion and JSON. */
export type ObjectRecord = {
  readonly key: string;
  readonly uid: string;
  readonly rv: number;
  /** The object's JSON, with kind and apiVersion, exactly as sent to subscribers. */
  readonly json: string;
  /** What live views order and filter it by (`view-rows.ts`): made as it is taken from the upstream. */
  readonly row?: ViewRow | undefined;
};

/** An object as stored, with the resourceVersion it (last) entered the collection at: created, or moved into the selector. */
export type StoredObject = Omit<ObjectRecord, "row"> & {
  readonly since: number;
};

export interface ObjectEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: ObjectRecord;
}

/** Which object, at which version: its key, uid and resourceVersion. */
export type ObjectIdentity = Pick<ObjectRecord, "key" | "uid" | "rv">;

/** An object's key, uid and resourceVersion, read from its metadata; `undefined` when it lacks one of them. */
export function identityOf(object: KubeObject): ObjectIdentity | undefined {
  const metadata = object.metadata;
  const rv = objectVersion(object);
  if (!metadata?.uid || !metadata.name || rv === undefined) return undefined;
  return { uid: metadata.uid, key: metaNamespaceKey(metadata.namespace, metadata.name), rv };
}

/** An object as the hub keeps it (`json`: its text, when already serialised), or `undefined` when it lacks a uid, a name or a resourceVersion. */
export function toRecord(object: KubeObject, json?: string): ObjectRecord | undefined {
  const identity = identityOf(object);
  return identity && { ...identity, json: json ?? JSON.stringify(object) };
}

/** Copy of an object with a new resourceVersion (a DELETED carries the deletion's RV). */
export function withVersion<T extends ObjectRecord>(object: T, rv: number): T {
  const parsed = JSON.parse(object.json) as KubeObject;
  parsed.metadata = { ...parsed.metadata, resourceVersion: String(rv) };
  return { ...object, rv, json: JSON.stringify(parsed) };
}

/** A read of rows, and whether rows may follow its last (it stopped at its limit, or its bytes). */
export interface Rows<T = StoredObject> {
  readonly rows: T[];
  readonly more: boolean;
}

/**
 * Up to `limit` rows (`columns`) of `table` that `where` selects, in `order`, and at most
 * `maxBytes` of their `json` (or one row): their sizes are read first (`octet_length`, which
 * reads no object), then as many rows as fit. `more`: whether rows may follow the last.
 */
export function readByBytes<T extends { json: string }>(
  sql: Sql,
  table: string,
  columns: string,
  where: string,
  params: SqlStorageValue[],
  order: "key" | "rv",
  limit: number,
  maxBytes: number,
): Rows<T> {
  const sizes = sql.exec<{ size: number }>(`SELECT octet_length(json) AS size FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT ?`, ...params, limit).toArray();
  const n = fitting(
    sizes.map((r) => r.size),
    maxBytes,
  );
  const rows = n === 0 ? [] : sql.exec<T & Record<string, SqlStorageValue>>(`SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT ?`, ...params, n).toArray();
  return { rows, more: n < sizes.length || sizes.length === limit };
}

/** Objects' JSON joined with commas as UTF-8, with the last key read and how many; `more`: whether objects may follow the last. */
export interface JoinedRows {
  readonly bytes: Uint8Array;
  readonly last: string;
  readonly count: number;
  readonly more: boolean;
}

/**
 * The JSON of up to `limit` objects of `table` that `where` selects, after `afterKey` in key
 * order, joined with commas by SQLite and handed over as UTF-8 (no string per row, nor one to
 * encode again): at most `maxBytes` of it (or one object), never more than a value SQLite may build.
 */
export function joinedRows(sql: Sql, table: string, where: string, params: SqlStorageValue[], afterKey: string, limit: number, maxBytes: number): JoinedRows {
  const sizes = sql.exec<{ size: number }>(`SELECT octet_length(json) + 1 AS size FROM ${table} WHERE ${where} ORDER BY key LIMIT ?`, ...params, limit).toArray();
  const n = fitting(
    sizes.map((r) => r.size),
    maxBytes,
  );
  if (n === 0) return { bytes: new Uint8Array(), last: afterKey, count: 0, more: false };
  const row = sql
    .exec<{ json: ArrayBuffer | null; last: string | null; count: number }>(
      `SELECT CAST(group_concat(json, ',') AS BLOB) AS json, max(key) AS last, count(*) AS count FROM (SELECT key, json FROM ${table} WHERE ${where} ORDER BY key LIMIT ?)`,
      ...params,
      n,
    )
    .one();
  // The runtime gives a BLOB as an ArrayBuffer (Node's SQLite, in the unit tests, as a Uint8Array).
  const json = row.json as ArrayBuffer | Uint8Array | null;
  const bytes = json === null ? new Uint8Array() : json instanceof Uint8Array ? json : new Uint8Array(json);
  return { bytes, last: row.last ?? afterKey, count: row.count, more: n < sizes.length || sizes.length === limit };
}

const COLUMNS = "key, uid, rv, since, json";
const encoder = new TextEncoder();

/**
 * A key's name up to and including its first `:` (the name follows a namespaced key's one `/`,
 * or is the whole key): a merged key's object's member, `<cluster>:`; empty for a name without one.
 */
export const MEMBER_OF_KEY = "substr(key, instr(key, '/') + 1, instr(substr(key, instr(key, '/') + 1), ':'))";
/** Objects by member, in key order: a merged key's object's member is no prefix of its key (`ns/<cluster>:<name>`). */
const BY_MEMBER = `CREATE INDEX IF NOT EXISTS objects_by_member ON objects (${MEMBER_OF_KEY}, key)`;

export class Collection {
  readonly #sql: () => Sql;
  #size = 0;
  /** Whether the versions table may hold rows (so reads and prunes of it can be skipped). */
  #versions = false;
  /** Whether the objects are indexed by member (made at a merge hub's first read of one member's objects). */
  #byMember = false;

  constructor(sql: () => Sql) {
    this.#sql = sql;
  }

  /** Objects in the collection now. */
  get size(): number {
    return this.#size;
  }

  /** Count what storage holds (after a restart); versions kept for snapshots of the last instance are of no use. */
  restore(): void {
    const sql = this.#sql();
    this.#size = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM objects").one().n;
    sql.exec("DELETE FROM versions");
    this.#versions = false;
  }

  /** The object at `key` now. */
  get(key: string): StoredObject | undefined {
    return this.#sql().exec<StoredObject>(`SELECT ${COLUMNS} FROM objects WHERE key = ?`, key).toArray()[0];
  }

  /** What is at `key` now, without its JSON: what a change needs to know of what it replaces. */
  peek(key: string): Omit<StoredObject, "json"> | undefined {
    return this.#sql().exec<Omit<StoredObject, "json">>("SELECT key, uid, rv, since FROM objects WHERE key = ?", key).toArray()[0];
  }

  /**
   * Write one change in the caller's transaction, replacing `replaced` (what `peek` or `get`
   * found at its key); `keep` it (with its JSON) when an open snapshot may see it. `committed`
   * then makes the count follow.
   */
  write(type: ObjectEvent["type"], object: ObjectRecord, since: number, replaced: StoredObject | Omit<StoredObject, "json"> | undefined, keep: boolean): number {
    const sql = this.#sql();
    if (keep && replaced) {
      const json = "json" in replaced ? replaced.json : (this.get(replaced.key)?.json ?? "");
      sql.exec("INSERT OR REPLACE INTO versions (key, until, uid, rv, since, json) VALUES (?, ?, ?, ?, ?, ?)", replaced.key, object.rv, replaced.uid, replaced.rv, replaced.since, json);
      this.#versions = true;
    }
    if (type === "DELETED") {
      sql.exec("DELETE FROM objects WHERE key = ?", object.key);
      return replaced ? -1 : 0;
    }
    sql.exec(`INSERT OR REPLACE INTO objects (${COLUMNS}) VALUES (?, ?, ?, ?, ?)`, object.key, object.uid, object.rv, since, object.json);
    return replaced ? 0 : 1;
  }

  /** The batch's transaction committed: `delta` objects more (or fewer). */
  committed(delta: number): void {
    this.#size += delta;
  }

  /**
   * Up to `limit` objects of the collection as it was at `at`, after `afterKey`, in key order,
   * and at most `maxBytes` of them (or one): what a list or an initial state sends, a page at a
   * time. `more`: whether objects may follow the last.
   */
  page(at: number, afterKey: string, limit: number, maxBytes = READ_BYTES): Rows {
    const sql = this.#sql();
    const current = readByBytes<StoredObject>(sql, "objects", COLUMNS, "key > ? AND rv <= ?", [afterKey, at], "key", limit, maxBytes);
    if (!this.#versions) return current;
    const kept = readByBytes<StoredObject>(sql, "versions", COLUMNS, "key > ? AND rv <= ? AND until > ?", [afterKey, at, at], "key", limit, maxBytes);
    return mergeRows(current, kept, (o) => o.key, limit, maxBytes);
  }

  /**
   * The JSON of the objects `page` reads, joined with commas as UTF-8, with the last key and how
   * many: a list's page as SQLite joins it, straight to bytes (no string per row, nor one to
   * encode again), at most `maxBytes` of it (or one object), never more than a value SQLite may build.
   */
  joinedPage(at: number, afterKey: string, limit: number, maxBytes = READ_BYTES): JoinedRows {
    if (this.#versions) {
      const { rows, more } = this.page(at, afterKey, limit, maxBytes);
      return { bytes: encoder.encode(rows.map((r) => r.json).join(",")), last: rows.at(-1)?.key ?? afterKey, count: rows.length, more };
    }
    return joinedRows(this.#sql(), "objects", "key > ? AND rv <= ?", [afterKey, at], afterKey, limit, maxBytes);
  }

  /**
   * Up to `limit` current objects named `<prefix>…`, where `prefix` is `<cluster>:` (a merged
   * key's objects of one member), after `afterKey`, in key order, at most `maxBytes` of them (or
   * one). Read by an index of the member, made at the first such read (and maintained from then
   * on, in that hub only), so each page reads only that member's objects, not the whole table.
   */
  named(prefix: string, afterKey: string, limit: number, maxBytes = READ_BYTES): Rows {
    const sql = this.#sql();
    if (!this.#byMember) {
      sql.exec(BY_MEMBER);
      this.#byMember = true;
    }
    return readByBytes<StoredObject>(sql, "objects", COLUMNS, `${MEMBER_OF_KEY} = ? AND key > ?`, [prefix, afterKey], "key", limit, maxBytes);
  }

  /** The key of the `n`th object after `afterKey` at `at` (the last of a page of `n`), or `undefined` when fewer are left. */
  keyAfter(at: number, afterKey: string, n: number): string | undefined {
    const sql = this.#sql();
    const current = sql.exec<{ key: string }>("SELECT key FROM objects WHERE key > ? AND rv <= ? ORDER BY key LIMIT ?", afterKey, at, n).toArray();
    const kept = this.#versions ? sql.exec<{ key: string }>("SELECT key FROM versions WHERE key > ? AND rv <= ? AND until > ? ORDER BY key LIMIT ?", afterKey, at, at, n).toArray() : [];
    return merge(current, kept, (o) => o.key, n)[n - 1]?.key;
  }

  /** How many objects the collection had at `at`. */
  sizeAt(at: number): number {
    const sql = this.#sql();
    const newer = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM objects WHERE rv > ?", at).one().n;
    const kept = this.#versions ? sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM versions WHERE rv <= ? AND until > ?", at, at).one().n : 0;
    return this.#size - newer + kept;
  }

  /**
   * Up to `limit` objects of the collection as it was at `at` that changed after `from` (and
   * after the cursor `afterRv`), in resourceVersion order, at most `maxBytes` of them (or one):
   * a resume's net changes. `more`: whether objects may follow the last.
   */
  changed(from: number, at: number, afterRv: number, limit: number, maxBytes = READ_BYTES): Rows {
    const sql = this.#sql();
    const after = Math.max(from, afterRv);
    const current = readByBytes<StoredObject>(sql, "objects", COLUMNS, "rv > ? AND rv <= ?", [after, at], "rv", limit, maxBytes);
    if (!this.#versions) return current;
    const kept = readByBytes<StoredObject>(sql, "versions", COLUMNS, "rv > ? AND rv <= ? AND until > ?", [after, at, at], "rv", limit, maxBytes);
    return mergeRows(current, kept, (o) => o.rv, limit, maxBytes);
  }

  /** Whether the object `uid` at `key` was in the collection at `at`. */
  presentAt(key: string, uid: string, at: number): boolean {
    const sql = this.#sql();
    if (sql.exec("SELECT 1 FROM objects WHERE key = ? AND uid = ? AND rv <= ?", key, uid, at).toArray().length > 0) return true;
    return this.#versions && sql.exec("SELECT 1 FROM versions WHERE key = ? AND uid = ? AND rv <= ? AND until > ?", key, uid, at, at).toArray().length > 0;
  }

  /** Kept versions no snapshot open at or after `oldest` can see go; all of them when none is open. */
  prune(oldest: number | undefined): void {
    if (!this.#versions) return;
    if (oldest === undefined) {
      this.#sql().exec("DELETE FROM versions");
      this.#versions = false;
    } else {
      this.#sql().exec("DELETE FROM versions WHERE until <= ?", oldest);
    }
  }

  /** Forget the kept versions: a new history, whose snapshots begin now. In the caller's transaction. */
  clearVersions(): void {
    this.#sql().exec("DELETE FROM versions");
    this.#versions = false;
  }

  /** A new history's objects: what `listed` holds now replaces the collection, in the caller's transaction. */
  replaceWithListed(): void {
    const sql = this.#sql();
    sql.exec("DROP TABLE objects");
    sql.exec("ALTER TABLE listed RENAME TO objects");
    sql.exec("CREATE INDEX IF NOT EXISTS objects_by_rv ON objects (rv)");
    // The index by member went with the table it indexed: the next read by member makes it again.
    this.#byMember = false;
    this.clearVersions();
  }

  /** After `replaceWithListed` committed: the count is the list's. */
  recount(): void {
    this.#size = this.#sql().exec<{ n: number }>("SELECT COUNT(*) AS n FROM objects").one().n;
  }
}

/**
 * Two reads each ordered by `by` as one, in that order: no further than either read reached
 * (where one stopped short, what lies beyond it is unread), `limit` and `maxBytes` (or one row).
 */
function mergeRows(a: Rows, b: Rows, by: (row: StoredObject) => string | number, limit: number, maxBytes: number): Rows {
  const merged = merge(a.rows, b.rows, by, limit);
  const reached = [a, b].flatMap((read) => (read.more && read.rows.length > 0 ? [by(read.rows.at(-1) as StoredObject)] : []));
  const read = reached.length === 0 ? merged : merged.filter((row) => reached.every((bound) => by(row) <= bound));
  const n = fitting(
    read.map((row) => row.json.length),
    maxBytes,
  );
  return { rows: read.slice(0, n), more: a.more || b.more || n < read.length };
}

/** The first `limit` of two lists each ordered by `by`, in that order. */
function merge<T>(a: readonly T[], b: readonly T[], by: (item: T) => string | number, limit: number): T[] {
  if (b.length === 0) return a.slice(0, limit);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && by(x) < by(y))) {
      out.push(x as T);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}
