/**
 * @module
 * metrics.k8s.io as the simulator serves it, like metrics-server: NodeMetrics and PodMetrics,
 * list and get, no watch, usage that follows the nodes and running pods.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { request } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 3, initial: { namespaces: ["default", "team-a"], podsPerNamespace: 3, nodes: 2, deployments: 1 } });
});
afterAll(() => sim.close());

const METRICS = "/apis/metrics.k8s.io/v1beta1";
const nanocores = (cpu: string) => Number(cpu.replace(/n$/, ""));

describe("metrics.k8s.io", () => {
  it("lists a PodMetrics per running pod, with each container's usage, and a node's usage covers its pods'", async () => {
    const pods = (await request(`${sim.url}/api/v1/pods`)).body.items.filter((p: any) => p.status.phase === "Running");
    const metrics = (await request(`${sim.url}${METRICS}/pods`)).body;
    expect(metrics).toMatchObject({ kind: "PodMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {} });
    expect(metrics.items.map((m: any) => `${m.metadata.namespace}/${m.metadata.name}`)).toEqual(pods.map((p: any) => `${p.metadata.namespace}/${p.metadata.name}`).sort());
    const first = metrics.items[0];
    expect(first).toMatchObject({ window: expect.stringMatching(/^\d+(\.\d+)?s$/), timestamp: expect.stringMatching(/Z$/) });
    expect(first.containers[0].usage).toEqual({ cpu: expect.stringMatching(/^\d+n$/), memory: expect.stringMatching(/^\d+Ki$/) });
    const nodes = (await request(`${sim.url}${METRICS}/nodes`)).body.items;
    const podsOn = (node: string) => metrics.items.filter((m: any) => pods.find((p: any) => p.metadata.name === m.metadata.name)?.spec.nodeName === node);
    for (const node of nodes) {
      const sum = podsOn(node.metadata.name).reduce((s: number, m: any) => s + nanocores(m.containers[0].usage.cpu), 0);
      expect(nanocores(node.usage.cpu)).toBeGreaterThan(sum);
    }
  });

  it("gets one object, filters by namespace and labels, and answers a watch with 405", async () => {
    const list = (await request(`${sim.url}${METRICS}/namespaces/team-a/pods`)).body.items;
    expect(list.every((m: any) => m.metadata.namespace === "team-a")).toBe(true);
    const one = await request(`${sim.url}${METRICS}/namespaces/team-a/pods/${list[0].metadata.name}`);
    expect(one.body).toMatchObject({ kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", metadata: { name: list[0].metadata.name } });
    expect((await request(`${sim.url}${METRICS}/namespaces/team-a/pods/nope`)).body).toMatchObject({ code: 404, message: 'pods.metrics.k8s.io "nope" not found' });
    const label = Object.entries(list[0].metadata.labels)[0] as [string, string];
    const selected = (await request(`${sim.url}${METRICS}/pods?labelSelector=${encodeURIComponent(`${label[0]}=${label[1]}`)}`)).body.items;
    expect(selected.length).toBeGreaterThan(0);
    expect(selected.every((m: any) => m.metadata.labels[label[0]] === label[1])).toBe(true);
    const watch = await request(`${sim.url}${METRICS}/pods?watch=1`);
    expect([watch.status, watch.body.reason, watch.body.message]).toEqual([405, "MethodNotAllowed", 'watch is not supported on resources of kind "pods.metrics.k8s.io"']);
  });
});
