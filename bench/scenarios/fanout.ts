/**
 * @module
 * `fanout`: S subscribers on one collection under churn, over each transport a system serves; idle
 * memory first, on fresh processes. A fresh collection each, so no backlog leaks into the next.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { deliveryFields, measureMemory, measureWindow, round } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import type { FanoutRow } from "../rows.ts";
import type { Sizes } from "../modes.ts";
import { factsOf, GENERAL_SYSTEMS, labelOf } from "../systems/catalog.ts";
import { primaryTransport, subscriber, transportsOf, type System, type SystemName, type Transport } from "../systems/system.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const namespaceOf = (system: string, transport: Transport, subscribers: number, rate: number | "idle") => `fanout-${system}-${transport}-${subscribers}-${rate}`;

/** Past this demand (events/s) the simulator, buffering 16 MiB per slow watcher, runs out of heap. */
const DIRECT_MAX_DEMAND = 200_000;

type Memory = Pick<FanoutRow, "memBeforeMB" | "memAfterMB" | "memPerSubscriberKB" | "heapPerSubscriberKB">;
const NOT_MEASURED: Memory = { memBeforeMB: null, memAfterMB: null, memPerSubscriberKB: null, heapPerSubscriberKB: null };

/** Idle memory by "system transport size", from the prelude. */
const idle = new Map<string, Memory>();
const idleKey = (system: System, transport: Transport, subscribers: number) => `${system.name} ${transport} ${subscribers}`;

export const fanout: Scenario = {
  name: "fanout",
  systems: GENERAL_SYSTEMS,
  namespaces: (sizes, systems) => [
    ...sizes.fanout.memorySubscribers.flatMap((s) => systems.map((name) => namespaceOf(name, primaryTransport(name), s, "idle"))),
    ...sizes.fanout.subscribers.flatMap((s) =>
      sizes.fanout.rates.flatMap((r) => systems.flatMap((name) => transportsOf(name).flatMap((t) => (planned(sizes, name, t, s, r) ? [namespaceOf(name, t, s, r)] : [])))),
    ),
  ],
  async prelude(context, systems) {
    const { fanout: sizes } = context.sizes;
    for (const subscribers of sizes.memorySubscribers) {
      for (const system of systems.filter((s) => !factsOf(s.name).secondary || sizes.secondary.subscribers.includes(subscribers))) {
        const transport = primaryTransport(system);
        idle.set(idleKey(system, transport, subscribers), await idleMemory(context, system, transport, subscribers));
      }
    }
  },
  async run(context, systems) {
    const { fanout: sizes } = context.sizes;
    const rows: FanoutRow[] = [];
    for (const subscribers of sizes.subscribers) {
      for (const rate of sizes.rates) {
        for (const system of systems) {
          for (const transport of transportsOf(system)) {
            if (!measured(context, system, transport, subscribers, rate)) continue;
            rows.push({ ...(await runOne(context, system, transport, subscribers, rate)), ...(idle.get(idleKey(system, transport, subscribers)) ?? NOT_MEASURED) });
          }
        }
      }
    }
    return rows;
  },
};

/** HTTP watches and secondary systems only at their sizes. */
function planned(sizes: Sizes, system: SystemName, transport: Transport, subscribers: number, rate: number): boolean {
  const at = (where: { subscribers: number[]; rates: number[] }) => where.subscribers.includes(subscribers) && where.rates.includes(rate);
  return (!factsOf(system).secondary || at(sizes.fanout.secondary)) && (transport !== "http" || at(sizes.fanout.http));
}

/** `planned`, less what is skipped for cause (recorded with its reason). */
function measured(context: Context, system: System, transport: Transport, subscribers: number, rate: number): boolean {
  if (!planned(context.sizes, system.name, transport, subscribers, rate)) return false;
  if (system.name !== "direct" || subscribers * rate <= DIRECT_MAX_DEMAND) return true;
  const reason = `${subscribers} watches × ${rate} events/s exhausts the simulated API server's heap (it buffers up to 16 MiB per slow watcher)`;
  context.skip({ scenario: "fanout", system: system.name, transport, subscribers, eventsPerSec: rate, reason });
  return false;
}

async function idleMemory(context: Context, system: System, transport: Transport, subscribers: number): Promise<Memory> {
  const { sim, loadgens } = context;
  const spec = subscriber(system, transport, sim, podsOf(namespaceOf(system.name, transport, subscribers, "idle")));
  const busy = [...system.pids, sim.pid];
  context.progress(`fanout ${labelOf(system.name, transport)}: idle memory of ${subscribers} subscribers`);
  await context.quiesce();
  await loadgens.open([spec]);
  await waitIdle(busy, { maxMs: 3000 });
  const before = await measureMemory(system);
  await loadgens.open(Array.from({ length: subscribers - 1 }, () => spec));
  await waitIdle(busy);
  const after = await measureMemory(system);
  await loadgens.close();
  const added = Math.max(1, subscribers - 1);
  return {
    memBeforeMB: round(before.rss / 2 ** 20),
    memAfterMB: round(after.rss / 2 ** 20),
    memPerSubscriberKB: round((after.rss - before.rss) / 1024 / added),
    heapPerSubscriberKB: round((after.heap - before.heap) / 1024 / added),
  };
}

async function runOne(context: Context, system: System, transport: Transport, subscribers: number, rate: number): Promise<Omit<FanoutRow, keyof Memory>> {
  const { sim, loadgens, sizes } = context;
  const namespace = inRound(namespaceOf(system.name, transport, subscribers, rate), context.round);
  const spec = subscriber(system, transport, sim, podsOf(namespace));
  context.progress(`fanout ${labelOf(system.name, transport)}: ${subscribers} subscribers, ${rate} events/s`);
  await context.quiesce();
  await loadgens.open(Array.from({ length: subscribers }, () => spec));
  await waitIdle([...system.pids, sim.pid]);
  await sim.churn(rate, namespace);
  await sleep(sizes.fanout.warmupMs);
  let upstreamConnections = 0;
  const seq = await sim.requestSeq();
  const window = await measureWindow(context, system, sizes.fanout.measureMs, async () => {
    upstreamConnections = Math.max(upstreamConnections, await sim.watchesIn(namespace));
  });
  const upstreamWatchRequests = (await sim.requestsSince(seq, namespace)).filter((r) => r.verb === "watch").length;
  await sim.churn(0);
  await loadgens.close();
  return { scenario: "fanout", system: system.name, transport, subscribers, ...deliveryFields(window, rate, subscribers), upstreamConnections, upstreamWatchRequests };
}
