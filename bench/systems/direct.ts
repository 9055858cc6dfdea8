/**
 * @module
 * `direct`: no relay. Every subscriber opens its own HTTP watch on the API server, which is
 * what clients do today; its cost is the API server's.
 */
import type { Sim } from "../sim.ts";
import type { System } from "./system.ts";

export function directSystem(sim: Sim): System {
  return {
    name: "direct",
    pids: [sim.pid],
    endpoints: { http: { base: sim.url, ack: false } },
    listBase: sim.url,
    resume: "rv",
    head: () => sim.resourceVersion(),
    heapBytes: () => sim.heapBytes(),
  };
}
