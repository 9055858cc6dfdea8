/**
 * Global setup for the Workers integration tests: simulated API servers in Node, one per named
 * cluster, so tests that inject faults into one cannot disturb the others. The Worker reaches
 * them as its upstreams (`UPSTREAM_URL` for `default`, `CLUSTERS` for the rest); tests drive
 * them over their control API.
 */
import type { TestProject } from "vitest/node";
import { startSimulator } from "../../src/sim/index.ts";

/** Clusters the tests use; `down` points at a port nobody listens on. */
export const CLUSTER_NAMES = [
  "default",
  "faults",
  "evict",
  "soak",
  "slow",
  "other",
  "quota",
  "fuzz",
  "metrics",
  "ready",
  "rewind",
  "openapi",
  "proxied",
  "reviews",
  "hot",
  "access",
  "logs",
  "quiet",
  "lagging",
  "cold",
  "fleet-a",
  "fleet-b",
] as const;

declare module "vitest" {
  interface ProvidedContext {
    simulators: Record<string, string>;
  }
}

export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const sims = await Promise.all(
    CLUSTER_NAMES.map((name) =>
      startSimulator({
        seed: 1,
        // `quiet` and `lagging` bookmark as an API server does, once a minute; the others every second.
        bookmarkIntervalMs: name === "quiet" || name === "lagging" ? 60_000 : 1000,
        // Tests create their own namespaces; `default` keeps a little seeded data for list tests.
        initial: name === "default" ? { namespaces: ["default", "team-a"], podsPerNamespace: 4, nodes: 2, deployments: 1 } : { namespaces: [], podsPerNamespace: 0, nodes: 1, deployments: 0 },
      }),
    ),
  );
  provide("simulators", Object.fromEntries(CLUSTER_NAMES.map((name, i) => [name, sims[i]!.url])));
  return async () => {
    await Promise.all(sims.map((s) => s.close()));
  };
}
