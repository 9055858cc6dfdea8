import { env } from "cloudflare:workers";
import { createExecutionContext, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { SLICE } from "../../src/hub/fanout.ts";
import { PROBE_LABEL } from "../../src/hub/probe.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { httpWatch, nameOf, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim();
describe("one upstream watch per key", () => {
  it("50 WebSocket and 5 HTTP subscribers share exactly one upstream watch and all get every event", async () => {
    const ns = uniqueNamespace();
    await sim.createPod(ns, "seed-0");
    await sim.createPod(ns, "seed-1");
    const ws = await Promise.all(Array.from({ length: 50 }, () => wsWatch(`${podsPath(ns)}?watch=1`)));
    const http = await Promise.all(Array.from({ length: 5 }, () => httpWatch(`${podsPath(ns)}?watch=true`)));
    const all = [...ws, ...http];
    for (const s of all)
      expect((await s.events.take(2)).map((e) => [e.type, nameOf(e)])).toEqual([
        ["ADDED", "seed-0"],
        ["ADDED", "seed-1"],
      ]);

    const created = await sim.createPod(ns, "live-0");
    for (const s of all) {
      const event = await s.events.next();
      expect([event.type, nameOf(event), rvOf(event)]).toEqual(["ADDED", "live-0", rvOf(created)]);
    }
    expect(await sim.watchesOn(podsPath(ns))).toHaveLength(1);
    const lists = (await sim.requests(podsPath(ns))).requests.filter((r) => r.verb === "list");
    expect(lists).toHaveLength(1);
    // Serialised once: every subscriber got the same bytes.
    expect(new Set(all.map((s) => s.raw.at(-1)!.trim())).size).toBe(1);
    all.forEach((s) => s.close());
  });

  it("equivalent selectors share a hub; different selectors get their own", async () => {
    const ns = uniqueNamespace();
    await sim.createPod(ns, "p", { a: "1", b: "2" });
    const subs = await Promise.all(["a=1,b=2", "b=2, a=1", "b==2,a in (1)", "a=1"].map((s) => wsWatch(`${podsPath(ns)}?watch=1&labelSelector=${encodeURIComponent(s)}`)));
    for (const s of subs) expect(nameOf(await s.events.next())).toBe("p");
    const watches = await sim.watchesOn(podsPath(ns));
    expect(watches.map((w) => w.labelSelector).sort()).toEqual(["a=1", "a=1,b=2"]);
    subs.forEach((s) => s.close());
  });
});

describe("resume by resourceVersion", () => {
  it("a subscriber that reconnects with its last resourceVersion gets exactly the 20 events it missed, and the upstream sees nothing", async () => {
    const ns = uniqueNamespace();
    for (let i = 0; i < 3; i++) await sim.createPod(ns, `p${i}`, { tier: "web" });
    const first = await wsWatch(`${podsPath(ns)}?watch=1`);
    await first.events.take(3);
    const marker = await sim.createPod(ns, "marker");
    const seen = await first.events.next();
    expect(nameOf(seen)).toBe("marker");
    first.close();
    const lastRv = rvOf(seen);
    expect(lastRv).toBe(rvOf(marker));
    const before = await sim.requests(podsPath(ns));

    // 20 changes while it is away: creates, updates and deletes.
    const expected: Array<[string, string]> = [];
    for (let i = 0; i < 8; i++) {
      await sim.createPod(ns, `new${i}`);
      expected.push(["ADDED", `new${i}`]);
    }
    for (let i = 0; i < 3; i++) {
      await sim.patchPod(ns, `p${i}`, { metadata: { labels: { round: String(i) } } });
      expected.push(["MODIFIED", `p${i}`]);
    }
    for (let i = 0; i < 8; i++) {
      await sim.deletePod(ns, `new${i}`);
      expected.push(["DELETED", `new${i}`]);
    }
    await sim.patchPod(ns, "marker", { metadata: { labels: { done: "yes" } } });
    expected.push(["MODIFIED", "marker"]);

    const again = await wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${lastRv}`);
    const missed = await again.events.take(20);
    expect(missed.map((e) => [e.type, nameOf(e)])).toEqual(expected);
    const rvs = missed.map(rvOf);
    expect(rvs[0]!).toBeGreaterThan(lastRv);
    for (let i = 1; i < rvs.length; i++) expect(rvs[i]!).toBeGreaterThan(rvs[i - 1]!);
    // Nothing else was sent: the next event is the next change.
    await sim.createPod(ns, "after");
    expect(nameOf(await again.events.next())).toBe("after");
    expect(again.events.size).toBe(0);

    const after = await sim.requests(podsPath(ns), before.next);
    expect(after.requests.filter((r) => r.verb === "list" || r.verb === "watch")).toEqual([]);
    again.close();
  });

  it("a storm: 60 per-event WebSocket and 10 HTTP subscribers resume at once and each gets exactly the 300 events it missed, in order, one message per event, with no upstream request", async () => {
    const ns = uniqueNamespace();
    await sim.createPod(ns, "seed");
    const open = () => [...Array.from({ length: 60 }, () => wsWatch(`${podsPath(ns)}?watch=1`)), ...Array.from({ length: 10 }, () => httpWatch(`${podsPath(ns)}?watch=1`))];
    const live = await Promise.all(open());
    for (const s of live) expect(nameOf(await s.events.next())).toBe("seed");
    const marker = await sim.createPod(ns, "marker");
    for (const s of live) expect(rvOf(await s.events.next())).toBe(rvOf(marker));
    live.forEach((s) => s.close());
    const before = await sim.requests(podsPath(ns));

    // 300 changes while they are away (the tests' window holds 500): more than one turn's
    // messages for the fan-out, and, about 2 KB each, more than one shared slice.
    const labels = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`label-${i}`, "v".repeat(60)]));
    const expected: Array<[string, string, number]> = [];
    for (let i = 0; i < 100; i++) {
      const pod = await sim.createPod(ns, `p${i}`, labels);
      expected.push(["ADDED", `p${i}`, rvOf(pod)]);
    }
    for (let i = 0; i < 100; i++) {
      const pod = await sim.patchPod(ns, `p${i}`, { metadata: { labels: { round: "1" } } });
      expected.push(["MODIFIED", `p${i}`, rvOf(pod)]);
    }
    for (let i = 0; i < 100; i++) {
      await sim.deletePod(ns, `p${i}`);
      expected.push(["DELETED", `p${i}`, 0]);
    }

    const resumed = await Promise.all([
      ...Array.from({ length: 60 }, () => wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${rvOf(marker)}`)),
      ...Array.from({ length: 10 }, () => httpWatch(`${podsPath(ns)}?watch=1&resourceVersion=${rvOf(marker)}`)),
    ]);
    let first: number[] | undefined;
    for (const s of resumed) {
      const missed = await s.events.take(300);
      expect(missed.map((e, i) => [e.type, nameOf(e), expected[i]![2] === 0 ? 0 : rvOf(e)])).toEqual(expected);
      const rvs = missed.map(rvOf);
      for (let i = 1; i < rvs.length; i++) expect(rvs[i]!).toBeGreaterThan(rvs[i - 1]!);
      // Every subscriber got the same versions (a deletion's included).
      first ??= rvs;
      expect(rvs).toEqual(first);
    }
    // One WebSocket message per event: the API server's framing, not batches.
    for (const s of resumed.slice(0, 60)) expect(s.raw).toHaveLength(300);
    // More than one shared slice of the window was sent.
    expect(resumed[0]!.raw.reduce((n, r) => n + r.length, 0)).toBeGreaterThan(SLICE);
    // Nothing else was sent: the next event is the next change.
    const after = await sim.createPod(ns, "after");
    for (const s of resumed) {
      expect(rvOf(await s.events.next())).toBe(rvOf(after));
      expect(s.events.size).toBe(0);
    }
    const requests = await sim.requests(podsPath(ns), before.next);
    expect(requests.requests.filter((r) => r.verb === "list" || r.verb === "watch")).toEqual([]);
    resumed.forEach((s) => s.close());
  });

  it("a resourceVersion older than the window gets ERROR 410 Expired, then the end of the stream", async () => {
    const ns = uniqueNamespace();
    const pod = await sim.createPod(ns, "churning");
    const watcher = await httpWatch(`${podsPath(ns)}?watch=1`);
    await watcher.events.next();
    const oldRv = rvOf(pod);
    // WINDOW_EVENTS is 500 in tests: push 510 changes through the hub.
    for (let i = 0; i < 510; i++) await sim.patchPod(ns, "churning", { metadata: { labels: { i: String(i) } } });
    await watcher.events.take(510);
    watcher.close();

    for (const open of [httpWatch, wsWatch]) {
      const stale = await open(`${podsPath(ns)}?watch=1&resourceVersion=${oldRv}`);
      const event = await stale.events.next();
      expect(event.type).toBe("ERROR");
      expect(event.object).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410 });
      expect((event.object as { message: string }).message).toMatch(new RegExp(`^too old resource version: ${oldRv} \\(\\d+\\)$`));
      await stale.events.closed();
    }
  });
});

describe("list snapshot", () => {
  it("equals the API server's own list, and a second list costs the upstream no list: one small watch-list saying the hub's watch has what the upstream had", async () => {
    const ns = uniqueNamespace();
    for (let i = 0; i < 5; i++) await sim.createPod(ns, `p${i}`, { i: String(i) });
    const fromRelay = (await (await relay(podsPath(ns))).json()) as { kind: string; apiVersion: string; metadata: { resourceVersion: string }; items: KubeObject[] };
    const fromSim = await sim.list(podsPath(ns));
    expect(fromRelay.kind).toBe("PodList");
    expect(fromRelay.apiVersion).toBe("v1");
    const strip = (o: KubeObject) => ({ ...o, kind: undefined, apiVersion: undefined });
    expect(fromRelay.items.map(strip)).toEqual(fromSim.items.map(strip));
    expect(Number(fromRelay.metadata.resourceVersion)).toBeGreaterThanOrEqual(Math.max(...fromSim.items.map(rvOf)));

    const before = await sim.requests(podsPath(ns));
    const again = await relay(podsPath(ns));
    expect(again.status).toBe(200);
    expect(((await again.json()) as { items: unknown[] }).items).toHaveLength(5);
    const asked = (await sim.requests(podsPath(ns), before.next)).requests.map((r) => [r.verb, Object.fromEntries(new URLSearchParams(r.query))]);
    expect(asked).toEqual([["watch", expect.objectContaining({ sendInitialEvents: "true", labelSelector: `!${PROBE_LABEL},${PROBE_LABEL}` })]]);
  });

  it("serves a single object, and the API server's NotFound for one that is not there", async () => {
    const ns = uniqueNamespace();
    const pod = await sim.createPod(ns, "solo");
    const response = await relay(`${podsPath(ns)}/solo`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ kind: "Pod", metadata: { name: "solo", uid: pod.metadata!.uid } });
    const missing = await relay(`${podsPath(ns)}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: 'pods "nope" not found' });
  });
});

describe("bad input never reaches a hub", () => {
  it.each([
    ["GET", "/debug/pprof", 404, "NotFound"],
    ["GET", "/api/v1/namespaces/x/pods?labelSelector=app%3Amonolith", 400, "BadRequest"],
    ["GET", "/api/v1/pods?fieldSelector=spec.foo%3Dbar", 400, "BadRequest"],
    ["GET", "/api/v1/pods?watch=1&resourceVersion=abc", 400, "BadRequest"],
    ["GET", "/api/v1/pods?watch=1&sendInitialEvents=true", 422, "Invalid"],
    ["POST", "/api/v1/namespaces/x/pods", 405, "MethodNotAllowed"],
    ["DELETE", "/api/v1/namespaces/x/pods/y", 405, "MethodNotAllowed"],
    ["GET", "/api/v1/namespaces/x/nodes", 404, "NotFound"],
    ["GET", "/clusters/nope/api/v1/pods", 404, "NotFound"],
  ])("%s %s → %i %s", async (method, path, code, reason) => {
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const response = await relay(path, { method });
    expect(response.status).toBe(code);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", reason, code });
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });

  it("an upstream that is down gives a 503 Status, not a hang", async () => {
    const response = await relay("/clusters/down/api/v1/pods");
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "ServiceUnavailable", code: 503 });
    expect(response.headers.get("retry-after")).toBe("5");
  });
});

describe("stats", () => {
  it("reports a key's subscribers and upstream watch", async () => {
    const ns = uniqueNamespace();
    await sim.createPod(ns, "p");
    // No hub for the key yet: every field all the same, at zero.
    const idle = await (await relay(`/_relay/stats${podsPath(ns)}`)).json();
    expect(idle).toEqual({
      key: `default:${podsPath(ns)}`,
      subscribers: 0,
      views: 0,
      upstream: "stopped",
      watching: false,
      resourceVersion: 0,
      windowStart: 0,
      windowEvents: 0,
      objects: 0,
      storageBytes: 0,
      memoryBytes: 0,
      rowsWritten: 0,
      eventsCommitted: 0,
      sent: { websocket: { events: 0, messages: 0 }, http: { events: 0, messages: 0 } },
      listsGzip: { compressed: 0, shared: 0 },
      replicas: [],
    });
    const a = await wsWatch(`${podsPath(ns)}?watch=1`);
    const b = await httpWatch(`${podsPath(ns)}?watch=1`);
    await a.events.next();
    await b.events.next();
    const busy = await (await relay(`/_relay/stats${podsPath(ns)}`)).json();
    expect(busy).toMatchObject({ key: `default:${podsPath(ns)}`, subscribers: 2, watching: true, objects: 1 });
    a.close();
    b.close();
  });
});

describe("oversized and unconfigured", () => {
  it.each([
    ["a URL over 8 KiB", 431, `/api/v1/pods?x=${"a".repeat(9000)}`, {}],
    ["headers over 16 KiB", 431, "/api/v1/pods", { "x-filler": "b".repeat(17_000) }],
    ["a selector over 4 KiB", 400, `/api/v1/pods?labelSelector=a%20in%20(${"v,".repeat(2100)}v)`, {}],
  ])("%s → %i before any work", async (_, code, path, headers) => {
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const response = await relay(path, { headers });
    expect(response.status).toBe(code);
    expect(await response.json()).toMatchObject({ kind: "Status", code });
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });

  it("without AUTH_MODE the relay serves nothing and says what to configure", async () => {
    const unconfigured = { ...env, AUTH_MODE: undefined };
    const response = await createApp().fetch(new Request("http://relay.test/api/v1/pods"), unconfigured, createExecutionContext());
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "ServiceUnavailable", message: expect.stringContaining("AUTH_MODE") });
  });
});

describe("batched WebSocket messages (opt-in)", () => {
  it("a client offering the batch subprotocol gets the events that were ready together in one message; others one per message", async () => {
    const ns = uniqueNamespace("batch");
    const first = await sim.createPod(ns, "p");
    const hubOpen = await wsWatch(`${podsPath(ns)}?watch=1`);
    await hubOpen.events.next();
    for (let i = 0; i < 20; i++) await sim.patchPod(ns, "p", { metadata: { labels: { i: String(i) } } });
    await hubOpen.events.take(20); // the hub has them all: a resume is a pure replay
    const path = `${podsPath(ns)}?watch=1&resourceVersion=${rvOf(first)}`;
    const batched = await wsWatch(path, { "sec-websocket-protocol": BATCH_PROTOCOL });
    const plain = await wsWatch(path);
    const [fromBatched, fromPlain] = await Promise.all([batched.events.take(20), plain.events.take(20)]);
    expect(fromBatched).toEqual(fromPlain);
    expect(plain.raw).toHaveLength(20); // one event per message, as the API server sends them
    expect(batched.raw.length).toBeLessThan(20); // the replay was ready at once: one message holds many
    expect(batched.raw.every((m) => m.endsWith("\n"))).toBe(true);
    [hubOpen, batched, plain].forEach((s) => s.close());
  });

  it("a burst the upstream writes a chunk per event, as an API server streams it, reaches batched subscribers in a few messages, not one per event", async () => {
    const ns = uniqueNamespace("burst");
    const pods = 150;
    for (let i = 0; i < pods; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => sim.createPod(ns, `p-${i + j}`)));
    // 100 subscribers: the hub gathers 5 ms a commit (1 ms per 20), up to 4 times that for a burst still coming.
    const subscribers = await Promise.all(Array.from({ length: 100 }, () => wsWatch(`${podsPath(ns)}?watch=1`, { "sec-websocket-protocol": BATCH_PROTOCOL })));
    for (const s of subscribers) await s.events.take(pods);
    const before = subscribers.map((s) => s.raw.length);
    await sim.configure({ chunkPerEvent: true });
    try {
      // Every pod of the namespace goes at once: the simulator sends each DELETED in a write of its own.
      await sim.deleteNamespace(ns);
      for (const s of subscribers) expect(new Set((await s.events.take(pods)).map((e) => e.type))).toEqual(new Set(["DELETED"]));
    } finally {
      await sim.configure({ chunkPerEvent: false });
    }
    const messages = subscribers.map((s, i) => s.raw.length - (before[i] ?? 0));
    expect(Math.max(...messages)).toBeLessThanOrEqual(3);
    for (const s of subscribers) s.close();
  });
});
