/**
 * @module
 * `sockets`: browser-like clients each watching several collections, on one relay socket each
 * (`relay-socket`) against a WebSocket per watch (`relay-batched`). Every watch is a distinct
 * selector (`!bench-s<i>`) matching every pod of one churned namespace, so both deliver clients ×
 * watches × rate events a second.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { deliveryFields, measureMemory, measureWindow, round } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import type { SocketsRow } from "../rows.ts";
import { clientOf } from "../systems/system.ts";
import { podsOf, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const namespaceOf = (system: string) => `sockets-${system}`;

export const sockets: Scenario = {
  name: "sockets",
  systems: ["relay-batched", "relay-socket"],
  namespaces: (_sizes, systems) => systems.map(namespaceOf),
  async run(context, systems) {
    const { sim, loadgens, sizes } = context;
    const { clients, watchesPerClient, rate } = sizes.sockets;
    const rows: SocketsRow[] = [];
    for (const system of systems) {
      context.progress(`sockets ${system.name}: ${clients} clients × ${watchesPerClient} watches`);
      const namespace = inRound(namespaceOf(system.name), context.round);
      const watches = Array.from({ length: watchesPerClient }, (_, i) => ({ path: podsOf(namespace), labelSelector: `!bench-s${i}` }));
      await context.quiesce();
      const before = await measureMemory(system);
      const specs = Array.from({ length: clients }, () => clientOf(system, sim, watches)).flat();
      await loadgens.open(specs);
      await waitIdle([...system.pids, sim.pid]);
      const after = await measureMemory(system);
      const upstreamWatches = await sim.watchesIn(namespace);
      await sim.churn(rate, namespace);
      await sleep(sizes.sockets.warmupMs);
      const window = await measureWindow(context, system, sizes.sockets.measureMs);
      await sim.churn(0);
      await loadgens.close();
      rows.push({
        scenario: "sockets",
        system: system.name,
        transport: "ws",
        clients,
        watchesPerClient,
        sockets: specs.length,
        ...deliveryFields(window, rate, clients * watchesPerClient),
        upstreamWatches,
        memPerClientKB: round((after.rss - before.rss) / 1024 / clients),
        heapPerClientKB: round((after.heap - before.heap) / 1024 / clients),
      });
    }
    return rows;
  },
};
