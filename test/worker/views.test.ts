/**
 * Live views through the relay (DESIGN.md, "Live views"): a window of a collection in the order
 * and under the filter a client asks for, with the count, kept live by row changes; over plain
 * HTTP (a page, or a stream of lines), on a WebSocket, and as an op of the relay socket.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import type { RowChange } from "../../src/k8s/view.ts";
import { applyChanges } from "../../src/k8s/view.ts";
import { Inbox } from "../kit/inbox.ts";
import { pumpLines } from "../kit/lines.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { metricValue, scrape } from "./metrics-helpers.ts";
import { relaySocket, untilClosed } from "./socket-helpers.ts";

const sim = new Sim();
const keyOf = (namespace: string) => watchKey({ cluster: "default", group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector: null, fieldSelector: null });

interface Row {
  key: string;
  resourceVersion: string;
  cells?: Array<string | number>;
  creationTimestamp?: string;
  object?: { metadata: { name: string; labels?: Record<string, string> } };
}
type Frame =
  | { type: "VIEW"; resourceVersion: string; count: number; offset: number; limit: number; columns: Array<{ name: string }>; rows: Row[] }
  | { type: "ROWS"; resourceVersion: string; count: number; changes: Array<RowChange<Row>> }
  | { type: "ERROR"; object: { code: number; message: string } };

/** A view's client side: its frames as they come, and the window they make. */
class ViewClient {
  readonly frames = new Inbox<Frame>();
  /** Every frame taken, in order. */
  readonly all: Frame[] = [];
  rows: Row[] = [];
  count = -1;

  take(frame: Frame): void {
    if (frame.type === "VIEW") this.rows = frame.rows;
    if (frame.type === "ROWS") this.rows = applyChanges(this.rows, frame.changes);
    if (frame.type !== "ERROR") this.count = frame.count;
    this.all.push(frame);
    this.frames.push(frame);
  }

  /** Frames until the window holds `keys` (and the count is `count`). */
  async until(keys: string[], count: number): Promise<void> {
    while (JSON.stringify(this.rows.map((r) => r.key)) !== JSON.stringify(keys) || this.count !== count) {
      await this.frames.next(`the window to be ${keys.join(",")} of ${count}`);
    }
  }

  get keys(): string[] {
    return this.rows.map((r) => r.key);
  }
}

/** A live view over HTTP: its lines. */
async function httpView(path: string) {
  const response = await relay(path);
  expect(response.status).toBe(200);
  const client = new ViewClient();
  // Blank lines are the stream's keep-alives.
  const body = pumpLines(response.body as ReadableStream<Uint8Array>, (line) => line.trim() && client.take(JSON.parse(line) as Frame));
  return { client, response, stop: body.stop };
}

/** A live view on a WebSocket of its own: its frames. */
async function wsView(path: string) {
  const response = await relay(path, { headers: { upgrade: "websocket" } });
  const socket = response.webSocket as WebSocket;
  socket.accept();
  const client = new ViewClient();
  socket.addEventListener("message", (m) => client.take(JSON.parse(m.data as string) as Frame));
  return { socket, client };
}

/** Pods `names` in a namespace of their own, each labelled `tier` by its index (even: web, odd: db). */
async function namespaceWith(names: string[]): Promise<string> {
  const ns = uniqueNamespace("view");
  for (const [i, name] of names.entries()) await sim.createPod(ns, name, { tier: i % 2 === 0 ? "web" : "db" });
  return ns;
}

describe("a view's page (GET ?view=1)", () => {
  it("answers the window in the order asked, the count that matches, and the Table's columns", async () => {
    const ns = await namespaceWith(["p1", "p2", "p3", "p4", "p5"]);
    const response = await relay(`${podsPath(ns)}?view=1&sort=-name&limit=2`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const page = (await response.json()) as Extract<Frame, { type: "VIEW" }>;
    expect(page).toMatchObject({ type: "VIEW", count: 5, offset: 0, limit: 2 });
    expect(page.rows.map((r) => r.key)).toEqual([`${ns}/p5`, `${ns}/p4`]);
    expect(page.columns.map((c) => c.name)).toEqual(["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]);
    expect(page.rows[0]?.cells?.[0]).toBe("p5");
    // Filtered by a label, the next page, the objects whole.
    const next = (await (await relay(`${podsPath(ns)}?view=1&filter=label:tier=web&sort=name&offset=1&limit=5&rows=object`)).json()) as Extract<Frame, { type: "VIEW" }>;
    expect(next.count).toBe(3);
    expect(next.rows.map((r) => r.object?.metadata.name)).toEqual(["p3", "p5"]);
  });

  it("refuses what it cannot do with a Kubernetes Status that says what it can", async () => {
    const ns = await namespaceWith(["p1"]);
    const bad = await relay(`${podsPath(ns)}?view=1&sort=Colour`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ kind: "Status", code: 400, reason: "BadRequest", message: expect.stringMatching(/invalid view: cannot sort by "Colour": sort by one of name, .*Status/) });
    const named = await relay(`${podsPath(ns)}/p1?view=1`);
    expect(named.status).toBe(400);
    expect(await named.json()).toMatchObject({ message: expect.stringContaining("a view is of a collection") });
    const limit = await relay(`${podsPath(ns)}?view=1&limit=100000`);
    expect(await limit.json()).toMatchObject({ code: 400, message: expect.stringContaining("limit must be a whole number from 0 to 500") });
  });

  it("answers sort keys and filter terms past what SQLite takes in one statement with a 400 that names the limit", async () => {
    const ns = uniqueNamespace("view");
    const labels = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"]));
    for (const name of ["p1", "p2"]) await sim.createPod(ns, name, labels);
    const refused = async (query: string) => {
      const response = await relay(`${podsPath(ns)}?view=1&${query}`);
      return { status: response.status, body: (await response.json()) as { kind: string; code: number; message: string } };
    };
    const sort = (n: number) => `sort=${Array.from({ length: n }, (_, i) => `label:k${i}`).join(",")}`;
    const filter = (n: number) => `filter=${Array.from({ length: n }, (_, i) => `label:k${i}=v`).join(",")}`;
    for (const query of [`${sort(13)}&anchor=${ns}/p1`, sort(200)]) {
      expect(await refused(query)).toMatchObject({ status: 400, body: { kind: "Status", code: 400, message: expect.stringContaining("at most 8 sort keys") } });
    }
    expect(await refused(filter(120))).toMatchObject({ status: 400, body: { kind: "Status", code: 400, message: expect.stringContaining("at most 16 filter terms") } });
    // At the limits, with an anchor (every bound parameter of its position's count), it answers.
    const most = await relay(`${podsPath(ns)}?view=1&${sort(8)}&${filter(16)}&anchor=${ns}/p2`);
    expect(await most.json()).toMatchObject({ type: "VIEW", count: 2, offset: 1 });
  });

  it("answers any view query with its page or a Status, never a 5xx", async () => {
    const ns = uniqueNamespace("view");
    const labels = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, String(i % 3)]));
    for (const name of ["p1", "p2", "p3"]) await sim.createPod(ns, name, { ...labels, constructor: name });
    const label = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 20 }).map((i) => `k${i}`) }, { weight: 1, arbitrary: fc.constantFrom("constructor", "toString", "hasOwnProperty") });
    const sortKey = fc
      .tuple(
        fc.boolean(),
        fc.oneof({ weight: 6, arbitrary: label.map((l) => `label:${l}`) }, { weight: 1, arbitrary: fc.constantFrom("name", "namespace", "creationTimestamp", "Status", "restarts", "Age", "IP") }),
      )
      .map(([d, k]) => `${d ? "-" : ""}${k}`);
    const term = fc.oneof(
      // Mostly what every pod has, so an anchor passes the filter.
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 15 }).map((i) => `label:k${i}=${i % 3}`) },
      { weight: 1, arbitrary: fc.tuple(label, fc.constantFrom("0", "1", "2")).map(([l, v]) => `label:${l}=${v}`) },
      { weight: 1, arbitrary: fc.constantFrom("name~p", "name~", "Status=Pending", "Restarts=0", "Ready=0/1") },
    );
    // Few keys and terms, or many (past what one SQLite statement takes); now and then one the view cannot take.
    const many = <T>(item: fc.Arbitrary<T>, most: number) => fc.oneof(fc.array(item, { maxLength: 10 }), fc.array(item, { minLength: 10, maxLength: most }));
    const query = fc.record({
      sort: many(sortKey, 250),
      filter: many(term, 150),
      bad: fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom("sort=Colour", "sort=label:__proto__", "sort=label:-x", "filter=Restarts=x", "filter=Age=1m", "filter=a/b") },
      ),
      start: fc.oneof(
        fc.constant(""),
        fc.nat({ max: 5 }).map((o) => `&offset=${o}`),
        fc.constant(`&anchor=${ns}/p2`),
        fc.constantFrom(`&anchor=${ns}/gone`, "&anchor=a/b/c"),
      ),
      limit: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("", "&limit=1", "&limit=500") }, { weight: 1, arbitrary: fc.constantFrom("&limit=501", "&limit=0") }),
      rows: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("", "&rows=object") }, { weight: 1, arbitrary: fc.constant("&rows=yaml") }),
    });
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const [badName, badValue] = (q.bad ?? "").split(/=(.*)/);
        const sort = [...q.sort, ...(badName === "sort" ? [badValue] : [])].join(",");
        const filter = [...q.filter, ...(badName === "filter" ? [badValue] : [])].join(",");
        const path = `${podsPath(ns)}?view=1&sort=${encodeURIComponent(sort)}&filter=${encodeURIComponent(filter)}${q.start}${q.limit}${q.rows}`;
        const response = await relay(path);
        const body = (await response.json()) as { type?: string; kind?: string; code?: number };
        expect(response.status, path).toBeLessThan(500);
        expect(response.status === 200 ? body.type : body, path).toEqual(response.status === 200 ? "VIEW" : expect.objectContaining({ kind: "Status", code: response.status }));
      }),
      { seed: 8, numRuns: 150 },
    );
  });

  it("starts at an anchor row, wherever the order and filter put it, and says 404 for a row that is not one of the view's", async () => {
    const ns = await namespaceWith(["p1", "p2", "p3", "p4", "p5"]);
    const page = async (query: string) => (await (await relay(`${podsPath(ns)}?view=1&${query}`)).json()) as Extract<Frame, { type: "VIEW" }>;
    const descending = await page(`sort=-name&anchor=${ns}/p3&limit=2`);
    expect(descending).toMatchObject({ count: 5, offset: 2 });
    expect(descending.rows.map((r) => r.key)).toEqual([`${ns}/p3`, `${ns}/p2`]);
    // Among the web tier (p1, p3, p5) by name, p5 is the third.
    const filtered = await page(`sort=name&filter=label:tier=web&anchor=${ns}/p5`);
    expect(filtered).toMatchObject({ count: 3, offset: 2 });
    expect(filtered.rows.map((r) => r.key)).toEqual([`${ns}/p5`]);
    for (const anchor of [`${ns}/p2`, `${ns}/gone`]) {
      const missing = await relay(`${podsPath(ns)}?view=1&sort=name&filter=label:tier=web&anchor=${anchor}`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ kind: "Status", code: 404, reason: "NotFound", message: expect.stringContaining(`the view's anchor "${anchor}" is not one of its rows`) });
    }
    const both = await relay(`${podsPath(ns)}?view=1&anchor=${ns}/p1&offset=3`);
    expect(await both.json()).toMatchObject({ code: 400, message: expect.stringContaining("offset or as anchor, not both") });
  });
});

describe("a live view", () => {
  it("over HTTP: the window, then row changes as pods come, change and go, and the count with them", async () => {
    const ns = await namespaceWith(["b", "d", "f"]);
    const view = await httpView(`${podsPath(ns)}?view=1&watch=1&sort=name&limit=2`);
    await view.client.until([`${ns}/b`, `${ns}/d`], 3);
    // Into the window at its top: the last row scrolls out.
    await sim.createPod(ns, "a");
    await view.client.until([`${ns}/a`, `${ns}/b`], 4);
    // Past the window: only the count.
    await sim.createPod(ns, "z");
    await view.client.until([`${ns}/a`, `${ns}/b`], 5);
    // A row of the window changes in place.
    const before = view.client.rows[1]?.resourceVersion;
    await sim.patchPod(ns, "b", { metadata: { labels: { tier: "changed" } } });
    while (view.client.rows[1]?.resourceVersion === before) await view.client.frames.next("b's update");
    expect(view.client.all.at(-1)).toMatchObject({ type: "ROWS", count: 5, changes: [{ op: "update", at: 1, row: { key: `${ns}/b` } }] });
    // Gone: the next row scrolls in.
    await sim.deletePod(ns, "a");
    await view.client.until([`${ns}/b`, `${ns}/d`], 4);
    view.stop();
  });

  it("sorted by a column and filtered by another, kept exact as rows move in and out of both", async () => {
    const ns = await namespaceWith(["p1", "p2", "p3", "p4"]);
    const view = await httpView(`${podsPath(ns)}?view=1&watch=1&sort=-label:tier,-name&filter=label:tier=web&limit=5&rows=object`);
    await view.client.until([`${ns}/p3`, `${ns}/p1`], 2);
    // Moved into the filter, and out of it.
    await sim.patchPod(ns, "p4", { metadata: { labels: { tier: "web" } } });
    await view.client.until([`${ns}/p4`, `${ns}/p3`, `${ns}/p1`], 3);
    await sim.patchPod(ns, "p1", { metadata: { labels: { tier: "db" } } });
    await view.client.until([`${ns}/p4`, `${ns}/p3`], 2);
    expect(view.client.rows[0]?.object?.metadata.labels).toEqual({ tier: "web" });
    view.stop();
  });

  it("on the relay socket: an op beside watch, its frames tagged with its id; a new window is another view; unwatch ends it", async () => {
    const ns = await namespaceWith(["a", "b", "c"]);
    const socket = await relaySocket();
    const first = new ViewClient();
    const second = new ViewClient();
    const pump = (id: string, client: ViewClient) =>
      void (async () => {
        for (;;) {
          const line = await socket
            .lines(id)
            .next(`view ${id}`, 60_000)
            .catch(() => undefined);
          if (!line || line.type === "CLOSED") return;
          client.take(line as unknown as Frame);
        }
      })();
    socket.send({ op: "view", id: "v1", path: podsPath(ns), sort: "-name", limit: 2 });
    pump("v1", first);
    await first.until([`${ns}/c`, `${ns}/b`], 3);
    // The window moved: a second view beside it, then the first one ends.
    socket.send({ op: "view", id: "v2", path: podsPath(ns), sort: "-name", offset: 2, limit: 2 });
    pump("v2", second);
    await second.until([`${ns}/a`], 3);
    await sim.createPod(ns, "0");
    await second.until([`${ns}/a`, `${ns}/0`], 4);
    await first.until([`${ns}/c`, `${ns}/b`], 4);
    socket.send({ op: "unwatch", id: "v1" });
    socket.send({ op: "view", id: "v3", path: podsPath(ns), sort: "Colour" });
    const refused = await untilClosed(socket.lines("v3"));
    expect(refused[0]).toMatchObject({ type: "ERROR", object: { code: 400, message: expect.stringContaining('cannot sort by "Colour"') } });
    socket.close();
  });

  it("opened on a hub restored from storage, its first window already has what the hub missed while it was stopped", async () => {
    const ns = await namespaceWith(["a", "b"]);
    const first = await wsView(`${podsPath(ns)}?view=1&watch=1&sort=name`);
    await first.client.until([`${ns}/a`, `${ns}/b`], 2);
    // Gone, so the hub can be evicted (a connected subscriber keeps it in memory); then it misses these.
    first.socket.close(1000, "done");
    await eventually(async () => ((await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { views: number }).views === 0, "the view to end");
    await evictDurableObject(env.WATCH_HUB.getByName(hubName(keyOf(ns))));
    const changed = await sim.patchPod(ns, "a", { metadata: { labels: { tier: "changed" } } });
    await sim.deletePod(ns, "b");
    await sim.createPod(ns, "c");
    // Reopened, as a client does after a reconnect: the window as it is now, not as the hub stored it.
    const again = await httpView(`${podsPath(ns)}?view=1&watch=1&sort=name`);
    const frame = await again.client.frames.next("the reopened view's window");
    expect(frame).toMatchObject({ type: "VIEW", count: 2 });
    expect(again.client.keys).toEqual([`${ns}/a`, `${ns}/c`]);
    expect(again.client.rows[0]?.resourceVersion).toBe(changed.metadata?.resourceVersion);
    again.stop();
  });

  it("at an anchor row, stays at the offset it was found at as rows come before it", async () => {
    const ns = await namespaceWith(["b", "d", "f", "h"]);
    const { socket, client } = await wsView(`${podsPath(ns)}?view=1&watch=1&sort=name&anchor=${ns}/d&limit=2`);
    await client.until([`${ns}/d`, `${ns}/f`], 4);
    expect(client.all[0]).toMatchObject({ type: "VIEW", offset: 1 });
    // A row before the window: the window at offset 1 now starts with b.
    await sim.createPod(ns, "a");
    await client.until([`${ns}/b`, `${ns}/d`], 5);
    socket.close(1000, "done");
  });

  it("on a WebSocket of its own, with the relay's stats and metrics counting it", async () => {
    const ns = await namespaceWith(["a"]);
    const { socket, client } = await wsView(`${podsPath(ns)}?view=1&watch=1`);
    await client.until([`${ns}/a`], 1);
    const stats = (await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { views: number; subscribers: number };
    expect(stats).toMatchObject({ views: 1, subscribers: 1 });
    await eventually(async () => metricValue(await scrape(), "kube_watch_relay_views", { cluster: "default" }) >= 1, "the views gauge");
    await sim.createPod(ns, "b");
    await client.until([`${ns}/a`, `${ns}/b`], 2);
    socket.close(1000, "done");
  });
});
