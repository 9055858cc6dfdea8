/**
 * @module
 * The simulated API server in a process of its own, so that its CPU (serving `direct`
 * subscribers, or the relays' single watches) is measured apart from everything else and it
 * does not compete with the orchestrator's timers. The orchestrator drives churn and reads
 * stats over the simulator's own `/_sim/` API; the two operations that API lacks go over IPC.
 */
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../src/k8s/types.ts";
import { startSimulator } from "../../src/sim/index.ts";
import { serveParent } from "../children.ts";

export interface SimArgs {
  /** Namespaces seeded with the simulator's usual workloads and 8 running pods each. */
  namespaces: string[];
  /** Those of them whose pods, seeded and churned, are slim (about 2.5 KB of JSON). */
  slimPodNamespaces: string[];
  /** Events kept for watch resume (default 50,000). */
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
      /** Exactly `ops` churn operations on `namespace`, now (a storm's missed events). */
      step({ namespace, ops }: { namespace: string; ops: number }) {
        sim.churn({ ratePerSec: 0, namespaces: [namespace] });
        sim.churnStep(ops);
        return Number(sim.resourceVersion);
      },
      /**
       * Grow `namespace` to `count` pods: copies of its seeded ones under new names and uids (a
       * large list), with `annotations` added (to make them as large as a scenario needs). The
       * copies share their spec and status with the seeded pod they copy, so that the
       * simulator holds a collection of 200,000 in a few hundred MB.
       */
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
      /** How many pods `namespace` holds. */
      count({ namespace }: { namespace: string }) {
        return sim.list("pods", namespace).length;
      },
    },
    stop: () => sim.close(),
  };
});
