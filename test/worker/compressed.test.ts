/**
 * The compressed WebSocket framings (`gzip.batch…`, `gzip.delta…`): each message long enough
 * to pay is one gzip member of exactly the text the batch framing sends, in a binary message,
 * compressed once by the hub for every subscriber it goes to; a resume is exact as on any socket.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import type { WatchEvent } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL, GZIP_DELTA_PROTOCOL } from "../../src/k8s/websocket.ts";
import { Inbox } from "../kit/inbox.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { metricValue, scrape } from "./metrics-helpers.ts";

const sim = new Sim();
const cluster = "default";

/** A watch socket offering `protocol`: its events, and each message as the text it holds and the bytes it took on the wire. */
async function compressedWatch(path: string, protocol: string) {
  const response = await relay(path, { headers: { upgrade: "websocket", "sec-websocket-protocol": protocol } });
  const socket = response.webSocket;
  if (!socket) throw new Error(`expected a WebSocket upgrade, got ${response.status}: ${await response.text()}`);
  expect(response.headers.get("sec-websocket-protocol")).toBe(protocol);
  socket.accept();
  const events = new Inbox<WatchEvent>();
  const messages: Array<{ binary: boolean; wire: number; text: string }> = [];
  // Decompressed in arrival order: a text message waits for the binary one before it.
  let order = Promise.resolve();
  socket.addEventListener("message", (m) => {
    const data = m.data as string | ArrayBuffer | Blob;
    order = order.then(async () => {
      const binary = typeof data !== "string";
      const text = binary ? await new Response(new Blob([data]).stream().pipeThrough(new DecompressionStream("gzip"))).text() : data;
      messages.push({ binary, wire: typeof data === "string" ? data.length : data instanceof Blob ? data.size : data.byteLength, text });
      for (const line of text.split("\n")) if (line) events.push(JSON.parse(line) as WatchEvent);
    });
  });
  socket.addEventListener("close", (e) => void order.then(() => events.end({ code: e.code, reason: e.reason })));
  return { socket, events, messages, close: () => socket.close(1000, "test done") };
}

/** `n` pods in a fresh namespace, made a few at a time. */
async function podsIn(prefix: string, n: number): Promise<string> {
  const ns = uniqueNamespace(prefix);
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, (_, j) => sim.createPod(ns, `p-${i + j}`, { app: "web", tier: "front" })));
  return ns;
}

const hubOf = (namespace: string) =>
  env.WATCH_HUB.getByName(hubName(watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector: null, fieldSelector: null })));

describe("compressed WebSocket framings", () => {
  it("a resume's replay arrives as gzip of exactly the batch framing's text, events and all, from exactly the resume point", async () => {
    const ns = uniqueNamespace("gz");
    const first = await sim.createPod(ns, "p");
    const open = await wsWatch(`${podsPath(ns)}?watch=1`);
    await open.events.next();
    for (let i = 0; i < 20; i++) await sim.patchPod(ns, "p", { metadata: { labels: { i: String(i) } } });
    await open.events.take(20); // the hub has them all: a resume is a pure replay
    const path = `${podsPath(ns)}?watch=1&resourceVersion=${rvOf(first)}&allowWatchBookmarks=true`;
    const batched = await wsWatch(path, { "sec-websocket-protocol": BATCH_PROTOCOL });
    const compressed = await compressedWatch(path, GZIP_BATCH_PROTOCOL);
    const [fromBatched, fromCompressed] = await Promise.all([batched.events.take(21), compressed.events.take(21)]);
    expect(fromCompressed).toEqual(fromBatched);
    // Exactly the resume point on: the 20 changes after it, then the catch-up bookmark.
    expect(fromCompressed.slice(0, 20).map((e) => e.object.metadata?.labels?.i)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(fromCompressed[20]?.type).toBe("BOOKMARK");
    expect(compressed.messages.map((m) => m.text).join("")).toBe(batched.raw.join(""));
    // The replay went compressed, and smaller; the bookmark (short) as text.
    const replay = compressed.messages.filter((m) => m.binary);
    expect(replay.length).toBeGreaterThan(0);
    for (const m of replay) expect(m.wire).toBeLessThan(m.text.length);
    expect(compressed.messages.at(-1)).toMatchObject({ binary: false });
    [open, batched, compressed].forEach((s) => s.close());
  });

  it("an initial state goes at a tenth of its size or less (the issue asks for a fifth)", async () => {
    const pods = 2000;
    const ns = await podsIn("gzs", pods);
    const path = `${podsPath(ns)}?watch=1`;
    const batched = await wsWatch(path, { "sec-websocket-protocol": BATCH_PROTOCOL });
    const compressed = await compressedWatch(path, GZIP_BATCH_PROTOCOL);
    const [fromBatched, fromCompressed] = await Promise.all([batched.events.take(pods), compressed.events.take(pods)]);
    expect(new Set(fromCompressed.map((e) => e.object.metadata?.name))).toEqual(new Set(fromBatched.map((e) => e.object.metadata?.name)));
    // Several slices, each its own gzip member.
    expect(compressed.messages.filter((m) => m.binary).length).toBeGreaterThan(1);
    const text = batched.raw.reduce((n, m) => n + m.length, 0);
    const wire = compressed.messages.reduce((n, m) => n + m.wire, 0);
    // About 12× for these pods; 11.7× for 10,000 of the simulator's default pods (docs/performance.md).
    expect(text / wire).toBeGreaterThanOrEqual(10);
    [batched, compressed].forEach((s) => s.close());
  });

  it("a change is compressed once for every subscriber that takes it, deltas included", async () => {
    const ns = await podsIn("gzo", 1);
    const path = `${podsPath(ns)}?watch=1`;
    const subscribers = await Promise.all(Array.from({ length: 6 }, (_, i) => compressedWatch(path, i % 2 === 0 ? GZIP_BATCH_PROTOCOL : GZIP_DELTA_PROTOCOL)));
    for (const s of subscribers) await s.events.next("the pod's ADDED");
    const counts = async () => {
      const s = await scrape();
      return {
        compressed: metricValue(s, "kube_watch_relay_compressed_messages_total", { cluster }),
        sent: metricValue(s, "kube_watch_relay_sent_messages_total", { cluster, transport: "websocket" }),
      };
    };
    await runDurableObjectAlarm(hubOf(ns));
    const before = await eventually(async () => {
      await runDurableObjectAlarm(hubOf(ns));
      return counts();
    }, "the hub's report");
    // A change whole (its delta, a label, is short and goes as text), long enough to be compressed.
    await sim.patchPod(ns, "p-0", { metadata: { annotations: { note: "x".repeat(2000) } } });
    for (const s of subscribers) expect((await s.events.next("the change")).type).toBe("MODIFIED");
    for (const s of subscribers) expect(s.messages.at(-1)?.binary).toBe(true);
    // The three batch subscribers share one message, the three delta subscribers another (a delta that is no shorter goes whole, but keyed apart).
    const after = await eventually(async () => {
      await runDurableObjectAlarm(hubOf(ns));
      const now = await counts();
      return now.sent - before.sent >= 6 ? now : undefined;
    }, "the hub's report of the sends");
    expect(after.sent - before.sent).toBe(6);
    expect(after.compressed - before.compressed).toBeLessThanOrEqual(2);
    expect(after.compressed - before.compressed).toBeGreaterThanOrEqual(1);
    for (const s of subscribers) s.close();
  });
});
