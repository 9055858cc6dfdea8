/**
 * The relay socket's compressed framing (`gzip.batch.watch.kube-watch-relay.dev` offered on
 * `/_relay/socket`): each message of at least 512 characters is one gzip member of exactly the
 * text the batch socket sends, in a binary message, compressed by the socket's own object;
 * shorter ones stay text; the watches' events are the same. Flow control on it is tested beside
 * the batch socket's, in socket.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MIN_COMPRESSED } from "../../src/hub/gzip-frame.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { Sim, uniqueNamespace } from "./helpers.ts";
import { relaySocket, untilClosed, type SocketLine } from "./socket-helpers.ts";

const sim = new Sim();

/** `n` pods in a fresh namespace, made a few at a time. */
async function podsIn(prefix: string, n: number): Promise<string> {
  const ns = uniqueNamespace(prefix);
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, (_, j) => sim.createPod(ns, `p-${i + j}`, { app: "web", tier: "front" })));
  return ns;
}

const isEnd = (line: SocketLine) => line.type === "BOOKMARK" && line.object?.metadata?.annotations?.["k8s.io/initial-events-end"] === "true";

describe("the relay socket, compressed", () => {
  it("sends an initial state as gzip of exactly the batch socket's text, far smaller; short lines as text; the same events after", async () => {
    const pods = 300;
    const ns = await podsIn("mgz", pods);
    const [batched, compressed] = await Promise.all([relaySocket({}, BATCH_PROTOCOL), relaySocket({}, GZIP_BATCH_PROTOCOL)]);
    expect(compressed.accepted).toBe(GZIP_BATCH_PROTOCOL);
    const op = { op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods`, sendInitialEvents: true, allowWatchBookmarks: true, limit: 100 } as const;
    for (const socket of [batched, compressed]) socket.send(op);
    const [fromBatched, fromCompressed] = await Promise.all([batched.lines("w").until(isEnd, "the initial state"), compressed.lines("w").until(isEnd, "the initial state")]);
    expect(fromCompressed).toEqual(fromBatched);
    expect(fromCompressed.filter((l) => l.type === "ADDED")).toHaveLength(pods);
    // Pages of the watch's limit go alone: the same messages, each a binary one of its text.
    expect(compressed.messages).toEqual(batched.messages);
    const pages = compressed.frames.slice(0, 3);
    expect(pages.every((f) => f.binary)).toBe(true);
    const text = compressed.messages.slice(0, 3).reduce((n, m) => n + m.length, 0);
    const wire = pages.reduce((n, f) => n + f.wire, 0);
    expect(text / wire).toBeGreaterThanOrEqual(10);
    // The bookmark after them is short: text.
    expect(compressed.messages.at(-1)!.length).toBeLessThan(MIN_COMPRESSED);
    expect(compressed.frames.at(-1)).toMatchObject({ binary: false });

    // Live (taken all so far, as the text each message held: past its in-flight bound a hub sends no more): a change long enough goes as gzip, the watch's CLOSED as text.
    for (const socket of [batched, compressed]) socket.send({ type: "ACK", received: socket.messages.reduce((n, m) => n + m.length, 0) });
    await sim.patchPod(ns, "p-0", { metadata: { annotations: { note: "x".repeat(2000) } } });
    const [changed, changedCompressed] = await Promise.all([batched.lines("w").next("the change"), compressed.lines("w").next("the change")]);
    expect(changedCompressed).toEqual(changed);
    expect(changedCompressed).toMatchObject({ type: "MODIFIED", object: { metadata: { name: "p-0" } } });
    expect(compressed.frames.at(-1)).toMatchObject({ binary: true });
    compressed.send({ op: "unwatch", id: "w" });
    expect((await untilClosed(compressed.lines("w"))).at(-1)).toMatchObject({ type: "CLOSED", code: 1000 });
    expect(compressed.frames.at(-1)).toMatchObject({ binary: false });
    for (const socket of [batched, compressed]) socket.close();
  });
});
