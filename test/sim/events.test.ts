/**
 * @module
 * The Events churn records, as a cluster's scheduler and kubelets write them, read as `v1`
 * Events: who reports them, what they are about, counts and timestamps, and their bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { PER_NAMESPACE } from "../../src/sim/events.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";

type Event = KubeObject & {
  involvedObject: { kind: string; namespace: string; name: string; uid: string; apiVersion: string; resourceVersion: string; fieldPath?: string };
  reason: string;
  message: string;
  type: string;
  count?: number;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  eventTime: string | null;
  source: { component?: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
  action?: string;
};

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 5 });
});
afterAll(() => sim.close());

const events = (namespace?: string) => sim.list("events", namespace) as Event[];

describe("churn's Events", () => {
  it("are off unless asked for: churn alone records none", () => {
    const before = events().map((e) => e.metadata?.name);
    sim.churnStep(200);
    expect(events().map((e) => e.metadata?.name)).toEqual(before);
  });

  it("record what the scheduler and the kubelets do, about the pod as it was, and expire the seed's day-old ones", () => {
    const seeded = events();
    expect(seeded.length).toBeGreaterThan(0);
    sim.churn({ ratePerSec: 0, events: true });
    sim.churnStep(600);
    const recorded = events();
    // Older than the API server's event TTL (an hour): gone.
    for (const old of seeded) expect(recorded.map((e) => e.metadata?.uid)).not.toContain(old.metadata?.uid);
    const reasons = new Set(recorded.map((e) => e.reason));
    for (const reason of ["Scheduled", "Pulled", "Created", "Started", "Killing", "BackOff", "Unhealthy"]) expect(reasons, reason).toContain(reason);

    const scheduled = recorded.find((e) => e.reason === "Scheduled")!;
    expect(scheduled).toMatchObject({ type: "Normal", action: "Binding", reportingComponent: "default-scheduler", source: {}, firstTimestamp: null, lastTimestamp: null });
    expect(scheduled.count).toBeUndefined();
    expect(scheduled.eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(scheduled.message).toMatch(new RegExp(`^Successfully assigned ${scheduled.involvedObject.namespace}/${scheduled.involvedObject.name} to sim-node-\\d$`));

    const kubelet = recorded.filter((e) => e.source.component === "kubelet");
    expect(kubelet.length).toBeGreaterThan(0);
    for (const event of kubelet) {
      expect(event.involvedObject).toMatchObject({ kind: "Pod", apiVersion: "v1", namespace: event.metadata?.namespace });
      expect(event.involvedObject.fieldPath).toMatch(/^spec\.containers\{[a-z-]+\}$/);
      expect(event.reportingComponent).toBe("kubelet");
      expect(event.reportingInstance).toBe(event.source.host);
      expect(event.metadata?.name).toMatch(new RegExp(`^${event.involvedObject.name}\\.[0-9a-f]+$`));
      expect(Date.parse(event.lastTimestamp!)).toBeGreaterThanOrEqual(Date.parse(event.firstTimestamp!));
      expect(event.count).toBeGreaterThanOrEqual(1);
      expect(event.type).toBe(["BackOff", "Unhealthy"].includes(event.reason) ? "Warning" : "Normal");
    }
    // A repeat is the same Event with its count raised (a container restarted twice: Started ×2).
    expect(kubelet.some((e) => (e.count ?? 0) > 1)).toBe(true);
    // Each Event names the pod it is about, at a resourceVersion the pod had.
    const started = kubelet.find((e) => e.reason === "Started")!;
    expect(Number(started.involvedObject.resourceVersion)).toBeGreaterThan(0);
  });

  it("keep at most the newest events of each namespace", () => {
    sim.churnStep(6000);
    for (const namespace of ["default", "team-a", "team-b", "team-c"]) expect(events(namespace).length, namespace).toBeLessThanOrEqual(PER_NAMESPACE);
    sim.churn({ ratePerSec: 0, events: false });
  });
});
