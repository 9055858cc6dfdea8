import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import type { Status } from "../k8s/types.ts";
import { applyChanges, type RowChange, type ViewRow, type ViewSpec } from "../k8s/view.ts";
import { HubStorage } from "./storage.ts";
import { LineBatch, Subscriber, type Sink } from "./subscriber.ts";
import { orderIndex, ViewRows, type RowUpdate } from "./view-rows.ts";
import { PART_BYTES, Views } from "./views.ts";

type SentRow = { key: string; resourceVersion: string; cells?: unknown[]; object?: { metadata: { name: string } } };
type Frame =
  | { type: "VIEW"; resourceVersion: string; count: number; rows: SentRow[] }
  | { type: "ROWS"; resourceVersion: string; count: number; changes: Array<RowChange<SentRow>> }
  | { type: "ERROR"; object: Status };

/** A view's client: what it was sent, applied as the project's client applies it. */
class Client implements Sink {
  readonly transport = "websocket" as const;
  closed = false;
  frames: Frame[] = [];
  rows: SentRow[] = [];
  count = -1;
  /** Bytes the runtime holds for it, not yet taken. */
  held = 0;

  /** Every line sent, as sent. */
  lines: string[] = [];
  /** Called after each send (a client that stops taking). */
  onSend: () => void = () => undefined;

  send(batch: LineBatch): number {
    this.lines.push(...batch.lines);
    for (const line of batch.lines) {
      const frame = JSON.parse(line) as Frame;
      this.frames.push(frame);
      if (frame.type === "ERROR") continue;
      this.rows = frame.type === "VIEW" ? frame.rows : applyChanges(this.rows, frame.changes);
      this.count = frame.count;
    }
    this.onSend();
    return batch.lines.length;
  }
  alive = () => true;
  backlog = () => this.held;
  close(): void {
    this.closed = true;
  }
}

const spec = (over: Partial<ViewSpec> = {}): ViewSpec => ({ sort: [], filter: [], offset: 0, limit: 3, rows: "cells", ...over });

/** Rows whose window read throws for the views `failing` says (a bug, a row that cannot be read). */
class FailingRows extends ViewRows {
  failing: (spec: Pick<ViewSpec, "sort" | "filter" | "offset" | "limit">) => boolean = () => false;
  override window(spec: Pick<ViewSpec, "sort" | "filter" | "offset" | "limit">) {
    if (this.failing(spec)) throw new Error("the window could not be read");
    return super.window(spec);
  }
}

/** A hub's views over SQLite; each object `padding` characters more than its metadata (a big object). */
function hub(padding = 0) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const rows = new FailingRows(
    () => storage.sql,
    () => 0,
    // An index for every order, as a collection too large to scan has.
    { size: () => Number.POSITIVE_INFINITY, objects: 0 },
  );
  const objects = new Map<string, string>();
  let head = 1;
  /** Views ended with a Status, as the fan-out ends them: the ERROR event, then the close, then detached. */
  const failed: Subscriber[] = [];
  const logged: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const views: Views = new Views(
    { rows, json: (key) => objects.get(key), head: () => head },
    { group: "", resource: "pods" },
    1000,
    (subscriber, status) => {
      failed.push(subscriber);
      subscriber.sink.send(LineBatch.of(JSON.stringify({ type: "ERROR", object: status })));
      subscriber.sink.close({ code: 1000, reason: "the view failed" });
      views.remove(subscriber);
    },
    (message, fields) => void logged.push({ message, fields }),
  );
  /** Commit changes (a row, or `undefined` to delete its key), as the feed does: rows written, then the views told. */
  const commit = (changes: Array<[string, Omit<ViewRow, "key" | "values"> | undefined]>) => {
    const updates: RowUpdate[] = [];
    storage.transaction(() => {
      for (const [key, r] of changes) {
        head++;
        const after = r && { ...r, key, values: [r.name] };
        updates.push({ before: rows.get(key)?.row, after });
        rows.write(key, after, head);
        if (r) objects.set(key, JSON.stringify({ metadata: { name: r.name, namespace: r.namespace, resourceVersion: String(head) }, padding: "x".repeat(padding) }));
        else objects.delete(key);
      }
    });
    if (views.active) views.changed(updates);
  };
  const open = (asked: ViewSpec) => {
    const client = new Client();
    const subscriber = new Subscriber(client, head, { bookmarks: false, timeoutMs: undefined, view: true });
    views.open(subscriber, asked);
    return { client, subscriber };
  };
  const indexes = () =>
    storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'view_%'")
      .toArray()
      .map((i) => i.name);
  return { views, rows, commit, open, indexes, failed, logged };
}

const named = (name: string, created = 0, labels: Record<string, string> = {}) => ({ namespace: "a", name, created, labels });

describe("Views", () => {
  it("sends the window, then each change to it as a row change and the count, and nothing for changes past it", () => {
    const { commit, open } = hub();
    commit(["d", "b", "f", "a"].map((n) => [`a/${n}`, named(n)]));
    const { client } = open(spec());
    expect(client.frames[0]).toMatchObject({ type: "VIEW", resourceVersion: "5", count: 4, offset: 0, limit: 3 });
    expect(client.rows.map((r) => r.key)).toEqual(["a/a", "a/b", "a/d"]);
    // Each row as its Table cells, as kubectl prints them (a pod's nine).
    expect(client.rows[0]).toMatchObject({ resourceVersion: "5", cells: ["a", "0/0", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"] });

    commit([["a/c", named("c")]]);
    expect(client.frames.at(-1)).toEqual({
      type: "ROWS",
      resourceVersion: "6",
      count: 5,
      changes: [
        { op: "remove", at: 2 },
        { op: "insert", at: 2, row: expect.objectContaining({ key: "a/c", resourceVersion: "6" }) },
      ],
    });
    // Past the window: the count changes, the rows do not.
    commit([["a/z", named("z")]]);
    expect(client.frames.at(-1)).toEqual({ type: "ROWS", resourceVersion: "7", count: 6, changes: [] });
    // Past the window and the count the same: nothing at all.
    const sent = client.frames.length;
    commit([["a/z", named("z", 1)]]);
    expect(client.frames.length).toBe(sent);
    // A row of the window changed in place.
    commit([["a/b", named("b", 1)]]);
    expect(client.frames.at(-1)).toMatchObject({ type: "ROWS", count: 6, changes: [{ op: "update", at: 1, row: { key: "a/b", resourceVersion: "9" } }] });
  });

  it("shares one window among views that ask for the same one, each taking rows as it asked", () => {
    const { commit, open, views } = hub();
    commit([["a/a", named("a")]]);
    const cells = open(spec());
    const objects = open(spec({ rows: "object" }));
    commit([["a/b", named("b")]]);
    expect(cells.client.frames.at(-1)).toMatchObject({ changes: [{ op: "insert", at: 1, row: { key: "a/b", cells: expect.any(Array) } }] });
    expect(objects.client.frames.at(-1)).toMatchObject({ changes: [{ op: "insert", at: 1, row: { key: "a/b", object: { metadata: { name: "b" } } } }] });
    expect(views.size).toBe(2);
    views.remove(cells.subscriber);
    views.remove(objects.subscriber);
    expect(views.active).toBe(false);
  });

  it("orders and filters by a label named like a property every object inherits as by any other, and no view on the hub misses a commit", () => {
    const { commit, open } = hub();
    commit([
      ["a/a", named("a", 0, { constructor: "2", toString: "x" })],
      ["a/b", named("b", 0, { constructor: "1" })],
    ]);
    const byName = open(spec()).client;
    const byConstructor = open(spec({ sort: [{ by: { kind: "label", key: "constructor" }, descending: false }], limit: 2 })).client;
    const byToString = open(spec({ filter: [{ kind: "label", key: "toString", equals: "x" }] })).client;
    expect(byConstructor.rows.map((r) => r.key)).toEqual(["a/b", "a/a"]);
    // No label "constructor" of its own: it sorts first, as a missing value does.
    commit([["a/c", named("c", 0, { hasOwnProperty: "y" })]]);
    expect(byName.rows.map((r) => r.key)).toEqual(["a/a", "a/b", "a/c"]);
    expect(byConstructor.rows.map((r) => r.key)).toEqual(["a/c", "a/b"]);
    expect(byToString.rows.map((r) => r.key)).toEqual(["a/a"]);
    expect([byName.count, byConstructor.count, byToString.count]).toEqual([3, 3, 1]);
  });

  it("ends the views of a group whose window cannot be read with a 500 Status, and the other groups of the same commit still get their frames", () => {
    const { commit, open, rows, views, failed, logged } = hub();
    commit(["a", "b"].map((n) => [`a/${n}`, named(n)]));
    const before = open(spec()).client;
    const broken = [open(spec({ limit: 2 })), open(spec({ limit: 2, rows: "object" }))];
    const after = open(spec({ limit: 4 })).client;
    rows.failing = (s) => s.limit === 2;
    // The new row reaches every window: each group reads its window again, and the second's read throws.
    expect(() => commit([["a/0", named("0")]])).not.toThrow();
    for (const client of [before, after]) {
      expect(client.closed).toBe(false);
      expect(client.rows.map((r) => r.key)).toEqual(["a/0", "a/a", "a/b"]);
      expect(client.count).toBe(3);
    }
    for (const { client, subscriber } of broken) {
      expect(client.frames.at(-1)).toMatchObject({ type: "ERROR", object: { kind: "Status", status: "Failure", code: 500, reason: "InternalError" } });
      expect(client.closed).toBe(true);
      expect(failed).toContain(subscriber);
    }
    expect(logged).toEqual([{ message: "view failed", fields: expect.objectContaining({ limit: 2, offset: 0, views: 2, error: "the window could not be read" }) }]);
    // The failed group is gone; the others stay live.
    expect(views.size).toBe(2);
    commit([["a/1", named("1")]]);
    expect(before.rows.map((r) => r.key)).toEqual(["a/0", "a/1", "a/a"]);
    expect(after.count).toBe(4);
  });

  it("holds frames back from a client that is behind, then sends it what changed meanwhile once it has caught up", () => {
    const { commit, open, views } = hub();
    commit([["a/a", named("a")]]);
    const { client } = open(spec());
    client.held = 5000;
    commit([["a/b", named("b")]]);
    commit([["a/a", undefined]]);
    expect(client.frames.length).toBe(1);
    client.held = 0;
    views.wake();
    expect(client.frames.at(-1)).toMatchObject({
      type: "ROWS",
      count: 1,
      changes: [
        { op: "remove", at: 0 },
        { op: "insert", at: 0, row: { key: "a/b" } },
      ],
    });
    expect(client.rows.map((r) => r.key)).toEqual(["a/b"]);
  });

  it("sends a window of objects larger than a part in parts, each once its client has taken the last, and keeps no frame that large", () => {
    // Objects of 100 KB: a part (256 KiB) holds two.
    const { commit, open, views } = hub(100_000);
    commit(["a", "b", "c", "d", "e"].map((n) => [`a/${n}`, named(n)]));
    const { client } = open(spec({ limit: 5, rows: "object" }));
    expect(client.frames.map((f) => f.type)).toEqual(["VIEW", "ROWS", "ROWS"]);
    expect(client.frames[0]).toMatchObject({ count: 5, rows: [{ key: "a/a" }, { key: "a/b" }] });
    expect(client.rows.map((r) => r.key)).toEqual(["a/a", "a/b", "a/c", "a/d", "a/e"]);
    // Held after its first part, a second client gets the rest as its client takes it.
    const second = new Client();
    second.onSend = () => void (second.held = 1_000_000);
    views.open(new Subscriber(second, 0, { bookmarks: false, timeoutMs: undefined, view: true }), spec({ limit: 5, rows: "object" }));
    expect(second.frames.map((f) => f.type)).toEqual(["VIEW"]);
    commit([["a/b", undefined]]);
    expect(client.rows.map((r) => r.key)).toEqual(["a/a", "a/c", "a/d", "a/e"]);
    expect(second.frames).toHaveLength(1);
    second.onSend = () => undefined;
    second.held = 0;
    views.wake();
    expect(second.rows.map((r) => r.key)).toEqual(["a/a", "a/c", "a/d", "a/e"]);
    expect(Math.max(...[...client.lines, ...second.lines].map((l) => l.length))).toBeLessThan(PART_BYTES + 100_000);
  });

  it("keeps every client's window and count equal to the collection's, whatever changes and however they are batched", () => {
    const key = fc.constantFrom("a/a", "a/b", "a/c", "a/d", "a/e", "a/f", "a/g");
    const change = fc.tuple(key, fc.option(fc.record({ created: fc.integer({ min: 0, max: 3 }), app: fc.constantFrom("x", "y") }), { nil: undefined }));
    const asked = fc.record({
      sort: fc.subarray([
        { by: { kind: "created" as const }, descending: true },
        { by: { kind: "label" as const, key: "app" }, descending: false },
      ]),
      filter: fc.subarray([{ kind: "label" as const, key: "app", equals: "x" }]),
      offset: fc.integer({ min: 0, max: 3 }),
      limit: fc.integer({ min: 1, max: 4 }),
      rows: fc.constant("cells" as const),
    });
    fc.assert(
      fc.property(fc.array(fc.array(change, { minLength: 1, maxLength: 4 }), { maxLength: 12 }), fc.array(asked, { minLength: 1, maxLength: 3 }), (batches, specs) => {
        const { commit, open, rows } = hub();
        const clients = specs.map((s) => ({ s, client: open(s).client }));
        for (const batch of batches) {
          commit(batch.map(([k, c]) => [k, c && named(k.slice(2), c.created, { app: c.app })]));
          for (const { s, client } of clients) {
            expect(client.rows.map((r) => [r.key, r.resourceVersion])).toEqual(rows.window(s).map((r) => [r.row.key, String(r.rv)]));
            expect(client.count).toBe(rows.count(s));
          }
        }
      }),
      { seed: 26, numRuns: 300 },
    );
  });

  it("keeps every client's window equal to the collection's when windows come in parts and clients fall behind and catch up, whatever commits come between", () => {
    const key = fc.constantFrom("a/a", "a/b", "a/c", "a/d", "a/e", "a/f");
    const change = fc.tuple(key, fc.option(fc.record({ created: fc.integer({ min: 0, max: 3 }) }), { nil: undefined }));
    const asked = fc.record({
      sort: fc.subarray([{ by: { kind: "created" as const }, descending: true }]),
      filter: fc.constant<ViewSpec["filter"]>([]),
      offset: fc.integer({ min: 0, max: 2 }),
      limit: fc.integer({ min: 1, max: 5 }),
      rows: fc.constant("object" as const),
    });
    // Each step: a commit, and which clients stop taking what they are sent (the others take all of it).
    const step = fc.record({ batch: fc.array(change, { minLength: 1, maxLength: 3 }), behind: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), fc.array(asked, { minLength: 1, maxLength: 3 }), (steps, specs) => {
        // Objects of 70 KB: a window of four or more is more than a part.
        const { commit, open, rows, views } = hub(70_000);
        const clients = specs.map((s) => ({ s, client: open(s).client }));
        const same = (s: ViewSpec, client: Client) => {
          expect(client.rows.map((r) => [r.key, r.resourceVersion])).toEqual(rows.window(s).map((r) => [r.row.key, String(r.rv)]));
          expect(client.count).toBe(rows.count(s));
        };
        for (const { batch, behind } of steps) {
          clients.forEach(({ client }, i) => void (client.held = behind[i] ? 1_000_000 : 0));
          commit(batch.map(([k, c]) => [k, c && named(k.slice(2), c.created)]));
          views.wake();
          clients.forEach(({ s, client }, i) => void (behind[i] || same(s, client)));
        }
        for (const { client } of clients) client.held = 0;
        views.wake();
        for (const { s, client } of clients) same(s, client);
      }),
      { seed: 27, numRuns: 60 },
    );
  });

  it("drops the indexes of orders no open view reads through, and keeps those open views do", () => {
    const { views, commit, open, indexes } = hub();
    commit(["d", "b"].map((n) => [`a/${n}`, named(n)]));
    const byName = spec({ sort: [{ by: { kind: "name" }, descending: true }] });
    const byAge = spec({ sort: [{ by: { kind: "created" }, descending: false }] });
    const { subscriber } = open(byName);
    views.page(byAge); // a GET of another order: its index is made, and no view stays open on it
    expect(indexes().sort()).toEqual([orderIndex(byName), orderIndex(byAge)].sort());
    expect(views.retireIndexes(0)).toEqual([orderIndex(byAge)]);
    expect(indexes()).toEqual([orderIndex(byName)]);
    views.remove(subscriber);
    expect(views.retireIndexes(0)).toEqual([orderIndex(byName)]);
    expect(indexes()).toEqual([]);
  });
});
