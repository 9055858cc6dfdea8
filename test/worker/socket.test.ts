/**
 * The relay socket (`/_relay/socket`): many watches on one WebSocket, each opened and closed by
 * message, each delivering exactly what its standalone watch would, failing alone.
 */
import { describe, expect, it } from "vitest";
import { MAX_SELECTOR_BYTES } from "../../src/http/limits.ts";
import { inFlightAllowance } from "../../src/hub/fanout.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { MAX_CLIENT_MESSAGE } from "../../src/mux/session.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace } from "./helpers.ts";
import { names, relaySocket, untilClosed, type RelaySocket } from "./socket-helpers.ts";

const sim = new Sim();
const other = new Sim("other");
/** SUBSCRIBER_BUDGET_BYTES in the tests' configuration. */
const BUDGET = 256 * 1024;

/** Subscribers of the hub of a namespace's pods. */
const subscribers = async (ns: string): Promise<number> => ((await (await relay(`/_relay/stats/api/v1/namespaces/${ns}/pods`)).json()) as { subscribers: number }).subscribers;

/** What a relay socket has been sent so far, as its client counts it for an ACK. */
const received = (socket: RelaySocket): number => socket.messages.reduce((n, m) => n + m.length, 0);

/** A relay socket whose client acknowledges everything it has received on every message, as the project's client does. */
async function acknowledging(protocol: string): Promise<RelaySocket> {
  const socket = await relaySocket({}, protocol);
  socket.socket.addEventListener("message", () => socket.send({ type: "ACK", received: received(socket) }));
  return socket;
}

/** A label selector of exactly `length` characters that a pod labelled `app=x0` matches: `app in (x0,v1,v2,…)`. */
function selectorOf(length: number): string {
  let selector = "app in (x0";
  for (let i = 1; selector.length + 60 < length; i++) selector += `,v${i}`;
  return `${selector},${"z".repeat(length - selector.length - 2)})`;
}

describe("the relay socket", () => {
  it("opens watches by message, across clusters, each seeing only its own collection", async () => {
    const a = uniqueNamespace("mux-a");
    const b = uniqueNamespace("mux-b");
    await sim.createPod(a, "a0");
    await sim.createPod(b, "b0");
    await other.createPod(a, "o0");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "a", path: `/api/v1/namespaces/${a}/pods` });
    socket.send({ op: "watch", id: "b", path: `/api/v1/namespaces/${b}/pods` });
    socket.send({ op: "watch", id: "o", path: `/clusters/other/api/v1/namespaces/${a}/pods` });
    expect(await names(socket.lines("a"), 1)).toEqual(["ADDED a0"]);
    expect(await names(socket.lines("b"), 1)).toEqual(["ADDED b0"]);
    expect(await names(socket.lines("o"), 1)).toEqual(["ADDED o0"]);
    await sim.createPod(a, "a1");
    await other.createPod(a, "o1");
    expect(await names(socket.lines("a"), 1)).toEqual(["ADDED a1"]);
    expect(await names(socket.lines("o"), 1)).toEqual(["ADDED o1"]);
    expect(socket.lines("b").size).toBe(0);
    socket.close();
  });

  it("unwatch ends one watch with CLOSED and its resume point; its hub loses the subscriber", async () => {
    const ns = uniqueNamespace("mux-u");
    const created = await sim.createPod(ns, "p0");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "w1", path: `/api/v1/namespaces/${ns}/pods` });
    expect(await names(socket.lines("w1"), 1)).toEqual(["ADDED p0"]);
    expect(await subscribers(ns)).toBe(1);
    socket.send({ op: "unwatch", id: "w1" });
    const [closed] = await untilClosed(socket.lines("w1"));
    expect(closed).toEqual({ id: "w1", type: "CLOSED", code: 1000, reason: "unwatched", resourceVersion: created.metadata!.resourceVersion });
    await eventually(async () => (await subscribers(ns)) === 0, "the hub to lose its subscriber");
    socket.close();
  });

  it("resumes a watch from the resourceVersion its CLOSED gave: exactly the events missed", async () => {
    const ns = uniqueNamespace("mux-r");
    await sim.createPod(ns, "p0");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
    await names(socket.lines("w"), 1);
    socket.send({ op: "unwatch", id: "w" });
    const closed = (await untilClosed(socket.lines("w"))).at(-1)!;
    await sim.createPod(ns, "p1");
    await sim.deletePod(ns, "p0");
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods`, resourceVersion: closed.resourceVersion, allowWatchBookmarks: true });
    expect(await names(socket.lines("w"), 2)).toEqual(["ADDED p1", "DELETED p0"]);
    socket.close();
  });

  it("a watch that cannot start fails alone, with a Status: unknown resource, bad selector, expired resourceVersion", async () => {
    const ns = uniqueNamespace("mux-e");
    await sim.createPod(ns, "p0");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "ok", path: `/api/v1/namespaces/${ns}/pods` });
    socket.send({ op: "watch", id: "unknown", path: "/api/v1/namespaces/default/widgets" });
    socket.send({ op: "watch", id: "selector", path: `/api/v1/namespaces/${ns}/pods`, labelSelector: "a in (" });
    socket.send({ op: "watch", id: "cluster", path: "/clusters/nowhere/api/v1/pods" });
    const [unknown, unknownClosed] = await untilClosed(socket.lines("unknown"));
    expect(unknown).toMatchObject({ id: "unknown", type: "ERROR", object: { kind: "Status", code: 404 } });
    expect(unknownClosed).toMatchObject({ id: "unknown", type: "CLOSED" });
    expect((await untilClosed(socket.lines("selector")))[0]).toMatchObject({ type: "ERROR", object: { code: 400, reason: "BadRequest" } });
    expect((await untilClosed(socket.lines("cluster")))[0]).toMatchObject({ type: "ERROR", object: { code: 404 } });
    // The hub's own 410: an ERROR event, then the watch's end.
    socket.send({ op: "watch", id: "old", path: `/api/v1/namespaces/${ns}/pods`, resourceVersion: "1" });
    const old = await untilClosed(socket.lines("old"));
    expect(old[0]).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
    expect(old[1]).toMatchObject({ type: "CLOSED", code: 1000 });
    // And the first watch goes on.
    expect(await names(socket.lines("ok"), 1)).toEqual(["ADDED p0"]);
    await sim.createPod(ns, "p1");
    expect(await names(socket.lines("ok"), 1)).toEqual(["ADDED p1"]);
    socket.close();
  });

  it("answers bad messages with a Status and keeps the socket and its watches", async () => {
    const ns = uniqueNamespace("mux-b");
    await sim.createPod(ns, "p0");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
    await names(socket.lines("w"), 1);
    const errors = socket.lines("");
    const refused = async (message: unknown) => {
      socket.send(message as string);
      const line = await errors.next("a refusal");
      expect(line).toMatchObject({ type: "ERROR", object: { kind: "Status", status: "Failure" } });
      return line.object!;
    };
    expect(await refused("not json")).toMatchObject({ code: 400, message: expect.stringContaining("must be JSON") });
    expect(await refused(JSON.stringify([1]))).toMatchObject({ code: 400 });
    expect(await refused(JSON.stringify({ op: "subscribe", id: "x" }))).toMatchObject({ code: 400, details: { name: "x" } });
    expect(await refused(JSON.stringify({ op: "watch", path: "/api/v1/pods" }))).toMatchObject({ code: 400, message: expect.stringContaining("needs an id") });
    expect(await refused(JSON.stringify({ op: "watch", id: "q", path: "/api/v1/pods?watch=1" }))).toMatchObject({ code: 400 });
    expect(await refused(JSON.stringify({ op: "watch", id: "t", path: "/api/v1/pods", limit: 0 }))).toMatchObject({ code: 400, message: expect.stringContaining("limit") });
    expect(await refused(JSON.stringify({ op: "watch", id: "w", path: "/api/v1/pods" }))).toMatchObject({ code: 409, reason: "AlreadyExists" });
    expect(await refused(JSON.stringify({ op: "unwatch", id: "nope" }))).toMatchObject({ code: 404 });
    expect(await refused(JSON.stringify({ type: "ACK", received: -1 }))).toMatchObject({ code: 400 });
    await sim.createPod(ns, "p1");
    expect(await names(socket.lines("w"), 1)).toEqual(["ADDED p1"]);
    socket.close();
  });

  it("streams a large initial state in pages of the watch's limit, then the initial-events-end bookmark", async () => {
    const ns = uniqueNamespace("mux-p");
    for (let i = 0; i < 25; i++) await sim.createPod(ns, `p${String(i).padStart(2, "0")}`);
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "big", path: `/api/v1/namespaces/${ns}/pods`, sendInitialEvents: true, allowWatchBookmarks: true, limit: 4 });
    const lines = socket.lines("big");
    const added = await lines.take(25, "the initial state");
    expect(added.every((l) => l.type === "ADDED")).toBe(true);
    const end = await lines.next("the initial-events-end bookmark");
    expect(end).toMatchObject({ type: "BOOKMARK", object: { metadata: { annotations: { "k8s.io/initial-events-end": "true" } } } });
    const pageSizes = socket.messages.filter((m) => m.includes('"id":"big"')).map((m) => m.split("\n").filter(Boolean).length);
    expect(Math.max(...pageSizes)).toBeLessThanOrEqual(4);
    expect(pageSizes.reduce((a, b) => a + b, 0)).toBe(26);
    socket.close();
  });

  it("sends one event per message unless the batch subprotocol is offered", async () => {
    const ns = uniqueNamespace("mux-1");
    for (let i = 0; i < 5; i++) await sim.createPod(ns, `p${i}`);
    const socket = await relaySocket({}, null);
    expect(socket.socket.protocol).toBe("");
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
    await names(socket.lines("w"), 5);
    expect(socket.messages.filter((m) => m.split("\n").filter(Boolean).length !== 1)).toEqual([]);
    socket.close();
  });

  it("carries the client's acknowledgements to each hub: a watch whose reader stops taking is cut off alone (4008)", async () => {
    const busy = uniqueNamespace("mux-slow");
    const quiet = uniqueNamespace("mux-calm");
    await sim.createPod(busy, "first");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "busy", path: `/api/v1/namespaces/${busy}/pods` });
    socket.send({ op: "watch", id: "quiet", path: `/api/v1/namespaces/${quiet}/pods`, allowWatchBookmarks: true });
    await names(socket.lines("busy"), 1);
    // Acknowledge what has arrived so far, then nothing more: the hub now counts this reader's backlog.
    socket.send({ type: "ACK", received: received(socket) });
    // More than SUBSCRIBER_BUDGET_BYTES (256 KiB in these tests) of changes, unacknowledged.
    for (let i = 0; i < 60; i++)
      await sim.createPod(busy, `p${i}`, { filler: "x".repeat(60) }).then((p) => sim.patchPod(busy, p.metadata!.name!, { metadata: { annotations: { pad: "y".repeat(4000) } } }));
    const ended = (await untilClosed(socket.lines("busy"))).at(-1)!;
    expect(ended).toMatchObject({ type: "CLOSED", code: 4008 });
    expect(Number(ended.resourceVersion)).toBeGreaterThan(0);
    // The other watch on the socket goes on.
    await sim.createPod(quiet, "still-here");
    const quietNames = await names(socket.lines("quiet"), 1);
    expect(quietNames).toEqual(["ADDED still-here"]);
    socket.close();
  });

  // On the gzip framing too: its client acknowledges the text a compressed message holds, as the relay counts it.
  it.each([BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL])(
    "holds a client that never acknowledges, and cuts its watch off within the budget (4008); one that acknowledges gets every event (%s)",
    async (protocol) => {
      const ns = uniqueNamespace("mux-silent");
      await sim.createPod(ns, "big");
      const silent = await relaySocket({}, protocol);
      const reader = await acknowledging(protocol);
      for (const socket of [silent, reader]) socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
      for (const socket of [silent, reader]) await names(socket.lines("w"), 1);

      // 40 changes of ~10 KB: 400 KB, past the budget, which one client never acknowledges.
      const padding = "x".repeat(10_000);
      const written: number[] = [];
      for (let i = 0; i < 40; i++) written.push(rvOf(await sim.patchPod(ns, "big", { metadata: { annotations: { padding: `${i}${padding}` } } })));
      expect((await reader.lines("w").take(40, "every change")).map((line) => rvOf(line.object!))).toEqual(written);

      const lines = await untilClosed(silent.lines("w"));
      expect(lines.at(-1)).toMatchObject({ type: "CLOSED", code: 4008, reason: expect.stringContaining("slow subscriber") });
      const got = lines.slice(0, -1).map((line) => rvOf(line.object!));
      expect(got).toEqual(written.slice(0, got.length));
      expect(lines.at(-1)!.resourceVersion).toBe(String(got.at(-1)));
      // Its hub stopped sending half-way through the budget, as for a standalone reader that fell behind.
      expect(received(silent)).toBeLessThan(BUDGET);
      await eventually(async () => (await subscribers(ns)) === 1, "the hub to let the silent client's watch go");
      for (const socket of [silent, reader]) socket.close();
    },
  );

  // Events beyond ASCII: the client counts UTF-16 units of the text, as the relay does, on either framing.
  it.each([BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL])(
    "carries changes whose text is not ASCII beside ASCII ones, intact and in order, and a reader acknowledging them as text is never cut off (%s)",
    async (protocol) => {
      const ns = uniqueNamespace("mux-utf8");
      await sim.createPod(ns, "p");
      const reader = await acknowledging(protocol);
      reader.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
      await names(reader.lines("w"), 1);
      // 40 changes of ~10 KB, past the budget: every other one's note is not ASCII, one character beyond UTF-16's first plane.
      // As UTF-8 those take 320 KB more than as text: a relay that counted bytes would hold this reader at its in-flight bound.
      const notes = Array.from({ length: 40 }, (_, i) => (i % 2 ? `${i} ${"x".repeat(10_000)}` : `${i} é 𝄞 ${"✓".repeat(8_000)}`));
      const written: number[] = [];
      for (const note of notes) written.push(rvOf(await sim.patchPod(ns, "p", { metadata: { annotations: { note } } })));
      const lines = await reader.lines("w").take(40, "every change");
      expect(lines.map((line) => rvOf(line.object!))).toEqual(written);
      expect(lines.map((line) => line.object?.metadata?.annotations?.note)).toEqual(notes);
      expect(reader.lines("w").size).toBe(0);
      reader.close();
    },
  );

  it.each([BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL])(
    "cuts off a client that never acknowledges once what the relay sent it passes the budget beside what its hubs hold: every watch ends (4008), then the socket (%s)",
    async (protocol) => {
      const ns = uniqueNamespace("mux-flood");
      await sim.createPod(ns, "p0");
      const socket = await relaySocket({}, protocol);
      socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
      await names(socket.lines("w"), 1);
      // Each op it cannot act on is answered with a Status as long as the op it names, and never acknowledged.
      for (let i = 0; i < 100; i++) socket.send({ op: "x".repeat(10_000), id: `bad${i}` });
      expect(await socket.closed.closed()).toMatchObject({ code: 4008, reason: expect.stringContaining("resume each watch from its last resourceVersion") });
      // Cut off at the first answer past it: what its watch's hub may hold, and the budget beside.
      expect(received(socket)).toBeLessThan(BUDGET + inFlightAllowance(BUDGET) + 11_000);
      expect((await untilClosed(socket.lines("w"))).at(-1)).toMatchObject({ type: "CLOSED", code: 4008 });
      await eventually(async () => (await subscribers(ns)) === 0, "the hub to lose the socket's watch");
    },
  );

  it("takes ops as long as a watch URL allows; a longer message closes the socket (1009) unread", async () => {
    const ns = uniqueNamespace("mux-long");
    await sim.createPod(ns, "p0", { app: "x0" });
    const socket = await relaySocket();
    // A label selector at its 4 KiB limit: its watch opens as a standalone one would.
    socket.send({ op: "watch", id: "longest", path: `/api/v1/namespaces/${ns}/pods`, labelSelector: selectorOf(MAX_SELECTOR_BYTES) });
    expect(await names(socket.lines("longest"), 1)).toEqual(["ADDED p0"]);
    // Longer than any op can be: closed before it is read, so its id is never answered.
    socket.send({ op: "watch", id: "too-long", path: `/api/v1/namespaces/${ns}/pods`, labelSelector: selectorOf(MAX_CLIENT_MESSAGE) });
    expect(await socket.closed.closed()).toMatchObject({ code: 1009, reason: expect.stringContaining(`at most ${MAX_CLIENT_MESSAGE} characters`) });
    expect(socket.lines("too-long").size).toBe(0);
    expect((await untilClosed(socket.lines("longest"))).at(-1)).toMatchObject({ type: "CLOSED", code: 1009 });
  });

  it("is a WebSocket endpoint only", async () => {
    const plain = await relay("/_relay/socket");
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ kind: "Status", code: 400 });
  });

  it("reports resourceVersions the way the objects carry them", async () => {
    const ns = uniqueNamespace("mux-v");
    const socket = await relaySocket();
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods`, allowWatchBookmarks: true });
    const pod = await sim.createPod(ns, "p0", { resourceVersion: "label-not-a-version" });
    const [added] = await socket.lines("w").take(1);
    expect(rvOf(added!.object!)).toBe(rvOf(pod));
    socket.send({ op: "unwatch", id: "w" });
    expect((await untilClosed(socket.lines("w"))).at(-1)!.resourceVersion).toBe(pod.metadata!.resourceVersion);
    socket.close();
  });
});
