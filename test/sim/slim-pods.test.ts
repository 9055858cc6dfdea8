/**
 * @module
 * Slim pods (`initial.slimPodNamespaces`): the benchmark's burst of small objects. Pods of the
 * named namespaces, seeded and churned, leave out managedFields, the token mount, the default
 * tolerations and the probes; every other namespace keeps its full pods.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, WRITTEN_AT, type Simulator } from "../../src/sim/index.ts";
import { openWatch, type WatchReader } from "../kit/lines.ts";

let sim: Simulator;
const open: WatchReader[] = [];
beforeAll(async () => {
  sim = await startSimulator({ seed: 4, initial: { namespaces: ["full", "lean"], podsPerNamespace: 8, slimPodNamespaces: ["lean"] } });
});
afterAll(async () => {
  for (const w of open) w.close();
  await sim.close();
});

const size = (o: unknown) => JSON.stringify(o).length;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("slim pods", () => {
  it("are seeded in the namespaces named, at about 2.5 KB, while others keep full pods", () => {
    const lean = sim.list("pods", "lean");
    const full = sim.list("pods", "full");
    expect(lean).toHaveLength(8);
    for (const pod of lean) {
      expect(pod.metadata?.managedFields).toBeUndefined();
      expect(pod.spec).toMatchObject({ automountServiceAccountToken: false });
      expect(pod.spec).not.toHaveProperty("volumes");
      expect(pod.spec).not.toHaveProperty("tolerations");
      expect((pod.spec as { containers: object[] }).containers[0]).not.toHaveProperty("readinessProbe");
      expect(size(pod)).toBeGreaterThan(2300);
      expect(size(pod)).toBeLessThan(2700);
    }
    for (const pod of full) {
      expect(pod.metadata?.managedFields).toHaveLength(2);
      expect(size(pod)).toBeGreaterThan(4000);
    }
  });

  it("stay slim through churn: a burst of changes at once is a burst of ~2.5 KB events", async () => {
    const w = await openWatch(`${sim.url}/api/v1/namespaces/lean/pods?watch=1&resourceVersion=${sim.resourceVersion}`);
    open.push(w);
    sim.churn({ ratePerSec: 0, namespaces: ["lean"] });
    sim.churnStep(400);
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) lines.push(await w.nextLine());
    const events = lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { managedFields?: unknown; annotations: Record<string, string> } } });
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(["ADDED", "MODIFIED", "DELETED"]));
    for (const e of events) {
      expect(e.object.metadata.managedFields).toBeUndefined();
      expect(e.object.metadata.annotations[WRITTEN_AT]).toMatch(/^\d{13}$/);
    }
    const lineBytes = mean(lines.map((l) => l.length));
    expect(lineBytes).toBeGreaterThan(2300);
    expect(lineBytes).toBeLessThan(2800);
    // The other namespace's pods were neither changed nor slimmed.
    for (const pod of sim.list("pods", "full")) expect(pod.metadata?.managedFields).toHaveLength(2);
  });
});
