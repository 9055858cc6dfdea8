/**
 * @module
 * `sockets`: clients each watching several collections (distinct selectors matching every pod),
 * on one relay socket each (`relay-socket`) against a WebSocket per watch (`relay-batched`).
 */
import { connectThenChurn, deliveryFields, round } from "../measure.ts";
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
    const { sim, sizes } = context;
    const { clients, watchesPerClient, rate } = sizes.sockets;
    const rows: SocketsRow[] = [];
    for (const system of systems) {
      context.progress(`sockets ${system.name}: ${clients} clients × ${watchesPerClient} watches`);
      const namespace = inRound(namespaceOf(system.name), context.round);
      const watches = Array.from({ length: watchesPerClient }, (_, i) => ({ path: podsOf(namespace), labelSelector: `!bench-s${i}` }));
      const specs = Array.from({ length: clients }, () => clientOf(system, sim, watches)).flat();
      const { window, upstreamWatches, addedKB } = await connectThenChurn(context, system, namespace, specs, sizes.sockets);
      rows.push({
        scenario: "sockets",
        system: system.name,
        transport: "ws",
        clients,
        watchesPerClient,
        sockets: specs.length,
        ...deliveryFields(window, rate, clients * watchesPerClient),
        upstreamWatches,
        memPerClientKB: round(addedKB.rss / clients),
        heapPerClientKB: round(addedKB.heap / clients),
      });
    }
    return rows;
  },
};
