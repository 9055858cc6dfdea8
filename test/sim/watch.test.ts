/**
 * @module
 * WATCH: replay from a resourceVersion, 410 for too-old ones, selector transitions, bookmarks, sendInitialEvents, timeouts, Tables.
 */
import { once } from "node:events";
import { get, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WatchEvent } from "../../src/k8s/types.ts";
import { startSimulator, WRITTEN_AT, type Simulator } from "../../src/sim/index.ts";
import { LineReader, openWatch, type WatchReader } from "../kit/lines.ts";
import { podManifest, request } from "./helpers.ts";

let sim: Simulator;
const open: WatchReader[] = [];
beforeAll(async () => {
  sim = await startSimulator({ seed: 3, bookmarkIntervalMs: 40 });
});
afterAll(async () => {
  for (const w of open) w.close();
  await sim.close();
});

async function watch(path: string, headers: Record<string, string> = {}): Promise<WatchReader> {
  const reader = await openWatch(`${sim.url}${path}`, headers);
  open.push(reader);
  return reader;
}

describe("watch", () => {
  it("streams chunked JSON with the API server's headers", async () => {
    const w = await watch(`/api/v1/namespaces/default/pods?watch=1&resourceVersion=${sim.resourceVersion}`);
    expect(w.status).toBe(200);
    expect(w.headers.get("content-type")).toBe("application/json");
    expect(w.headers.get("cache-control")).toBe("no-cache, private");
    expect(w.headers.get("transfer-encoding")).toBe("chunked");
    w.close();
  });

  it("from resourceVersion N sends exactly the events after N, in order, with kind and apiVersion", async () => {
    const n = Number(sim.resourceVersion);
    sim.create("pods", podManifest("default", "resume-a", { app: "resume" }));
    sim.patch("pods", "default", "resume-a", { metadata: { labels: { tier: "x" } } });
    sim.create("pods", podManifest("team-a", "elsewhere"));
    sim.delete("pods", "default", "resume-a");
    const w = await watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${n}`);
    const events = [await w.next(), await w.next(), await w.next()];
    expect(events.map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.resourceVersion])).toEqual([
      ["ADDED", "resume-a", String(n + 1)],
      ["MODIFIED", "resume-a", String(n + 2)],
      ["DELETED", "resume-a", String(n + 4)],
    ]);
    for (const e of events) expect([e.object.kind, e.object.apiVersion]).toEqual(["Pod", "v1"]);
    // DELETED carries the last state (the label from the patch) at the deletion RV.
    expect(events[2]!.object.metadata?.labels).toEqual({ app: "resume", tier: "x" });
    expect(events[2]!.object.metadata?.annotations?.[WRITTEN_AT]).toMatch(/^\d+$/);
    sim.create("pods", podManifest("default", "resume-live"));
    const live = await w.next();
    expect([live.type, live.object.metadata?.name]).toEqual(["ADDED", "resume-live"]);
    expect(w.unread).toBe(0);
  });

  it("answers a resourceVersion older than the history with 200 and one ERROR 410, then closes", async () => {
    const old = Number(sim.resourceVersion);
    sim.create("pods", podManifest("default", "after-old"));
    await sim.faults({ compact: true });
    const oldest = Number(sim.resourceVersion);
    const w = await watch(`/api/v1/namespaces/default/pods?watch=1&resourceVersion=${old - 1}`);
    expect(w.status).toBe(200);
    expect(await w.nextLine()).toBe(
      `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: ${old - 1} (${oldest})","reason":"Expired","code":410}}`,
    );
    expect(await w.ended).toEqual({ error: undefined, pending: 0 });
  });

  it("turns selector exits into DELETED (old object, new RV) and entries into ADDED", async () => {
    sim.create("pods", podManifest("team-b", "mover", { track: "stable" }));
    const w = await watch(`/api/v1/namespaces/team-b/pods?watch=1&labelSelector=track%3Dcanary&resourceVersion=${sim.resourceVersion}`);
    sim.patch("pods", "team-b", "mover", { metadata: { labels: { track: "canary" } } });
    const entered = await w.next();
    expect([entered.type, entered.object.metadata?.name, entered.object.metadata?.labels?.track]).toEqual(["ADDED", "mover", "canary"]);
    sim.patch("pods", "team-b", "mover", { metadata: { labels: { track: "stable" } } });
    const left = await w.next();
    expect(left.type).toBe("DELETED");
    expect(left.object.metadata?.labels?.track).toBe("canary");
    expect(left.object.metadata?.resourceVersion).toBe(sim.resourceVersion);
  });

  it("watches one object with fieldSelector=metadata.name and the legacy /watch/ path", async () => {
    const target = sim.list("pods", "team-c")[0]!.metadata!.name!;
    const w = await watch(`/api/v1/namespaces/team-c/pods?watch=1&fieldSelector=metadata.name%3D${target}`);
    const legacy = await watch(`/api/v1/watch/namespaces/team-c/pods/${target}`);
    for (const reader of [w, legacy]) {
      const first = await reader.next();
      expect([first.type, first.object.metadata?.name]).toEqual(["ADDED", target]);
    }
    sim.patch("pods", "team-c", target, { metadata: { annotations: { touched: "yes" } } });
    for (const reader of [w, legacy]) expect((await reader.next()).type).toBe("MODIFIED");
  });

  it("sends a BOOKMARK when the RV moved past what the watcher saw, in the 1.34 empty-object shape", async () => {
    const w = await watch(`/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${sim.resourceVersion}`);
    sim.create("configmaps", { metadata: { name: "moves-the-rv", namespace: "team-a" } });
    const line = await w.nextLine();
    expect(line).toBe(`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"${sim.resourceVersion}"},"spec":{"containers":null},"status":{}}}`);
    const deployments = await watch(`/apis/apps/v1/deployments?watch=1&allowWatchBookmarks=true&resourceVersion=${Number(sim.resourceVersion) - 1}`);
    expect(await deployments.nextLine()).toBe(`{"type":"BOOKMARK","object":{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"resourceVersion":"${sim.resourceVersion}"}}}`);
  });

  it("watchDelayMs holds each change and bookmark back from the watches, in order, while lists see the change at once (a watch cache behind etcd)", async () => {
    sim.configure({ watchDelayMs: 300 });
    try {
      const from = sim.resourceVersion;
      const w = await watch(`/api/v1/namespaces/team-b/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${from}`);
      const made = Date.now();
      sim.create("pods", podManifest("team-b", "late-1"));
      sim.create("pods", podManifest("team-b", "late-2"));
      const listed = await request(`${sim.url}/api/v1/namespaces/team-b/pods`);
      expect(listed.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(expect.arrayContaining(["late-1", "late-2"]));
      expect(w.lines).toEqual([]);
      const events = await w.until((e) => e.object.metadata?.name === "late-2");
      expect(Date.now() - made).toBeGreaterThanOrEqual(290);
      // Bookmarks (every 40 ms here) come as late as the changes, so none says the watch has what it has not been sent yet.
      const changes = events.filter((e) => e.type !== "BOOKMARK");
      expect(changes.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ["ADDED", "late-1"],
        ["ADDED", "late-2"],
      ]);
      const first = Number(changes[0]!.object.metadata.resourceVersion);
      for (const bookmark of events.slice(0, events.indexOf(changes[0]!))) expect(Number(bookmark.object.metadata.resourceVersion)).toBeLessThan(first);
    } finally {
      sim.configure({ watchDelayMs: 0 });
    }
  });

  it("chunkPerEvent sends each event of changes made together in a write of its own, a turn of the event loop apart; otherwise they leave in one write", async () => {
    // What reaches a raw socket, read by read: HTTP chunks of one write arrive in one read.
    const reads = async (changes: number): Promise<number[]> => {
      const socket = connect(Number(new URL(sim.url).port), "127.0.0.1");
      try {
        await once(socket, "connect");
        const path = `/api/v1/namespaces/team-b/pods?watch=1&resourceVersion=${sim.resourceVersion}`;
        socket.write(`GET ${path} HTTP/1.1\r\nhost: sim\r\n\r\n`);
        let text = "";
        const lines: number[] = [];
        let made = false;
        for await (const data of socket) {
          text += String(data);
          if (!made) {
            // The headers are sent once the watch is set up: now the changes, in one turn.
            if (!text.includes("\r\n\r\n")) continue;
            made = true;
            for (let i = 0; i < changes; i++) sim.create("pods", podManifest("team-b", `chunked-${changes}-${i}-${sim.resourceVersion}`));
            continue;
          }
          lines.push(String(data).split('{"type":').length - 1);
          if (lines.reduce((a, b) => a + b, 0) >= changes) break;
        }
        return lines;
      } finally {
        socket.destroy();
      }
    };
    expect(await reads(3)).toEqual([3]);
    sim.configure({ chunkPerEvent: true });
    try {
      expect(await reads(3)).toEqual([1, 1, 1]);
    } finally {
      sim.configure({ chunkPerEvent: false });
    }
  });

  it("under watchDelayMs a watch-list without resourceVersion waits for the watch cache to take etcd's revision as it arrived: its initial events and their end come after what was made before it; at resourceVersion=0, at once, as the cache is", async () => {
    sim.configure({ watchDelayMs: 300 });
    try {
      const made = Date.now();
      const created = sim.create("pods", podManifest("team-d", "before-the-list"));
      const consistent = await watch("/api/v1/namespaces/team-d/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
      const events = await consistent.until((e) => e.type === "BOOKMARK");
      expect(Date.now() - made).toBeGreaterThanOrEqual(290);
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ["ADDED", "before-the-list"],
        ["BOOKMARK", undefined],
      ]);
      expect(events.at(-1)!.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" });
      expect(Number(events.at(-1)!.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));

      const asked = Date.now();
      sim.create("pods", podManifest("team-d", "not-in-the-cache-yet"));
      const any = await watch("/api/v1/namespaces/team-d/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0");
      const anyEvents = await any.until((e) => e.type === "BOOKMARK");
      expect(Date.now() - asked).toBeLessThan(290);
      expect(anyEvents.map((e) => e.object.metadata.name)).toEqual(["before-the-list", undefined]);
    } finally {
      sim.configure({ watchDelayMs: 0 });
    }
  });

  it("sendInitialEvents: ADDED in key order, then the initial-events-end BOOKMARK, then live events", async () => {
    const expected = sim.list("pods", "team-a").map((p) => p.metadata?.name);
    const rv = sim.resourceVersion;
    const w = await watch("/api/v1/namespaces/team-a/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
    const events = await w.until((e) => e.type === "BOOKMARK");
    expect(events.slice(0, -1).map((e) => [e.type, e.object.metadata.name])).toEqual(expected.map((n) => ["ADDED", n]));
    expect(events.at(-1)!.object).toEqual({
      kind: "Pod",
      apiVersion: "v1",
      metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } },
      spec: { containers: null },
      status: {},
    });
    sim.create("pods", podManifest("team-a", "after-initial"));
    expect((await w.next()).object.metadata.name).toBe("after-initial");
  });

  it("defaults a watch without resourceVersion to initial events (1.34 WatchList defaulting)", async () => {
    const count = sim.list("pods", "team-c").length;
    const w = await watch("/api/v1/namespaces/team-c/pods?watch=1&allowWatchBookmarks=true");
    const events = await w.until((e) => e.type === "BOOKMARK");
    expect(events).toHaveLength(count + 1);
    expect(events.at(-1)!.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" });
    const noBookmarks = await watch("/api/v1/namespaces/team-c/pods?watch=1&resourceVersion=0");
    for (let i = 0; i < count; i++) expect((await noBookmarks.next()).type).toBe("ADDED");
    const latest = await watch("/api/v1/namespaces/team-c/pods?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan");
    sim.create("pods", podManifest("team-c", "only-live"));
    expect((await latest.next()).object.metadata.name).toBe("only-live");
  });

  it("validates watch options with 422", async () => {
    const res = await request(`${sim.url}/api/v1/pods?watch=1&sendInitialEvents=true`);
    expect(res.status).toBe(422);
    expect(res.body.message).toContain("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
    const rvm = await request(`${sim.url}/api/v1/pods?watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan`);
    expect(rvm.status).toBe(422);
    expect(rvm.body.message).toContain("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
  });

  it("ends the stream cleanly at timeoutSeconds", async () => {
    const started = Date.now();
    const rv = sim.resourceVersion;
    const w = await watch(`/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&resourceVersion=${rv}`);
    expect(sim.stats().activeWatches.filter((a) => a.resourceVersion === rv)).toHaveLength(1);
    expect(await w.ended).toEqual({ error: undefined, pending: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(sim.stats().activeWatches.filter((a) => a.resourceVersion === rv)).toHaveLength(0);
  });

  it("sendInitialEvents with a resourceVersion ahead of the store ends with ERROR 504 after waiting", async () => {
    const ahead = Number(sim.resourceVersion) + 100;
    const w = await watch(`/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${ahead}`);
    const error = await w.next();
    expect(error.type).toBe("ERROR");
    expect(error.object).toMatchObject({ code: 504, reason: "Timeout", details: { retryAfterSeconds: 1 } });
    await w.ended;
  });

  it("a watch from a resourceVersion ahead of the store (a client from before an etcd restore) is answered 504 Too large after waiting", async () => {
    const ahead = Number(sim.resourceVersion) + 100;
    const started = Date.now();
    const response = await request(`${sim.url}/api/v1/pods?watch=1&resourceVersion=${ahead}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(response.status).toBe(504);
    expect(response.body).toMatchObject({ code: 504, reason: "Timeout", details: { causes: [{ reason: "ResourceVersionTooLarge" }], retryAfterSeconds: 1 } });
  });

  it("encodes Table watch events with column definitions on the first event only", async () => {
    const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    const w = await watch(`/api/v1/namespaces/team-b/pods?watch=1&resourceVersion=${sim.resourceVersion}`, { Accept: accept });
    expect(w.headers.get("content-type")).toBe("application/json;as=Table;v=v1;g=meta.k8s.io");
    sim.create("pods", podManifest("team-b", "table-1"));
    sim.create("pods", podManifest("team-b", "table-2"));
    const [first, second] = [await w.next(), await w.next()];
    expect(first.object.kind).toBe("Table");
    expect((first.object as any).columnDefinitions).toHaveLength(9);
    expect((first.object as any).rows[0].cells[0]).toBe("table-1");
    expect((second.object as any).columnDefinitions).toBeNull();
  });

  it("replays a long history at the client's pace: little held for a client that is not reading, then every event in order", async () => {
    sim.churn({ ratePerSec: 0, namespaces: ["replay-pace"] });
    // The first operation also creates the namespace and its workloads; from then on, only pods change.
    sim.churnStep(1);
    const from = Number(sim.resourceVersion);
    // About 3 KB each: some 20 MB, far more than the connection's buffers take.
    sim.churnStep(7000);
    const to = Number(sim.resourceVersion);
    const request = get(`${sim.url}/api/v1/namespaces/replay-pace/pods?watch=1&resourceVersion=${from}`);
    const [res] = (await once(request, "response")) as [IncomingMessage];
    res.pause();
    const entry = () => sim.stats().activeWatches.find((a) => a.path === "/api/v1/namespaces/replay-pace/pods");
    expect(entry()?.bufferedBytes).toBeLessThan(1 << 20);
    const reader = new LineReader(res, () => request.destroy());
    const rv = (e: WatchEvent<any>) => Number(e.object.metadata.resourceVersion);
    const versions = (await reader.until((e) => rv(e) === to, `the event at ${to}`)).map(rv);
    reader.close();
    // Every revision after `from` is a change to this namespace's pods: each exactly once, in order.
    expect(versions).toEqual(Array.from({ length: to - from }, (_, i) => from + 1 + i));
  });

  it("lists open watches in stats with their collection path, selectors and resourceVersion", async () => {
    const w = await watch("/api/v1/namespaces/team-a/pods?watch=1&labelSelector=app%3Dweb&fieldSelector=status.phase%3DRunning&resourceVersion=0");
    const entry = sim.stats().activeWatches.find((a) => a.labelSelector === "app=web");
    expect(entry).toMatchObject({ path: "/api/v1/namespaces/team-a/pods", fieldSelector: "status.phase=Running", resourceVersion: "0" });
    w.close();
  });
});
