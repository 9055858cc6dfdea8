/**
 * `view()` against a scripted relay: the window and its row changes reach the callbacks in
 * order; `update()` opens the new view beside the old and swaps only when its window arrives;
 * a reopened view tells what changed while away as row changes; refusals, retries and closes.
 * The relay itself is exercised in test/worker/view-client.test.ts.
 */
import { describe, expect, it } from "vitest";
import { view, WatchError, type ViewOptions, type ViewRow, type ViewStatus } from "../../src/client/index.ts";
import { Inbox } from "../kit/inbox.ts";
import { ScriptedRelay, type ScriptedSocket } from "./scripted.ts";

/** Delays 8, 16, 32, 64 ms: `random` 1 takes the top of each jitter range. */
const BACKOFF = { initialMs: 8, maxMs: 64, random: () => 0.999999 };
const COLUMNS = [{ name: "Name", type: "string", format: "name", description: "", priority: 0 }];

const row = (name: string, rv = 1): ViewRow => ({ key: `ns/${name}`, resourceVersion: String(rv), creationTimestamp: "2026-01-01T00:00:00Z", cells: [name] });
/** A `VIEW` of a window of `limit` rows (by default all of them: the window whole). */
const windowFrame = (rows: ViewRow[], count = rows.length, rv = 10, limit = rows.length) =>
  JSON.stringify({ type: "VIEW", resourceVersion: String(rv), count, offset: 0, limit, columns: COLUMNS, rows });
const rowsFrame = (changes: unknown[], count: number, rv = 11) => JSON.stringify({ type: "ROWS", resourceVersion: String(rv), count, changes });
const status = (code: number, message: string, retryAfterSeconds?: number) =>
  JSON.stringify({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", status: "Failure", message, reason: "Reason", code, ...(retryAfterSeconds ? { details: { retryAfterSeconds } } : {}) } });

/** A view over a scripted relay, everything it reports in one inbox, each socket as it opens in another. */
function open(options: ViewOptions<never> = {}) {
  const relay = new ScriptedRelay();
  const sockets = new Inbox<ScriptedSocket>();
  relay.onConnect = (socket) => sockets.push(socket);
  const seen = new Inbox<string>();
  const keys = (rows: ReadonlyArray<ViewRow>) => rows.map((r) => r.key.slice(3)).join(",");
  const v = view("http://relay/api/v1/namespaces/ns/pods", {
    transport: relay,
    backoff: BACKOFF,
    onReset: (rows) => seen.push(`reset ${keys(rows)}`),
    onInsert: (r, at) => seen.push(`insert ${r.key.slice(3)} at ${at}`),
    onRemove: (r, at) => seen.push(`remove ${r.key.slice(3)} at ${at}`),
    onUpdate: (r, previous, at) => seen.push(`update ${r.key.slice(3)} at ${at} (${previous.resourceVersion} → ${r.resourceVersion})`),
    onMove: (r, from, to) => seen.push(`move ${r.key.slice(3)} ${from} → ${to}`),
    onCount: (count, previous) => seen.push(`count ${previous} → ${count}`),
    onStatus: (s: ViewStatus) =>
      seen.push(
        s.type === "closed"
          ? `closed ${s.code} retry ${s.retryInMs}`
          : s.type === "error"
            ? `error ${s.error.code} retry ${s.retryInMs}`
            : s.type === "resumed"
              ? `resumed ${s.replayed}`
              : `connected ${s.resuming}`,
      ),
    ...options,
  });
  return { v, relay, sockets, seen, keys: () => keys(v.rows) };
}

const params = (socket: ScriptedSocket) => Object.fromEntries(new URL(socket.url).searchParams);

describe("view", () => {
  it("takes its window, then applies row changes in order, each to its callback, and acknowledges what it took", async () => {
    const { v, sockets, seen, keys } = open({ sort: "-Status", filter: "name~a", limit: 3 });
    const socket = await sockets.next();
    expect(socket.url).toMatch(/^ws:\/\/relay\/api\/v1\/namespaces\/ns\/pods\?/);
    expect(params(socket)).toEqual({ view: "1", watch: "1", sort: "-Status", filter: "name~a", offset: "0", limit: "3", rows: "cells" });
    expect(await seen.next()).toBe("connected false");
    socket.line(windowFrame([row("a1"), row("a2"), row("a3")], 5));
    await v.ready;
    expect(seen.drain()).toEqual(["reset a1,a2,a3", "count 0 → 5"]);
    expect(v.columns).toEqual(COLUMNS);
    expect(v.window).toEqual({ sort: "-Status", filter: "name~a", offset: 0, limit: 3 });

    socket.line(
      rowsFrame(
        [
          { op: "insert", at: 0, row: row("a0") },
          { op: "remove", at: 3 },
          { op: "update", at: 1, row: row("a1", 2) },
          { op: "move", from: 2, to: 0 },
        ],
        6,
      ),
    );
    expect(seen.drain()).toEqual(["insert a0 at 0", "remove a3 at 3", "update a1 at 1 (1 → 2)", "move a2 2 → 0", "count 5 → 6"]);
    expect(keys()).toBe("a2,a0,a1");
    expect(v.count).toBe(6);
    expect(v.resourceVersion).toBe("11");
    // Only the count moved.
    socket.line(rowsFrame([], 7, 12));
    expect(seen.drain()).toEqual(["count 6 → 7"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.sent.map((m) => JSON.parse(m))).toEqual([{ type: "ACK", received: expect.any(Number) }]);
    v.close();
    await v.done;
    expect(socket.closedWith).toBe(1000);
  });

  it("takes a window sent in parts as one: tells it only once the ROWS after its first part make it whole, with the count they bring", async () => {
    const { v, sockets, seen, keys } = open({ limit: 4 });
    const socket = await sockets.next();
    expect(await seen.next()).toBe("connected false");
    socket.line(windowFrame([row("a"), row("b")], 9, 10, 4));
    socket.line(rowsFrame([{ op: "insert", at: 2, row: row("c") }], 9));
    expect(seen.drain()).toEqual([]);
    expect(v.rows).toEqual([]);
    // The rest, and meanwhile all but three rows went: three is the whole window.
    socket.line(rowsFrame([{ op: "update", at: 0, row: row("a", 2) }], 3, 12));
    await v.ready;
    expect(seen.drain()).toEqual(["reset a,b,c", "count 0 → 3"]);
    expect(v.rows[0]?.resourceVersion).toBe("2");
    expect(v.resourceVersion).toBe("12");
    // Live from there: changes are row changes.
    socket.line(rowsFrame([{ op: "remove", at: 1 }], 2, 13));
    expect(seen.drain()).toEqual(["remove b at 1", "count 3 → 2"]);
    expect(keys()).toBe("a,c");
    v.close();
    await v.done;
  });

  it("moves on update(): the new view opens beside the old, whose rows stay until the new window arrives; a newer update replaces one still opening", async () => {
    const { v, sockets, seen, keys } = open({ limit: 2 });
    const first = await sockets.next();
    first.line(windowFrame([row("a"), row("b")], 9));
    await v.ready;
    seen.drain();

    const moved = v.update({ offset: 2 });
    const second = await sockets.next();
    expect(params(second)).toMatchObject({ offset: "2", limit: "2" });
    const sorted = v.update({ sort: "name" });
    const third = await sockets.next();
    expect(params(third)).toMatchObject({ offset: "2", limit: "2", sort: "name" });
    // The one still opening was replaced; the one shown stays live meanwhile.
    expect(second.closedWith).toBe(1000);
    expect(first.closedWith).toBeUndefined();
    first.line(rowsFrame([{ op: "update", at: 0, row: row("a", 2) }], 9));
    expect(keys()).toBe("a,b");
    expect(v.window.offset).toBe(0);
    third.line(windowFrame([row("c"), row("d")], 9));
    await Promise.all([moved, sorted]);
    expect(first.closedWith).toBe(1000);
    expect(keys()).toBe("c,d");
    expect(v.window).toEqual({ sort: "name", filter: "", offset: 2, limit: 2 });
    expect(seen.drain()).toEqual(["update a at 0 (1 → 2)", "reset c,d"]);
    // Frames of the view that ended change nothing.
    first.line(rowsFrame([{ op: "remove", at: 0 }], 8));
    expect(keys()).toBe("c,d");
    v.close();
  });

  it("keeps the window it shows when the relay refuses the one an update asks for", async () => {
    const { v, sockets, keys } = open();
    const first = await sockets.next();
    first.line(windowFrame([row("a")]));
    await v.ready;
    const refused = v.update({ sort: "Colour" });
    const second = await sockets.next();
    second.line(status(400, 'invalid view: cannot sort by "Colour"'));
    await expect(refused).rejects.toThrow(/400 Reason: invalid view: cannot sort by "Colour"/);
    expect(first.closedWith).toBeUndefined();
    expect(v.window.sort).toBe("");
    first.line(rowsFrame([{ op: "insert", at: 1, row: row("b") }], 2));
    expect(keys()).toBe("a,b");
    v.close();
  });

  it("reopens after a close, at once after the relay's normal end and after a backoff otherwise, telling what changed meanwhile as row changes", async () => {
    const { v, sockets, seen, keys } = open({ limit: 3 });
    const first = await sockets.next();
    first.line(windowFrame([row("a"), row("b"), row("c")], 3, 10));
    await v.ready;
    seen.drain();
    first.serverClose(1000, "timeoutSeconds reached");
    const second = await sockets.next();
    expect(params(second)).toEqual(params(first));
    // b changed and c went while away; d came.
    second.line(windowFrame([row("a"), row("b", 2), row("d")], 4, 20));
    expect(seen.drain()).toEqual(["closed 1000 retry 0", "connected true", "remove c at 2", "update b at 1 (1 → 2)", "insert d at 2", "count 3 → 4", "resumed 3"]);
    expect(keys()).toBe("a,b,d");
    second.serverClose(1006);
    const third = await sockets.next();
    third.line(windowFrame([row("a"), row("b", 2), row("d")], 4, 21));
    expect(seen.drain()).toEqual(["closed 1006 retry 8", "connected true", "resumed 0"]);
    v.close();
  });

  it("opens at an anchor row, then holds and reopens the window at the offset the relay found it at; an offset asked for later replaces the anchor", async () => {
    const { v, sockets, seen } = open({ sort: "name", anchor: "ns/m", limit: 2 });
    expect(v.window).toEqual({ sort: "name", filter: "", offset: 0, anchor: "ns/m", limit: 2 });
    const first = await sockets.next();
    expect(params(first)).toEqual({ view: "1", watch: "1", sort: "name", anchor: "ns/m", limit: "2", rows: "cells" });
    first.line(JSON.stringify({ ...JSON.parse(windowFrame([row("m"), row("n")], 30)), offset: 12 }));
    await v.ready;
    expect(v.window).toEqual({ sort: "name", filter: "", offset: 12, limit: 2 });
    seen.drain();
    // Reopened where it is: the row may have gone, its offset has not.
    first.serverClose(1000, "timeoutSeconds reached");
    const second = await sockets.next();
    expect(params(second)).toEqual({ view: "1", watch: "1", sort: "name", offset: "12", limit: "2", rows: "cells" });
    second.line(JSON.stringify({ ...JSON.parse(windowFrame([row("n"), row("o")], 29)), offset: 12 }));
    const anchored = v.update({ anchor: "ns/x" });
    const third = await sockets.next();
    expect(params(third)).toMatchObject({ anchor: "ns/x" });
    expect(params(third).offset).toBeUndefined();
    third.line(JSON.stringify({ ...JSON.parse(windowFrame([row("x")], 29)), offset: 20 }));
    await anchored;
    expect(v.window.offset).toBe(20);
    const moved = v.update({ offset: 4 });
    const fourth = await sockets.next();
    expect(params(fourth)).toMatchObject({ offset: "4" });
    expect(params(fourth).anchor).toBeUndefined();
    fourth.line(JSON.stringify({ ...JSON.parse(windowFrame([row("e"), row("f")], 29)), offset: 4 }));
    await moved;
    expect(v.window).toEqual({ sort: "name", filter: "", offset: 4, limit: 2 });
    v.close();
  });

  it("retries what is worth retrying no sooner than the relay asks, and ends with a WatchError on what is not", async () => {
    const { v, sockets, seen } = open();
    const first = await sockets.next();
    first.line(status(503, "the relay is still listing this collection", 1));
    expect(await seen.until((s) => s.startsWith("error"), "the retry")).toEqual(["connected false", "error 503 retry 1000"]);
    const second = await sockets.next();
    second.line(status(403, 'pods is forbidden: User "x" cannot watch resource "pods"'));
    await expect(v.done).rejects.toThrow(WatchError);
    await expect(v.ready).rejects.toThrow(/the view failed: 403 Reason: pods is forbidden/);
    expect(second.closedWith).toBe(1000);
  });

  it("on a WebSocket of its own, asks the view's window over HTTP why the upgrade was refused", async () => {
    const relay = new ScriptedRelay();
    relay.failNextConnect = true;
    relay.lists.push(
      () => new Response(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message: 'invalid view: cannot sort by "Colour"', reason: "BadRequest", code: 400 }), { status: 400 }),
    );
    const v = view("http://relay/api/v1/pods", { transport: relay, backoff: BACKOFF, sort: "Colour" });
    await expect(v.done).rejects.toThrow(/GET http:\/\/relay\/api\/v1\/pods\?view=1&sort=Colour&offset=0&limit=50&rows=cells: 400 BadRequest: invalid view/);
    expect(relay.sockets).toHaveLength(0);
  });

  it("closes: its socket ends, done resolves, and a pending update is refused", async () => {
    const stop = new AbortController();
    const { v, sockets } = open({ signal: stop.signal });
    const first = await sockets.next();
    const pending = v.update({ offset: 50 });
    stop.abort();
    await v.done;
    await expect(pending).rejects.toThrow(/the view was closed/);
    await expect(v.ready).rejects.toThrow(/closed/);
    expect(first.closedWith).toBe(1000);
    await expect(v.update({ offset: 0 })).rejects.toThrow(/closed/);
  });
});
