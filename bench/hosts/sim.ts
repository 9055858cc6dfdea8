/**
 * @module
 * The simulated API server in a process of its own, so that its CPU is measured apart; the
 * operations its `/_sim/` API lacks go over IPC.
 */
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../src/k8s/types.ts";
import { startSimulator } from "../../src/sim/index.ts";
import { serveParent } from "../children.ts";

export interface SimArgs {
  /** Seeded with the simulator's usual workloads and 8 running pods each. */
  namespaces: string[];
  /** Those of them whose pods are slim (about 2.5 KB of JSON). */
  slimPodNamespaces: string[];
  historyLimit?: number;
}

serveParent<SimArgs>(async ({ namespaces, slimPodNamespaces, historyLimit }) => {
  const sim = await startSimulator({
    initial: { namespaces, podsPerNamespace: 8, slimPodNamespaces },
    // Room for a storm's missed events and for the largest run's backlog.
    historyLimit: historyLimit ?? 50_000,
  });
  return {
    info: { url: sim.url, pid: process.pid },
    ops: {
      step({ namespace, ops }: { namespace: string; ops: number }) {
        sim.churn({ ratePerSec: 0, namespaces: [namespace] });
        sim.churnStep(ops);
        return Number(sim.resourceVersion);
      },
      /** Copies of the seeded pods, sharing their spec and status: 200,000 fit in a few hundred MB. */
      populate({ namespace, count, annotations }: { namespace: string; count: number; annotations?: Record<string, string> }) {
        const seeded = sim.list("pods", namespace);
        for (let i = seeded.length; i < count; i++) {
          const base = seeded[i % seeded.length] as KubeObject;
          const metadata = { ...base.metadata, name: `${base.metadata?.name}-${i}`, uid: randomUUID() };
          if (annotations) metadata.annotations = { ...base.metadata?.annotations, ...annotations };
          sim.create("pods", { ...base, metadata });
        }
        return sim.list("pods", namespace).length;
      },
      count({ namespace }: { namespace: string }) {
        return sim.list("pods", namespace).length;
      },
    },
    stop: () => sim.close(),
  };
});
