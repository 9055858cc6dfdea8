/**
 * @module
 * The two Node baselines as systems: `node-relay` (the usual self-hosted relay; no resume, so
 * its clients relist from the API server) and `raw-ws` (the fan-out ceiling, which does
 * resume). Each runs in its own process, watching the simulator.
 */
import { startChild } from "../children.ts";
import type { Sim } from "../sim.ts";
import type { System } from "./system.ts";

export async function startNodeSystem(name: "node-relay" | "raw-ws", sim: Sim, logDir: string): Promise<System> {
  const child = await startChild<{ url: string; pid: number }>(name, new URL(`../hosts/${name}.ts`, import.meta.url), { upstreamUrl: sim.url }, logDir);
  return {
    name,
    pids: [child.pid],
    watchBase: child.info.url,
    ack: false,
    resume: name === "raw-ws" ? "rv" : "relist",
    head: (path, labelSelector = "") => child.call<number>("head", { path, labelSelector }),
    heapBytes: () => child.call<number>("heap"),
  };
}
