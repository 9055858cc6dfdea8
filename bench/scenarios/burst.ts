/**
 * @module
 * `burst`: S subscribers on one collection of slim pods, then `changes` changes at once (a
 * rollout, a node drain), written in one chunk or a chunk each (`chunkPerEvent`).
 */
import { measureWhile, receiptFields, round } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import type { BurstRow } from "../rows.ts";
import { GENERAL_SYSTEMS, labelOf } from "../systems/catalog.ts";
import { subscriber, transportsOf, type System, type Transport } from "../systems/system.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const namespaceOf = (system: string, transport: Transport, subscribers: number, chunkPerEvent: boolean) => `burst-${chunkPerEvent ? "chunked-" : ""}${system}-${transport}-${subscribers}`;

export const burst: Scenario = {
  name: "burst",
  systems: GENERAL_SYSTEMS,
  slimPods: true,
  namespaces: (sizes, systems) =>
    sizes.burst.chunkPerEvent.flatMap((chunked) => sizes.burst.subscribers.flatMap((s) => systems.flatMap((name) => transportsOf(name).map((t) => namespaceOf(name, t, s, chunked))))),
  async run(context, systems) {
    const rows: BurstRow[] = [];
    for (const chunkPerEvent of context.sizes.burst.chunkPerEvent) {
      await context.sim.configure({ chunkPerEvent });
      try {
        for (const subscribers of context.sizes.burst.subscribers) {
          for (const system of systems) {
            for (const transport of transportsOf(system)) rows.push(await runOne(context, system, transport, subscribers, chunkPerEvent));
          }
        }
      } finally {
        if (chunkPerEvent) await context.sim.configure({ chunkPerEvent: false });
      }
    }
    return rows;
  },
};

async function runOne(context: Context, system: System, transport: Transport, subscribers: number, chunkPerEvent: boolean): Promise<BurstRow> {
  const { sim, loadgens, sizes } = context;
  const { changes, timeoutMs } = sizes.burst;
  const namespace = inRound(namespaceOf(system.name, transport, subscribers, chunkPerEvent), context.round);
  const label = labelOf(system.name, transport);
  context.progress(`burst ${label}: ${subscribers} subscribers, ${changes} changes at once${chunkPerEvent ? ", a chunk per event" : ""}`);
  await context.quiesce();
  await loadgens.open(Array.from({ length: subscribers }, () => subscriber(system, transport, sim, podsOf(namespace))));
  // One change first, seen by all: the window then holds the burst's events and nothing else.
  const live = await loadgens.waitFor(await sim.step(namespace, 1), timeoutMs);
  if (live.missing > 0) throw new Error(`burst ${label}: ${live.missing} of ${subscribers} subscribers never went live`);
  await waitIdle([...system.pids, sim.pid]);

  let caughtUp = 0;
  const window = await measureWhile(context, system, async () => {
    const result = await loadgens.waitFor(await sim.step(namespace, changes), timeoutMs);
    caughtUp = result.caughtUpAt.length;
  });
  await loadgens.close();
  const { report } = window;
  const durationMs = report.firstWrittenAt !== null && report.lastReceivedAt !== null ? Math.max(1, report.lastReceivedAt - report.firstWrittenAt) : null;
  return {
    scenario: "burst",
    system: system.name,
    transport,
    subscribers,
    changes,
    ...(chunkPerEvent ? { chunkPerEvent } : {}),
    delivered: report.events,
    deliveredPct: round((100 * report.events) / (subscribers * changes)),
    caughtUp,
    durationMs,
    deliveredPerSec: durationMs === null ? 0 : round((report.events * 1000) / durationMs),
    ...receiptFields(window),
  };
}
