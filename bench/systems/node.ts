/**
 * @module
 * The Node baselines as systems, each in a process of its own: `node-relay` (no resume: its
 * clients relist), and the fan-out ceilings `raw-ws` and `raw-http` (one program).
 */
import { startChild } from "../children.ts";
import type { Sim } from "../sim.ts";
import { transportsOf, type Endpoint, type Launched, type Transport } from "./system.ts";

export async function startNodeSystem(name: "node-relay" | "raw-ws" | "raw-http", sim: Sim, logDir: string): Promise<Launched> {
  const host = name === "node-relay" ? "node-relay" : "raw";
  const child = await startChild<{ urls: Record<Transport, string>; pid: number }>(name, new URL(`../hosts/${host}.ts`, import.meta.url), { upstreamUrl: sim.url }, logDir);
  const endpoints: Partial<Record<Transport, Endpoint>> = {};
  for (const transport of transportsOf(name)) endpoints[transport] = { base: child.info.urls[transport], ack: false };
  const system = {
    name,
    pids: [child.pid],
    endpoints,
    resume: name === "node-relay" ? ("relist" as const) : ("rv" as const),
    head: (path: string, labelSelector = "") => child.call<number>("head", { path, labelSelector }),
    heapBytes: () => child.call<number>("heap"),
  };
  return { systems: [system], processes: [{ role: name, pid: child.pid }] };
}
