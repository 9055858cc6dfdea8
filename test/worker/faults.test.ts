/**
 * Upstream faults are absorbed (invariant 3): dropped, stalled and malformed streams, errors
 * with Retry-After, compaction and a restarting API server. Subscribers see every change once,
 * in order, and never have to relist because the upstream did.
 */
import { describe, expect, it } from "vitest";
import type { Status, WatchEvent } from "../../src/k8s/types.ts";
import { eventually, nameOf, relay, rvOf, Sim, uniqueNamespace, wsWatch, type Subscription } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const cluster = "faults";
const sim = new Sim(cluster);
const relayPath = (ns: string, query = "watch=1") => `/clusters/${cluster}${podsPath(ns)}?${query}`;

/** A namespace with pods, and a subscriber that has received their initial state. */
async function setup(names: string[] = ["a"]): Promise<{ ns: string; sub: Subscription }> {
  const ns = uniqueNamespace("f");
  for (const name of names) await sim.createPod(ns, name, { app: "x" });
  const sub = await wsWatch(relayPath(ns));
  await sub.events.take(names.length);
  return { ns, sub };
}

/** Write `n` changes to pod `name` and return the resourceVersions they got. */
async function modify(ns: string, name: string, n: number, tag: string): Promise<number[]> {
  const rvs: number[] = [];
  for (let i = 0; i < n; i++) rvs.push(rvOf(await sim.patchPod(ns, name, { metadata: { labels: { step: `${tag}${i}` } } })));
  return rvs;
}

const rvsOf = (events: WatchEvent[]) => events.map(rvOf);

describe("upstream faults", () => {
  it("streams cut mid-event: the hub re-watches from its last resourceVersion, nothing lost or repeated", async () => {
    const { ns, sub } = await setup();
    for (const round of ["a", "b", "c"]) {
      // The events arriving show the hub's watch is live: that is the stream the drop cuts.
      const expected = await modify(ns, "a", 5, round);
      expect(rvsOf(await sub.events.take(5))).toEqual(expected);
      await sim.faults({ dropWatches: true });
    }
    const expected = await modify(ns, "a", 2, "d");
    expect(rvsOf(await sub.events.take(2))).toEqual(expected);
    expect(sub.events.size).toBe(0);
    const verbs = (await sim.requests(podsPath(ns))).requests.map((r) => r.verb);
    expect(verbs.filter((v) => v === "list")).toEqual(["list"]); // never relisted
    expect(verbs.filter((v) => v === "watch").length).toBeGreaterThanOrEqual(4);
    sub.close();
  });

  it("a malformed line: the hub re-watches from the last good event", async () => {
    const { ns, sub } = await setup();
    await sim.faults({ malformedLines: 1 });
    const expected = await modify(ns, "a", 5, "m");
    expect(rvsOf(await sub.events.take(5))).toEqual(expected);
    sub.close();
  });

  it("500s are retried with backoff; 429s wait at least their Retry-After", async () => {
    const { ns, sub } = await setup();
    await sim.faults({ failRequests: { count: 2, status: 500, verbs: ["watch"], path: podsPath(ns) }, dropWatches: true });
    const first = await modify(ns, "a", 2, "e");
    expect(rvsOf(await sub.events.take(2))).toEqual(first);

    await sim.faults({ failRequests: { count: 2, status: 429, retryAfterSeconds: 1, verbs: ["watch"], path: podsPath(ns) }, dropWatches: true });
    const started = Date.now();
    const second = await modify(ns, "a", 2, "r");
    expect(rvsOf(await sub.events.take(2))).toEqual(second);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000); // two Retry-After: 1 waits
    sub.close();
  });

  it("a stalled stream is detected and replaced", async () => {
    const { ns, sub } = await setup();
    await sim.faults({ stallWatches: true });
    const expected = await modify(ns, "a", 3, "s");
    expect(rvsOf(await sub.events.take(3, "events after the stall"))).toEqual(expected);
    sub.close();
  });

  it("compaction: the re-watch gets 410, the hub relists and emits the difference; nobody relists", async () => {
    const { ns, sub: connected } = await setup(["a", "b", "c"]);
    const away = await wsWatch(relayPath(ns));
    const initial = await away.events.take(3);
    const preGap = Math.max(...rvsOf(initial));
    away.close();
    const before = await sim.requests(podsPath(ns));

    // The hub stops hearing from upstream while objects change and history is compacted.
    await sim.faults({ stallWatches: true });
    const deletedB = await sim.deletePod(ns, "b");
    const modifiedA = await sim.patchPod(ns, "a", { metadata: { labels: { during: "gap" } } });
    const addedD = await sim.createPod(ns, "d");
    await sim.faults({ compact: true, dropWatches: true });

    // Nothing else was written to this cluster during the gap, so the latest revision left
    // free for the DELETED is the deletion's own, and the diff replays the gap in RV order.
    const fromConnected = await connected.events.take(3);
    expect(fromConnected.map((e) => [e.type, nameOf(e), rvOf(e)])).toEqual([
      ["DELETED", "b", rvOf(deletedB)],
      ["MODIFIED", "a", rvOf(modifiedA)],
      ["ADDED", "d", rvOf(addedD)],
    ]);
    const deleted = fromConnected[0]!;
    expect(deleted.object.metadata?.uid).toBe(deletedB.metadata?.uid);
    expect(deleted.object.metadata?.labels).toEqual({ app: "x" }); // its last state

    const resumed = await wsWatch(relayPath(ns, `watch=1&resourceVersion=${preGap}`));
    const fromResumed = await resumed.events.take(3);
    expect(fromResumed).toEqual(fromConnected);
    const verbs = (await sim.requests(podsPath(ns), before.next)).requests.map((r) => r.verb);
    expect(verbs.filter((v) => v === "list")).toEqual(["list"]); // the hub's relist, once
    expect(connected.events.size + resumed.events.size).toBe(0); // no ERROR 410 to anyone
    connected.close();
    resumed.close();
  });

  it("the API server cutting every watch with 410 (cache re-init) costs subscribers nothing", async () => {
    const { ns, sub } = await setup();
    await sim.faults({ expireWatches: true });
    const expected = await modify(ns, "a", 3, "x");
    expect(rvsOf(await sub.events.take(3))).toEqual(expected);
    sub.close();
  });

  it("the relay's own identity refused upstream (403): every request is answered at once with what the upstream said", async () => {
    const ns = uniqueNamespace("f");
    await sim.faults({ failRequests: { count: 1000, status: 403, verbs: ["list"], path: podsPath(ns) } });
    try {
      for (const query of ["", "watch=1", "resourceVersion=0"]) {
        const started = Date.now();
        const response = await relay(relayPath(ns, query));
        // Well before the wait for a hub to sync is out (SYNC_WAIT_SECONDS, 5 s in the tests): no retry mends a 403.
        expect(Date.now() - started).toBeLessThan(4000);
        expect(response.status).toBe(403);
        const status = (await response.json()) as Status;
        expect(status).toMatchObject({ reason: "Forbidden" });
        expect(status.message).toContain("refuses the relay's own identity");
        expect(status.message).toContain("injected fault: HTTP 403");
      }
    } finally {
      await sim.faults({ failRequests: { count: 0, status: 403 } });
    }
  });

  it("an upstream that is down: a consistent list says so and how to read what the hub holds, which resourceVersion=0 serves", async () => {
    const { ns, sub } = await setup(["a", "b"]);
    const head = rvOf(await sim.patchPod(ns, "a", { metadata: { labels: { before: "outage" } } }));
    await sub.events.next();
    const back = sim.faults({ restart: { downtimeMs: 8000 } });
    await eventually(async () => ((await (await relay(`/_relay/stats${relayPath(ns, "")}`)).json()) as { upstream: string }).upstream === "backoff", "the hub to notice");
    const down = await relay(relayPath(ns, ""));
    expect(down.status).toBe(503);
    const status = (await down.json()) as Status;
    expect(status.message).toContain("the relay cannot reach the upstream API server");
    expect(status.message).toContain(`the relay holds this collection as of resourceVersion ${head}`);
    expect(status.message).toContain("add resourceVersion=0 to read it");
    const cached = await relay(relayPath(ns, "resourceVersion=0"));
    expect(cached.status).toBe(200);
    expect(((await cached.json()) as { items: unknown[] }).items).toHaveLength(2);
    await back;
    sub.close();
  });

  it("an upstream whose list sends nothing for longer than a request waits: the request is told the relay is still listing it, then it is served", async () => {
    const ns = uniqueNamespace("f");
    await sim.createPod(ns, "a");
    // Longer than SYNC_WAIT_SECONDS (5 in the tests) before the list's first page.
    await sim.configure({ listDelayMs: 6_500 });
    try {
      const early = await relay(relayPath(ns, ""));
      expect(early.status).toBe(503);
      expect(early.headers.get("retry-after")).toBe("5");
      expect(((await early.json()) as Status).message).toMatch(/^the relay is still listing this collection from the upstream \(0 objects in [56] s so far\)/);
    } finally {
      await sim.configure({ listDelayMs: 0 });
    }
    const served = await eventually(async () => {
      const response = await relay(relayPath(ns, "resourceVersion=0"));
      return response.status === 200 ? ((await response.json()) as { items: unknown[] }) : undefined;
    }, "the list to be served once the hub has it");
    expect(served.items).toHaveLength(1);
  });

  it("the API server restarting: the hub reconnects with backoff and resumes", async () => {
    const { ns, sub } = await setup();
    await sim.faults({ restart: { downtimeMs: 500 } });
    const expected = await modify(ns, "a", 3, "z");
    expect(rvsOf(await sub.events.take(3))).toEqual(expected);
    sub.close();
  });
});
