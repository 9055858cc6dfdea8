/**
 * @module
 * Fault injection and the rest of the /_sim/ control API: each fault does what it says; restart keeps state and port; reset.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clockResourceVersion, startSimulator, type Simulator } from "../../src/sim/index.ts";
import { openWatch, type WatchReader } from "../kit/lines.ts";
import { eventually, within } from "../kit/wait.ts";
import { podManifest, request, sendJson } from "./helpers.ts";

let sim: Simulator;
const open: WatchReader[] = [];
beforeAll(async () => {
  sim = await startSimulator({ seed: 5 });
});
beforeEach(() => {
  for (const w of open.splice(0)) w.close();
  sim.reset();
});
afterAll(async () => {
  for (const w of open) w.close();
  await sim.close();
});

const fault = (body: unknown) => sendJson(`${sim.url}/_sim/faults`, "POST", body);

async function watchPods(ns: string, query = ""): Promise<WatchReader> {
  const reader = await openWatch(`${sim.url}/api/v1/namespaces/${ns}/pods?watch=1&resourceVersion=${sim.resourceVersion}${query}`);
  open.push(reader);
  return reader;
}

describe("faults", () => {
  it("dropWatches cuts each open stream in the middle of an event line", async () => {
    const a = await watchPods("default");
    const b = await watchPods("team-a");
    sim.create("pods", podManifest("default", "before-drop"));
    expect((await a.next()).object.metadata.name).toBe("before-drop");
    expect((await fault({ dropWatches: true })).status).toBe(200);
    for (const w of [a, b]) {
      const end = await w.ended;
      expect(end.error).toBeDefined();
      expect(end.pending).toBeGreaterThan(0);
    }
    expect(sim.stats().activeWatches).toEqual([]);
  });

  it("stallWatches silences open streams (no events, no bookmarks) but keeps them open", async () => {
    sim.configure({ bookmarkIntervalMs: 20 });
    const stalled = await watchPods("default", "&allowWatchBookmarks=true");
    await fault({ stallWatches: true });
    const fresh = await watchPods("default");
    sim.create("pods", podManifest("default", "during-stall"));
    expect((await fresh.next()).object.metadata.name).toBe("during-stall");
    // Both streams were offered the event in the same store commit; a round trip later, the stalled one still has nothing.
    await request(`${sim.url}/_sim/stats`);
    expect(stalled.lines).toEqual([]);
    expect(sim.stats().activeWatches).toHaveLength(2);
  });

  it("expireWatches ends each open stream with ERROR 410 Expired", async () => {
    const w = await watchPods("team-b");
    await fault({ expireWatches: true });
    const event = await w.next();
    expect(event.type).toBe("ERROR");
    expect(event.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect((await w.ended).error).toBeUndefined();
  });

  it("failRequests fails the next N matching requests with a Status and Retry-After", async () => {
    await fault({ failRequests: { count: 2, status: 503, retryAfterSeconds: 3, verbs: ["list"] } });
    const first = await request(`${sim.url}/api/v1/pods`);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("3");
    expect(first.body).toMatchObject({ kind: "Status", reason: "ServiceUnavailable", code: 503 });
    const get = await request(`${sim.url}/api/v1/namespaces/default`);
    expect(get.status).toBe(200);
    expect((await request(`${sim.url}/api/v1/pods`)).status).toBe(503);
    expect((await request(`${sim.url}/api/v1/pods`)).status).toBe(200);

    await fault({ failRequests: { count: 1, status: 429 } });
    const throttled = await request(`${sim.url}/api/v1/pods?watch=1`);
    expect(throttled.status).toBe(429);
    expect(throttled.body.reason).toBe("TooManyRequests");
    expect(throttled.headers.get("retry-after")).toBeNull();
    await fault({ failRequests: { count: 1, status: 500, verbs: ["watch"] } });
    const broken = await request(`${sim.url}/api/v1/pods?watch=1`);
    expect(broken.status).toBe(500);
    expect(broken.body.reason).toBe("InternalError");
    const log = sim.requests({ path: "/api/v1/pods" }).requests.map((r) => [r.verb, r.status]);
    expect(log).toEqual([
      ["list", 503],
      ["list", 503],
      ["list", 200],
      ["watch", 429],
      ["watch", 500],
    ]);
  });

  it("delayRequests holds the next N matching requests before serving them", async () => {
    expect((await fault({ delayRequests: { count: 1, ms: -1 } })).status).toBe(400);
    await fault({ delayRequests: { count: 1, ms: 1000, verbs: ["list"], path: "/api/v1/namespaces/team-a/pods" } });
    const done: string[] = [];
    const answered = (what: string) => (res: { status: number }) => void done.push(`${what} ${res.status}`);
    // The held list was asked first, and answered last.
    await Promise.all([request(`${sim.url}/api/v1/namespaces/team-a/pods`).then(answered("held")), request(`${sim.url}/api/v1/namespaces/team-b/pods`).then(answered("other"))]);
    expect(done).toEqual(["other 200", "held 200"]);
  });

  it("hostileLogs answers the next N log reads with one line that never ends, whatever limitBytes asked, held open until the client leaves", async () => {
    expect((await fault({ hostileLogs: { count: 1, bytes: -1 } })).status).toBe(400);
    const path = "/api/v1/namespaces/default/pods/anything/log";
    await fault({ hostileLogs: { count: 1, bytes: 200_000, path } });
    const abort = new AbortController();
    const response = await fetch(`${sim.url}${path}?limitBytes=10`, { signal: abort.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let got = 0;
    while (got < 200_000) got += ((await reader.read()).value as Uint8Array).length;
    expect(got).toBe(200_000);
    const held = () => sim.requests({ path }).requests.at(-1)?.open;
    expect(held()).toBe(true);
    abort.abort();
    await eventually(() => held() === false, "the simulator to see the client leave");
    // Used up: the next read is the API server's own answer (no such pod).
    expect((await fetch(`${sim.url}${path}`)).status).toBe(404);
  });

  it("malformedLines precedes the next N events with a line that is not JSON", async () => {
    const w = await watchPods("team-c");
    await fault({ malformedLines: 1 });
    sim.create("pods", podManifest("team-c", "one"));
    sim.create("pods", podManifest("team-c", "two"));
    const garbage = await w.nextLine();
    expect(garbage).toBe('{"type":"MODIFIED","object":{"kind":');
    expect(() => JSON.parse(garbage)).toThrow();
    expect((await w.next()).object.metadata.name).toBe("one");
    expect((await w.next()).object.metadata.name).toBe("two");
    expect(w.lines).toHaveLength(3);
  });

  it("compact drops history up to the given resourceVersion", async () => {
    const base = Number(sim.resourceVersion);
    for (let i = 0; i < 4; i++) sim.create("pods", podManifest("default", `c-${i}`));
    await fault({ compact: { resourceVersion: String(base + 2) } });
    const tooOld = await openWatch(`${sim.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=${base + 1}`);
    open.push(tooOld);
    expect((await tooOld.next()).object).toMatchObject({ code: 410, message: `too old resource version: ${base + 1} (${base + 2})` });
    const fine = await openWatch(`${sim.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=${base + 2}`);
    open.push(fine);
    expect((await fine.next()).object.metadata.name).toBe("c-2");
    const ahead = await fault({ compact: { resourceVersion: String(base + 99) } });
    expect(ahead.status).toBe(400);
  });

  it("restart closes every connection, keeps state and resourceVersion, and listens on the same port", async () => {
    const w = await watchPods("default");
    sim.create("pods", podManifest("default", "survives-restart"));
    const rv = sim.resourceVersion;
    const port = sim.port;
    const res = await fault({ restart: { downtimeMs: 150 } });
    expect(res.body).toEqual({ applied: ["restart"] });
    const end = await w.ended;
    expect(end.pending).toBe(0);
    // The stream ended, so the restart is under way: wait for its listener.
    await within(sim.listening(), "the simulator to listen again after its restart", 3_000);
    const stats = (await request(`${sim.url}/_sim/stats`)).body;
    expect(sim.port).toBe(port);
    expect(stats.resourceVersion).toBe(rv);
    expect((await request(`${sim.url}/api/v1/namespaces/default/pods/survives-restart`)).status).toBe(200);
    sim.create("pods", podManifest("default", "after-restart"));
    expect(Number(sim.resourceVersion)).toBe(Number(rv) + 1);
  });

  it("rejects unknown fault fields with a message that names them", async () => {
    const res = await fault({ dropWatch: true });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('unknown field "dropWatch"');
  });
});

describe("control API", () => {
  it("reports stats and a request log that excludes /_sim/", async () => {
    await request(`${sim.url}/api`);
    await request(`${sim.url}/api/v1/namespaces/default/pods?limit=5`);
    await request(`${sim.url}/api/v1/namespaces/default/pods/nope`);
    await sendJson(`${sim.url}/api/v1/namespaces/default/configmaps`, "POST", { metadata: { name: "logged" } });
    const stats = (await request(`${sim.url}/_sim/stats`)).body;
    expect(stats.counts).toEqual({ list: 1, watch: 0, get: 1, write: 1, discovery: 1 });
    expect(stats.resourceVersion).toBe(sim.resourceVersion);
    const log = (await request(`${sim.url}/_sim/requests?since=2&path=/api/v1/namespaces/default/pods`)).body;
    expect(log.next).toBe(5);
    expect(log.requests).toEqual([
      { seq: 2, method: "GET", verb: "list", path: "/api/v1/namespaces/default/pods", query: "limit=5", status: 200, open: false },
      { seq: 3, method: "GET", verb: "get", path: "/api/v1/namespaces/default/pods/nope", query: "", status: 404, open: false },
    ]);
  });

  it("starts, retunes and stops churn, and changes config", async () => {
    const started = await sendJson(`${sim.url}/_sim/churn`, "POST", { ratePerSec: 50, namespaces: ["team-a"] });
    expect(started.body).toEqual({ ratePerSec: 50, namespaces: ["team-a"], events: false });
    const w = await watchPods("team-a");
    await w.next();
    expect((await sendJson(`${sim.url}/_sim/churn`, "POST", { ratePerSec: 0 })).body.ratePerSec).toBe(0);
    expect((await sendJson(`${sim.url}/_sim/churn`, "POST", { ratePerSec: -1 })).status).toBe(400);
    const config = await sendJson(`${sim.url}/_sim/config`, "POST", { bookmarkIntervalMs: 1000, historyLimit: 50 });
    expect(config.body).toEqual({
      bookmarkIntervalMs: 1000,
      historyLimit: 50,
      selfSubjectReviews: true,
      openapi: false,
      watchList: true,
      clientCertificateUser: null,
      listDelayMs: 0,
      watchDelayMs: 0,
      chunkPerEvent: false,
    });
    expect((await sendJson(`${sim.url}/_sim/config`, "POST", { historyLimit: 0 })).status).toBe(400);
  });

  it("historyLimit bounds resumable history", async () => {
    sim.configure({ historyLimit: 5 });
    const base = Number(sim.resourceVersion);
    for (let i = 0; i < 10; i++) sim.create("configmaps", { metadata: { name: `h-${i}`, namespace: "default" } });
    const w = await openWatch(`${sim.url}/api/v1/configmaps?watch=1&resourceVersion=${base}`);
    open.push(w);
    expect((await w.next()).object).toMatchObject({ code: 410, message: `too old resource version: ${base} (${base + 5})` });
  });

  it("reset restores the seeded state and clears counters, faults and churn", async () => {
    const seeded = sim.list("pods").map((p) => p.metadata?.name);
    sim.churn({ ratePerSec: 100 });
    sim.churnStep(50);
    await fault({ failRequests: { count: 5, status: 500 } });
    const w = await watchPods("default");
    const reset = await request(`${sim.url}/_sim/reset`, { method: "POST" });
    expect(reset.status).toBe(200);
    await w.ended;
    expect(sim.list("pods").map((p) => p.metadata?.name)).toEqual(seeded);
    expect(sim.stats().churn.ratePerSec).toBe(0);
    expect(sim.stats().counts).toEqual({ list: 0, watch: 0, get: 0, write: 0, discovery: 0 });
    expect((await request(`${sim.url}/api/v1/pods`)).status).toBe(200);
  });

  it("reset to an older resourceVersion is an etcd restored from backup: revisions start again after it", async () => {
    const backup = Number(sim.resourceVersion);
    sim.churnStep(300);
    const before = Number(sim.resourceVersion);
    const w = await watchPods("default");
    const reset = await sendJson(`${sim.url}/_sim/reset`, "POST", { resourceVersion: String(backup) });
    expect(reset.status).toBe(200);
    await w.ended;
    // The seeded objects again, written after `backup`: the history a client at `before` held is gone.
    expect(Number(sim.resourceVersion)).toBeGreaterThan(backup);
    expect(Number(sim.resourceVersion)).toBeLessThan(before);
    expect((await sendJson(`${sim.url}/_sim/reset`, "POST", { resourceVersion: "soon" })).status).toBe(400);
  });
});

describe("a simulator that restarts from the clock", () => {
  it("goes on past every revision the one before it wrote", async () => {
    const first = await startSimulator({ initial: { namespaces: ["a"], podsPerNamespace: 20, nodes: 1, deployments: 0 }, initialResourceVersion: clockResourceVersion() });
    for (let i = 0; i < 200; i++) first.patch("pods", "a", first.list("pods", "a")[0]!.metadata!.name!, { metadata: { labels: { i: String(i) } } });
    const reached = Number(first.resourceVersion);
    await first.close();
    const second = await startSimulator({ initial: { namespaces: ["a"], podsPerNamespace: 20, nodes: 1, deployments: 0 }, initialResourceVersion: clockResourceVersion() });
    expect(Number(second.resourceVersion)).toBeGreaterThan(reached);
    await second.close();
  });
});
