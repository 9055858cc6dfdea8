/**
 * @module
 * A real @kubernetes/client-node informer syncing from the simulator and following churn.
 */
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 31 });
});
afterAll(() => sim.close());

describe("@kubernetes/client-node informer", () => {
  it("syncs, follows churn, and ends with a cache equal to the simulator's list", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // client-node refuses plain http:// unless skipTLSVerify is set.
      clusters: [{ name: "sim", server: sim.url, skipTLSVerify: true }],
      users: [{ name: "anonymous" }],
      contexts: [{ name: "sim", cluster: "sim", user: "anonymous" }],
      currentContext: "sim",
    });
    const api = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, "/api/v1/namespaces/team-a/pods", () => api.listNamespacedPod({ namespace: "team-a" }));
    const errors: unknown[] = [];
    informer.on("error", (e) => errors.push(e));
    const snapshot = (pods: ReadonlyArray<{ metadata?: { name?: string; resourceVersion?: string } }>) => pods.map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`).sort();
    const expected = () => snapshot(sim.list("pods", "team-a"));

    await informer.start();
    try {
      expect(errors).toEqual([]);
      expect(snapshot(informer.list())).toEqual(expected());
      sim.churn({ ratePerSec: 0, namespaces: ["team-a"] });
      sim.churnStep(300);
      // Converged once the cache matches; every informer change is a chance to get there.
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (JSON.stringify(snapshot(informer.list())) === JSON.stringify(expected())) resolve();
        };
        informer.on("change", check);
        informer.on("error", reject);
        check();
      });
      expect(snapshot(informer.list())).toEqual(expected());
      expect(errors).toEqual([]);
      const requests = sim.requests({ path: "/api/v1/namespaces/team-a/pods" }).requests.map((r) => r.verb);
      expect(requests).toEqual(["list", "watch"]);
    } finally {
      await informer.stop();
    }
  });
});
