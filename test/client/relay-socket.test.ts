/**
 * `relaySocket()` against a scripted relay socket: the framing it offers, and its compressed
 * messages read in arrival order with the text ones, acknowledged as the text they hold. The
 * relay itself is exercised in test/worker/socket-client.test.ts and socket-gzip.test.ts.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { relaySocket, type RelaySocketOptions, type WatchUpdate } from "../../src/client/index.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { ScriptedRelay } from "./scripted.ts";

/** A watch from resourceVersion 10 (no list) over a relay socket to a scripted relay. */
function start(options: RelaySocketOptions = {}) {
  const relay = new ScriptedRelay();
  const socket = relaySocket("http://relay", { ...options, transport: relay });
  const stop = new AbortController();
  const iterator = socket.watch<KubeObject>("http://relay/api/v1/pods", { resourceVersion: "10", backoff: { initialMs: 8, maxMs: 64, random: () => 0.5 }, signal: stop.signal });
  const next = async (): Promise<WatchUpdate<KubeObject>> => {
    const { value, done } = await iterator.next();
    if (done) throw new Error("the watch ended");
    return value;
  };
  return { relay, next, stop: () => stop.abort() };
}

const pod = (rv: number) => ({ kind: "Pod", metadata: { name: "p", namespace: "n", resourceVersion: String(rv) } });
/** Watch 1's lines, as the relay socket tags them. */
const lines = (...rvs: number[]) => rvs.map((rv) => `${JSON.stringify({ id: "1", type: "MODIFIED", object: pod(rv) })}\n`).join("");

describe("relaySocket()", () => {
  it("offers the socket's gzip framing, reads gzip messages in order with text ones, acknowledged as their text; a message that is not its lines closes it (1007), and the watch resumes", async () => {
    const w = start();
    expect(await w.next()).toMatchObject({ type: "connected" });
    expect(w.relay.offered[0]).toEqual([GZIP_BATCH_PROTOCOL]);
    const socket = w.relay.sockets[0]!;
    expect(JSON.parse(socket.sent[0]!)).toMatchObject({ op: "watch", id: "1", path: "/api/v1/pods", resourceVersion: "10" });
    // A Blob takes longest to read: the text message after it still comes after its events.
    socket.binary(new Blob([gzipSync(lines(11, 12))]));
    socket.binary(new Uint8Array(gzipSync(lines(13))).buffer);
    socket.line(lines(14).trimEnd());
    socket.binary(gzipSync(lines(15)));
    const updates = [];
    for (let i = 0; i < 5; i++) updates.push((await w.next()) as { object: KubeObject });
    expect(updates.map((u) => u.object.metadata?.resourceVersion)).toEqual(["11", "12", "13", "14", "15"]);
    // The socket's one count: the text the messages held (the last counts once the consumer asks past it).
    await expect.poll(() => socket.sent.length, { timeout: 2000 }).toBeGreaterThan(1);
    expect(JSON.parse(socket.sent.at(-1)!)).toEqual({ type: "ACK", received: lines(11, 12).length + lines(13).length + lines(14).length });

    socket.line('{"id":"1","type":"CLOSED","code":');
    expect(await w.next()).toMatchObject({ type: "closed", code: 1007, reason: expect.stringContaining("not the relay socket's lines") });
    expect(socket.closedWith).toBe(1007);
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: "15", resuming: true });
    expect(w.relay.sockets).toHaveLength(2);
    w.stop();
  });

  it("offers the batch framing uncompressed when asked not to compress", async () => {
    const w = start({ compressed: false });
    expect(await w.next()).toMatchObject({ type: "connected" });
    expect(w.relay.offered[0]).toEqual([BATCH_PROTOCOL]);
    w.stop();
  });
});
