/**
 * The client's `view()` against the relay in workerd, on a WebSocket of its own and as an op of
 * a relay socket: the window and its row changes, `update()` moving it, and a dropped
 * connection while the cluster moves: the view reopens, and what changed meanwhile arrives as
 * row changes, leaving it equal to the relay's window, never with a gap. Refusals say why.
 */
import { describe, expect, it } from "vitest";
import { relaySocket, view, WatchError, type KubeResource, type View, type ViewRow } from "../../src/client/index.ts";
import { Inbox } from "../kit/inbox.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { TestNetwork } from "./network.ts";

const sim = new Sim();
const FAST = { initialMs: 20, maxMs: 200, random: () => 0.5 };
const collection = (ns: string) => `http://relay.test${podsPath(ns)}`;

/** What a view's callbacks and statuses said, in order, as lines. */
function track() {
  const seen = new Inbox<string>();
  const name = (r: ViewRow) => r.key.split("/")[1];
  return {
    seen,
    options: {
      backoff: FAST,
      onReset: (rows: ReadonlyArray<ViewRow>) => seen.push(`reset ${rows.map(name).join(",")}`),
      onInsert: (r: ViewRow, at: number) => seen.push(`insert ${name(r)} at ${at}`),
      onRemove: (r: ViewRow, at: number) => seen.push(`remove ${name(r)} at ${at}`),
      onUpdate: (r: ViewRow, _: ViewRow, at: number) => seen.push(`update ${name(r)} at ${at}`),
      onMove: (r: ViewRow, from: number, to: number) => seen.push(`move ${name(r)} ${from} → ${to}`),
      onCount: (count: number) => seen.push(`count ${count}`),
      onStatus: (s: { type: string; replayed?: number }) => seen.push(s.type === "resumed" ? `resumed ${s.replayed}` : s.type),
    },
  };
}

const names = (v: Pick<View<KubeResource>, "rows">) => v.rows.map((r) => r.key.split("/")[1]).join(",");

/** The relay's window for the view now, as a page (`?view=1`). */
async function windowNow(ns: string, query: string): Promise<{ names: string; count: number; versions: string[] }> {
  const page = (await (await relay(`${podsPath(ns)}?view=1&${query}`)).json()) as { count: number; rows: ViewRow[] };
  return { names: page.rows.map((r) => r.key.split("/")[1]).join(","), count: page.count, versions: page.rows.map((r) => r.resourceVersion) };
}

async function namespaceWith(names: string[]): Promise<string> {
  const ns = uniqueNamespace("vc");
  for (const name of names) await sim.createPod(ns, name);
  return ns;
}

describe("view() through the relay", () => {
  it("on a WebSocket of its own: the window, its row changes, update() moving it, and a dropped socket reopened without a gap", async () => {
    const ns = await namespaceWith(["b", "d", "f"]);
    const network = new TestNetwork();
    const { seen, options } = track();
    const v = view(collection(ns), { ...options, transport: network, sort: "-name", limit: 2 });
    await v.ready;
    expect(names(v)).toBe("f,d");
    expect(v.count).toBe(3);
    expect(v.columns.map((c) => c.name)).toContain("Status");
    expect(v.rows[0]).toMatchObject({ key: `${ns}/f`, creationTimestamp: expect.any(String), cells: expect.arrayContaining(["f"]) });
    expect(seen.drain()).toEqual(["connected", "reset f,d", "count 3"]);

    await sim.createPod(ns, "g");
    expect(await seen.take(3)).toEqual(["remove d at 1", "insert g at 0", "count 4"]);
    expect(names(v)).toBe("g,f");

    await v.update({ offset: 2 });
    expect(names(v)).toBe("d,b");
    expect(seen.drain()).toEqual(["reset d,b"]);
    // The view it moved from has ended: one is open on the hub.
    expect(network.sockets).toHaveLength(2);
    await eventually(async () => ((await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { views: number }).views === 1, "one view open");

    // Away while the window changes: b changes, a arrives (into the window), d goes.
    const release = network.hold();
    network.drop();
    expect(await seen.next()).toBe("closed");
    await sim.patchPod(ns, "b", { metadata: { labels: { touched: "yes" } } });
    await sim.createPod(ns, "a");
    await sim.deletePod(ns, "d");
    // The relay has the changes before the client reconnects.
    await eventually(async () => (await windowNow(ns, "sort=-name&offset=2&limit=2")).names === "b,a", "the relay to have the changes");
    release();
    const reopened = await seen.until((s) => s.startsWith("resumed"), "the reopened view");
    // g, f | d, b → g, f | b, a: the count is what it was.
    expect(reopened).toEqual(["connected", "remove d at 0", "update b at 0", "insert a at 1", "resumed 3"]);
    expect({ names: names(v), count: v.count, versions: v.rows.map((r) => r.resourceVersion) }).toEqual(await windowNow(ns, "sort=-name&offset=2&limit=2"));
    expect(network.urls.at(-1)).toMatch(/view=1&watch=1&sort=-name&offset=2&limit=2&rows=cells$/);
    v.close();
    await v.done;
  });

  it("on a relay socket beside a watch: reopens with the socket, tells what changed as row changes, and keeps the window it shows when an update is refused", async () => {
    const ns = await namespaceWith(["a", "b", "c"]);
    const network = new TestNetwork();
    const socket = relaySocket("http://relay.test", { transport: network });
    const { seen, options } = track();
    const v = socket.view(collection(ns), { ...options, sort: "name", limit: 5 });
    const pods = socket.informer(collection(ns), { backoff: FAST });
    await Promise.all([v.ready, pods.synced]);
    expect(names(v)).toBe("a,b,c");
    expect(network.sockets).toHaveLength(1);
    seen.drain();

    const refused = v.update({ sort: "Colour" });
    await expect(refused).rejects.toThrow(WatchError);
    await expect(refused).rejects.toThrow(/400 BadRequest: invalid view: cannot sort by "Colour"/);
    expect(v.window.sort).toBe("name");
    await sim.createPod(ns, "bb");
    expect(await seen.take(2)).toEqual(["insert bb at 2", "count 4"]);

    const release = network.hold();
    network.drop();
    await sim.patchPod(ns, "a", { metadata: { labels: { touched: "yes" } } });
    await sim.deletePod(ns, "c");
    await eventually(async () => (await windowNow(ns, "sort=name&limit=5")).names === "a,b,bb", "the relay to have the changes");
    release();
    const reopened = await seen.until((s) => s.startsWith("resumed"), "the reopened view");
    expect(reopened).toEqual(["closed", "connected", "remove c at 3", "update a at 0", "count 3", "resumed 2"]);
    expect({ names: names(v), count: v.count, versions: v.rows.map((r) => r.resourceVersion) }).toEqual(await windowNow(ns, "sort=name&limit=5"));
    expect(network.sockets).toHaveLength(2);
    v.close();
    pods.stop();
    await Promise.all([v.done, pods.done]);
    socket.close();
  });

  it("tells a window sent in parts (larger than a frame's 256 KiB) only once it is whole, the first and one update() asks for", async () => {
    const ns = uniqueNamespace("vc");
    // Four objects of 100 KB: the relay sends the window as a VIEW of the first two and ROWS inserting the rest.
    const padding = "x".repeat(100_000);
    for (const name of ["a", "b", "c", "d"])
      await sim.create(podsPath(ns), { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: ns, annotations: { padding } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
    const { seen, options } = track();
    const v = view(collection(ns), { ...options, transport: new TestNetwork(), rows: "object", sort: "name", limit: 4 });
    await v.ready;
    expect(names(v)).toBe("a,b,c,d");
    expect(seen.drain()).toEqual(["connected", "reset a,b,c,d", "count 4"]);
    await v.update({ sort: "-name" });
    expect(names(v)).toBe("d,c,b,a");
    expect(seen.drain()).toEqual(["reset d,c,b,a"]);
    // Live after it: a change is a row change.
    await sim.deletePod(ns, "b");
    expect(await seen.take(2)).toEqual(["remove b at 2", "count 3"]);
    v.close();
    await v.done;
  });

  it("on a WebSocket of its own, a view the relay refuses ends with its Status", async () => {
    const ns = await namespaceWith(["a"]);
    const v = view(collection(ns), { transport: new TestNetwork(), backoff: FAST, filter: "Age=3d" });
    await expect(v.done).rejects.toThrow(/400 BadRequest: invalid view: cannot filter on "Age"/);
  });
});
