/**
 * @module
 * `direct`: no relay; every subscriber watches the API server, whose cost is this system's.
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
