/**
 * The watch's reconnect policy against a scripted relay: which closes resume at once and which
 * back off, what is retried and what ends the watch. The relay itself is exercised in
 * test/worker/client.test.ts; here every close code and failure can be produced on demand.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { watch, WatchError, type WatchOptions, type WatchUpdate } from "../../src/client/index.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { DELTA_PROTOCOL, GZIP_DELTA_PROTOCOL } from "../../src/k8s/websocket.ts";
import { ScriptedRelay, type ScriptedSocket } from "./scripted.ts";

const list =
  (rv: number, status = 200, headers: Record<string, string> = {}, items: unknown[] = []) =>
  () =>
    new Response(
      status === 200
        ? JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: String(rv) }, items })
        : JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message: "nope", reason: status === 503 ? "ServiceUnavailable" : "Forbidden", code: status }),
      { status, headers },
    );

/** Delays 8, 16, 32, 64 ms: `random` 1 takes the top of each jitter range. */
const BACKOFF = { initialMs: 8, maxMs: 64, random: () => 0.999999 };

function start(relay: ScriptedRelay, options: WatchOptions = {}) {
  const stop = new AbortController();
  const iterator = watch<KubeObject>("http://relay/api/v1/pods", { transport: relay, backoff: BACKOFF, signal: stop.signal, ...options });
  const next = async (): Promise<WatchUpdate<KubeObject>> => {
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) throw new Error("the watch ended");
      if (value.type !== "BOOKMARK") return value;
    }
  };
  return { next, iterator, stop: () => stop.abort() };
}

const rvParam = (socket: ScriptedSocket | undefined) => new URL(socket!.url).searchParams.get("resourceVersion");

describe("watch reconnect policy", () => {
  it("resumes every relay close from the last resourceVersion: a normal end at once, the others after a backoff", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10));
    const w = start(relay);
    expect(await w.next()).toMatchObject({ type: "listed", resourceVersion: "10" });
    let rv = 10;
    for (const [code, delay] of [
      [1000, 0],
      [1001, 8],
      [1012, 8],
      [4008, 8],
      [1006, 8],
    ] as const) {
      expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: String(rv) });
      const socket = relay.sockets.at(-1)!;
      expect(rvParam(socket)).toBe(String(rv));
      socket.modified(++rv);
      expect(await w.next()).toMatchObject({ type: "MODIFIED" });
      socket.serverClose(code, `closed with ${code}`);
      expect(await w.next()).toEqual({ type: "closed", code, reason: `closed with ${code}`, retryInMs: delay });
    }
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: String(rv), resuming: true });
    w.stop();
  });

  it("backs off, doubling, while sockets close without delivering anything, and while connecting fails", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10));
    const w = start(relay);
    await w.next();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      await w.next();
      relay.sockets.at(-1)!.serverClose(1001);
      delays.push(((await w.next()) as { retryInMs: number }).retryInMs);
    }
    relay.failNextConnect = true;
    const failed = await w.next();
    expect(failed).toMatchObject({ type: "error", retryInMs: 64 });
    expect((failed as { error: Error }).error.message).toMatch(/did not open: .*GET the same URL without watch=1/);
    expect(delays).toEqual([8, 16, 32]);
    w.stop();
  });

  it("retries a 503 no sooner than the relay asks", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(0, 503, { "retry-after": "2" }));
    const w = start(relay);
    expect(await w.next()).toMatchObject({ type: "error", retryInMs: 2000, error: { code: 503, retryable: true } });
    w.stop();
  });

  it("ends on a 403 with a WatchError that says why", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(0, 403));
    const end = start(relay).iterator.next();
    await expect(end).rejects.toThrow(WatchError);
    await expect(end).rejects.toThrow(/403 Forbidden: nope \(the token, or the lack of one, may not list and watch this collection\)/);
  });

  it("relists after a 410, spacing relists out when every watch is answered with a 410", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10), list(20), list(30), list(40));
    const w = start(relay);
    const expired = { kind: "Status", apiVersion: "v1", status: "Failure", message: "too old resource version: 10 (15)", reason: "Expired", code: 410 };
    expect(await w.next()).toMatchObject({ type: "listed", resourceVersion: "10" });
    for (const rv of ["20", "30", "40"]) {
      await w.next();
      relay.sockets.at(-1)!.event("ERROR", expired);
      expect(await w.next()).toMatchObject({ type: "relisted", resourceVersion: rv, expired: "too old resource version: 10 (15)" });
    }
    const gaps = relay.listedAt.slice(1).map((t, i) => t - relay.listedAt[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual([8, 16, 32][i]! - 1));
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: "40", resuming: false });
    w.stop();
  });

  it("relists when its resourceVersion is ahead of the relay's history (a restored etcd, a restarted upstream relay), as client-go does", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(703), list(120));
    const w = start(relay);
    expect(await w.next()).toMatchObject({ type: "listed", resourceVersion: "703" });
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: "703" });
    const tooLarge = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: "Timeout: Too large resource version: 703, current: 120",
      reason: "Timeout",
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
      code: 504,
    };
    relay.sockets.at(-1)!.event("ERROR", tooLarge);
    expect(await w.next()).toMatchObject({ type: "relisted", resourceVersion: "120", expired: tooLarge.message });
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: "120", resuming: false });
    w.stop();
  });

  it("treats an ERROR event as the Status it carries: 500s are retried from the same resourceVersion, a 403 ends the watch", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10));
    const w = start(relay);
    await w.next();
    await w.next();
    relay.sockets.at(-1)!.event("ERROR", { kind: "Status", apiVersion: "v1", status: "Failure", message: "etcd is sad", reason: "InternalError", code: 500 });
    expect(await w.next()).toMatchObject({ type: "error", retryInMs: 8, error: { code: 500 } });
    expect(await w.next()).toMatchObject({ type: "connected", resourceVersion: "10" });
    relay.sockets.at(-1)!.event("ERROR", { kind: "Status", apiVersion: "v1", status: "Failure", message: "no", reason: "Forbidden", code: 403 });
    await expect(w.iterator.next()).rejects.toThrow(/the watch failed: 403 Forbidden: no/);
  });

  it("applies a delta to the version it names, and relists when it names a version the watch does not hold", async () => {
    const relay = new ScriptedRelay();
    const pod = { kind: "Pod", metadata: { name: "p", namespace: "n", resourceVersion: "10" }, status: { phase: "Pending" } };
    relay.lists.push(list(10, 200, {}, [pod]), list(20));
    const w = start(relay);
    await w.next();
    await w.next();
    const socket = relay.sockets.at(-1)!;
    socket.line('{"type":"MODIFIED","base":"10","patch":{"metadata":{"resourceVersion":"11"},"status":{"phase":"Running"}}}');
    expect(await w.next()).toEqual({ type: "MODIFIED", object: { ...pod, metadata: { ...pod.metadata, resourceVersion: "11" }, status: { phase: "Running" } } });
    // Version 10 is gone: it was replaced by 11.
    socket.line('{"type":"MODIFIED","base":"10","patch":{"metadata":{"resourceVersion":"12"}}}');
    expect(await w.next()).toMatchObject({ type: "relisted", resourceVersion: "20", expired: expect.stringContaining("resourceVersion 10, which this watch does not hold") });
    w.stop();
  });

  it("offers the compressed framing, reads gzip messages (Blob, ArrayBuffer or a view) in order with text ones, and closes a socket that sends one that is not gzip (1007), resuming", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10));
    const w = start(relay);
    expect((await w.next()).type).toBe("listed");
    expect(await w.next()).toMatchObject({ type: "connected" });
    expect(relay.offered[0]).toEqual([GZIP_DELTA_PROTOCOL]);
    const socket = relay.sockets.at(-1)!;
    const pod = (rv: number) => ({ kind: "Pod", metadata: { name: "p", namespace: "n", resourceVersion: String(rv) } });
    const lines = (...rvs: number[]) => rvs.map((rv) => `${JSON.stringify({ type: "MODIFIED", object: pod(rv) })}\n`).join("");
    const gzip = (text: string) => gzipSync(text);
    // A Blob takes longest to read: the text message after it still comes after its events.
    socket.binary(new Blob([gzip(lines(11, 12))]));
    socket.binary(new Uint8Array(gzip(lines(13))).buffer);
    socket.line(lines(14).trimEnd());
    socket.binary(gzip(lines(15)));
    const rvs = [];
    for (let i = 0; i < 5; i++) rvs.push((await w.next()) as { object: KubeObject });
    expect(rvs.map((u) => u.object.metadata?.resourceVersion)).toEqual(["11", "12", "13", "14", "15"]);
    // Acknowledged as the text the messages held (the last message counts once the consumer asks past it).
    await expect.poll(() => socket.sent.length, { timeout: 2000 }).toBeGreaterThan(0);
    expect(JSON.parse(socket.sent.at(-1)!)).toEqual({ type: "ACK", received: lines(11, 12).length + lines(13).length + lines(14).length });
    socket.binary(new TextEncoder().encode("not gzip"));
    expect(await w.next()).toMatchObject({ type: "closed", code: 1007, reason: expect.stringContaining("not gzip") });
    expect(socket.closedWith).toBe(1007);
    w.stop();
  });

  it("offers the uncompressed framing when asked not to compress", async () => {
    const relay = new ScriptedRelay();
    relay.lists.push(list(10));
    const w = start(relay, { compressed: false });
    await w.next();
    await w.next();
    expect(relay.offered[0]).toEqual([DELTA_PROTOCOL]);
    w.stop();
  });
});
