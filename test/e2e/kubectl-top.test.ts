/**
 * @module
 * `kubectl top`, unchanged, against `npm start`'s relay: metrics.k8s.io (served by the simulated
 * cluster as metrics-server serves it: list and get, no watch) is relayed from the relay's list
 * cache, so however many `top`s run within LIST_CACHE_SECONDS, the cluster is listed once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { have } from "../kit/tools.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { Kubectl, rows, simGet, simulatorUrl } from "./kube.ts";

const hasKubectl = have("kubectl", "the end-to-end kubectl top tests");

let relay: RunningRelay;
let sim: string;
let kubectl: Kubectl;

beforeAll(async () => {
  if (!hasKubectl) return;
  // Churn off: the pods kubectl prints are the simulated cluster's, exactly.
  relay = await startRelay({ SIM_CHURN: "0" });
  sim = simulatorUrl(relay);
  kubectl = new Kubectl(relay.url);
});
afterAll(async () => {
  await relay?.stop();
  kubectl?.cleanup();
});

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl.run(...args);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

const running = (pods: KubeObject[]) => pods.filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Running");

describe.skipIf(!hasKubectl)("kubectl top through the relay", () => {
  it("top nodes: every node's usage and its share of what is allocatable", async () => {
    const out = await ok("top", "nodes");
    expect(out.split("\n")[0]).toMatch(/^NAME\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)\s*$/);
    const nodes = (await simGet(sim, "/api/v1/nodes")).items.map((n) => n.metadata?.name).sort();
    expect(rows(out).map((r) => r[0])).toEqual(nodes);
    for (const r of rows(out)) expect([r[1], r[2], r[3], r[4]].join(" ")).toMatch(/^\d+m \d+% \d+Mi \d+%$/);
  });

  it("top pods -A: every running pod; and within the interval, one upstream list however many tops run", async () => {
    const before = (await simGet<{ next: number }>(sim, "/_sim/requests?path=/apis/metrics.k8s.io/v1beta1/pods")).next;
    const outs = [await ok("top", "pods", "-A"), await ok("top", "pods", "-A"), await ok("top", "pods", "-A")];
    expect(outs[0]?.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*$/);
    const pods = running((await simGet(sim, "/api/v1/pods")).items)
      .map((p) => [p.metadata?.namespace, p.metadata?.name])
      .sort((a, b) => a.join("/").localeCompare(b.join("/")));
    expect(rows(outs[0] as string).map((r) => [r[0], r[1]])).toEqual(pods);
    for (const r of rows(outs[0] as string)) expect(`${r[2]} ${r[3]}`).toMatch(/^\d+m \d+Mi$/);
    // The same usage three times: one list, shared (LIST_CACHE_SECONDS is 10 s).
    expect(new Set(outs).size).toBe(1);
    const lists = (await simGet<{ requests: Array<{ verb: string }> }>(sim, `/_sim/requests?since=${before}&path=/apis/metrics.k8s.io/v1beta1/pods`)).requests.filter((r) => r.verb === "list");
    expect(lists).toHaveLength(1);
  });

  it("top pod NAME -n NS, and a namespace's pods", async () => {
    const pod = running((await simGet(sim, "/api/v1/namespaces/team-b/pods")).items)[0] as KubeObject;
    const one = await ok("top", "pod", pod.metadata?.name as string, "-n", "team-b");
    expect(rows(one).map((r) => r[0])).toEqual([pod.metadata?.name]);
    const namespace = await ok("top", "pods", "-n", "team-b");
    expect(rows(namespace).map((r) => r[0])).toEqual(
      running((await simGet(sim, "/api/v1/namespaces/team-b/pods")).items)
        .map((p) => p.metadata?.name)
        .sort(),
    );
  });
});
