/**
 * @module
 * Helpers for the Kubernetes-client tests: what kubectl sends (Accept headers), and writes to a
 * simulated API server.
 */
import type { KubeObject } from "../../src/k8s/types.ts";
import type { Sim } from "./helpers.ts";

/** kubectl's Accept for human-readable output (kubectl `get`, cli-runtime). */
export const KUBECTL_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
export const TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io";
export const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/** kubectl 1.32's Accept for `/api` and `/apis` (client-go `discovery_client.go`). */
export const KUBECTL_DISCOVERY = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

/** Create an object directly at the simulated API server (any resource; `path` is its collection). */
export async function simCreate(sim: Sim, path: string, object: KubeObject): Promise<KubeObject> {
  const response = await fetch(sim.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(object) });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as KubeObject;
}

/** Discovery requests the simulated API server received for exactly `path` from `since` on. */
export async function discoveryRequests(sim: Sim, path: string, since: number): Promise<unknown[]> {
  return (await sim.requests(path, since)).requests.filter((r) => r.verb === "discovery" && r.path === path);
}

/** The next sequence number of the simulated API server's request log (requests from now on). */
export async function requestMark(sim: Sim): Promise<number> {
  return (await sim.requests("/_none_")).next;
}
