/**
 * @module
 * `/_relay/clusters`: the names of the configured clusters, so a client (the live page) can offer
 * each and every cluster as one (`/clusters/*`). Names only: a cluster's address, binding or
 * credentials stay the relay's. It passes the gate as a request of every cluster's (`*`) does, so
 * nobody learns which clusters exist without a token the relay (in `kube` mode, one of the
 * clusters) accepts.
 */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { ALL_CLUSTERS } from "../k8s/members.ts";
import { statusResponse } from "../k8s/status.ts";
import { configuredClusters } from "../upstream.ts";
import type { GateCheck } from "./gate.ts";

export const CLUSTERS_PATH = "/_relay/clusters";

export interface ClusterNames {
  kind: "ClusterNames";
  apiVersion: "relay.kube-watch-relay.dev/v1";
  metadata: Record<string, never>;
  /** `default` first where it is configured, then `CLUSTERS`' names in their order. */
  names: string[];
}

export function clusterNames({ gate }: { gate: GateCheck }): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get(CLUSTERS_PATH, async (c) => {
    const passed = await gate(c.env, c.req.raw, ALL_CLUSTERS);
    if (!passed.ok) return statusResponse(passed.status);
    const answer: ClusterNames = { kind: "ClusterNames", apiVersion: "relay.kube-watch-relay.dev/v1", metadata: {}, names: configuredClusters(c.env) };
    return c.json(answer, 200, { "cache-control": "no-store" });
  });
  return app;
}
