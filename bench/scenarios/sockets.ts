/**
 * @module
 * `sockets`: clients each watching several collections (distinct selectors matching every pod),
 * on one relay socket each (`relay-socket`) against a WebSocket per watch (`relay-batched`); then
 * again on a relay whose mux objects run in a second workerd (`muxWorkerd`), as deployed.
 */
import { connectThenChurn, deliveryFields, round } from "../measure.ts";
import type { SocketsRow } from "../rows.ts";
import { clientOf, type System } from "../systems/system.ts";
import { startSplit } from "./own.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const namespaceOf = (system: string, split: boolean) => `sockets-${system}${split ? "-split" : ""}`;

export const sockets: Scenario = {
  name: "sockets",
  systems: ["relay-batched", "relay-socket"],
  namespaces: (_sizes, systems) => [false, true].flatMap((split) => systems.map((s) => namespaceOf(s, split))),
  async run(context, systems) {
    const rows: SocketsRow[] = [];
    for (const system of systems) rows.push(await runOne(context, system, false));
    const split = await startSplit(context, "sockets-split-relay", { muxWorkerd: true }, "sockets: starting a relay whose mux objects run in a second workerd");
    try {
      for (const system of systems) {
        // A relay socket is admitted next to its mux object, a WebSocket per watch next to the hubs, as deployed.
        const same = (system.name === "relay-socket" ? (split.relay.nearMux ?? []) : split.relay.systems).find((s) => s.name === system.name);
        if (!same) throw new Error(`sockets: the relay with a mux objects' workerd serves no ${system.name}`);
        rows.push({ ...(await runOne(split.context, same, true)), muxWorkerd: true });
      }
    } finally {
      await split.relay.stop();
    }
    return rows;
  },
};

async function runOne(context: Context, system: System, split: boolean): Promise<SocketsRow> {
  const { sim, sizes } = context;
  const { clients, watchesPerClient, rate } = sizes.sockets;
  context.progress(`sockets ${system.name}: ${clients} clients × ${watchesPerClient} watches${split ? " (mux objects' workerd)" : ""}`);
  const namespace = inRound(namespaceOf(system.name, split), context.round);
  const watches = Array.from({ length: watchesPerClient }, (_, i) => ({ path: podsOf(namespace), labelSelector: `!bench-s${i}` }));
  const specs = Array.from({ length: clients }, () => clientOf(system, sim, watches)).flat();
  const { window, upstreamWatches, addedKB } = await connectThenChurn(context, system, namespace, specs, sizes.sockets);
  return {
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
  };
}
