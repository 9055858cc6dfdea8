/**
 * @module
 * Churn: realistic pod lifecycles, bounded populations, and 2,000 operations per second,
 * however many pods a namespace holds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, WRITTEN_AT, type Simulator } from "../../src/sim/index.ts";
import { openWatch, type WatchReader } from "../kit/lines.ts";

let sim: Simulator;
const open: WatchReader[] = [];
beforeAll(async () => {
  sim = await startSimulator({ seed: 9 });
});
afterAll(async () => {
  for (const w of open) w.close();
  await sim.close();
});

describe("churn", () => {
  it("creates, progresses, relabels and gracefully deletes pods, stamping written-at on every write", async () => {
    const w = await openWatch(`${sim.url}/api/v1/pods?watch=1&resourceVersion=${sim.resourceVersion}`);
    open.push(w);
    sim.churnStep(600);
    const events = [];
    for (let i = 0; i < 600; i++) events.push(await w.next());
    const types = new Set(events.map((e) => e.type));
    expect(types).toEqual(new Set(["ADDED", "MODIFIED", "DELETED"]));
    for (const e of events) expect(e.object.metadata.annotations?.[WRITTEN_AT]).toMatch(/^\d{13}$/);
    // Every DELETED was announced by a MODIFIED carrying deletionTimestamp (graceful deletion).
    const terminating = new Set(events.filter((e) => e.type === "MODIFIED" && e.object.metadata.deletionTimestamp).map((e) => e.object.metadata.uid));
    const deleted = events.filter((e) => e.type === "DELETED");
    expect(deleted.length).toBeGreaterThan(0);
    for (const e of deleted) {
      expect(terminating.has(e.object.metadata.uid)).toBe(true);
      expect(e.object.metadata.deletionTimestamp).toBeDefined();
    }
    // Pending pods start Running with a pod IP; containers restart; the track label flips.
    expect(events.some((e) => e.type === "MODIFIED" && e.object.status.phase === "Running" && e.object.status.podIP)).toBe(true);
    expect(events.some((e) => e.object.status?.containerStatuses?.[0]?.restartCount > 0)).toBe(true);
    const tracks = new Map<string, Set<string>>();
    for (const e of events) tracks.set(e.object.metadata.uid, (tracks.get(e.object.metadata.uid) ?? new Set()).add(e.object.metadata.labels.track));
    expect([...tracks.values()].some((s) => s.size === 2)).toBe(true);
  });

  it("keeps each namespace's population near its target", () => {
    sim.churnStep(4000);
    for (const ns of ["default", "team-a", "team-b", "team-c"]) {
      const live = sim.list("pods", ns).filter((p) => !p.metadata?.deletionTimestamp).length;
      expect(live, ns).toBeGreaterThanOrEqual(4);
      expect(live, ns).toBeLessThanOrEqual(12);
    }
  });

  it("sustains 2000 operations per second", async () => {
    const w = await openWatch(`${sim.url}/api/v1/pods?watch=1&resourceVersion=${sim.resourceVersion}`);
    open.push(w);
    const started = performance.now();
    sim.churn({ ratePerSec: 2000 });
    for (let i = 0; i < 1000; i++) await w.next();
    const elapsed = performance.now() - started;
    sim.churn({ ratePerSec: 0 });
    // 1000 operations at 2000/s take 0.5 s; allow for a loaded CI machine but not for falling behind.
    expect(elapsed).toBeLessThan(1000);
  });

  it("churns namespaces it was not seeded with", async () => {
    sim.churn({ ratePerSec: 500, namespaces: ["fresh-ns"] });
    const w = await openWatch(`${sim.url}/api/v1/namespaces/fresh-ns/pods?watch=1`);
    open.push(w);
    const added = await w.until((e) => e.type === "ADDED");
    sim.churn({ ratePerSec: 0 });
    expect(added.at(-1)!.object.metadata.ownerReferences[0].kind).toBe("ReplicaSet");
    expect(sim.get("namespaces", undefined, "fresh-ns")).toBeDefined();
    expect(sim.list("deployments", "fresh-ns").length).toBeGreaterThan(0);
  });

  it("keeps a namespace grown past its seeded size near the size it had, at 2,000 operations per second", async () => {
    // Copies of one seeded pod under new names, as the benchmark grows a collection.
    const [seed] = sim.list("pods", "team-b");
    if (!seed) throw new Error("team-b has no pods");
    const grown = 50_000;
    for (let i = 0; i < grown; i++) sim.create("pods", { ...seed, metadata: { ...seed.metadata, namespace: "grown", name: `grown-${i}` } });
    const w = await openWatch(`${sim.url}/api/v1/namespaces/grown/pods?watch=1&resourceVersion=${sim.resourceVersion}`);
    open.push(w);
    const started = performance.now();
    sim.churn({ ratePerSec: 2000, namespaces: ["grown"] });
    const events = [];
    for (let i = 0; i < 1000; i++) events.push(await w.next());
    const elapsed = performance.now() - started;
    sim.churn({ ratePerSec: 0 });
    expect(elapsed).toBeLessThan(1000);
    // New pods as well as deletions: the population is held near 50,000, not brought down to the seeded 8.
    expect(events.some((e) => e.type === "ADDED")).toBe(true);
    const live = sim.list("pods", "grown").filter((p) => !p.metadata?.deletionTimestamp).length;
    expect(live).toBeGreaterThan(grown * 0.99);
  });
});
