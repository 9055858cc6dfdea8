/**
 * @module
 * `storm`: every subscriber of a collection drops at once, the collection changes `missed` times,
 * and all come back at the same moment from their last resourceVersion; timed until the last has
 * caught up, with what the API server saw. `node-relay` cannot resume, so its clients relist, as a
 * correct client must.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { cpuFields, cpuWhile } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import type { StormRow } from "../rows.ts";
import { percentileOf } from "../stats.ts";
import { primaryTransport, subscriber, transportsOf, type System, type SystemName, type Transport } from "../systems/system.ts";
import { until } from "./own.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";
import { labelOf } from "../systems/catalog.ts";

const namespaceOf = (system: string, transport: Transport, subscribers: number) => `storm-${system}-${transport}-${subscribers}`;
/** The relay on each of its transports (its HTTP storm against raw-http's); every other system on its primary one. */
const transportsIn = (system: SystemName): readonly Transport[] => (system === "relay" ? transportsOf(system) : [primaryTransport(system)]);
/** Changes before the drop, so every subscriber holds a live resourceVersion to resume from. */
const LIVE_EVENTS = 10;
/** Pods in the collection when the storm starts: the missed changes fall on them (and those churn creates). */
const OBJECTS = 50;

export const storm: Scenario = {
  name: "storm",
  // The relay last: once its subscribers have left it stays busy for tens of seconds (measured
  // as `settledMs`), and the systems after it would be measured in its wake; relay-batched
  // most of all, being the same process, so it goes just before.
  systems: ["direct", "node-relay", "raw-ws", "raw-http", "workerd-floor", "relay-delta", "relay-batched", "relay"],
  namespaces: (sizes, systems) => sizes.storm.subscribers.flatMap((s) => systems.flatMap((name) => transportsIn(name).map((t) => namespaceOf(name, t, s)))),
  async run(context, systems) {
    const rows: StormRow[] = [];
    for (const subscribers of context.sizes.storm.subscribers) {
      for (const system of systems) {
        for (const transport of transportsIn(system.name)) {
          context.progress(`storm ${labelOf(system.name, transport)}: ${subscribers} subscribers resume after ${context.sizes.storm.missed} missed events`);
          rows.push(await runOne(context, system, transport, subscribers));
        }
      }
    }
    return rows;
  },
};

async function runOne(context: Context, system: System, transport: Transport, subscribers: number): Promise<StormRow> {
  const { sim, loadgens, sizes } = context;
  const namespace = inRound(namespaceOf(system.name, transport, subscribers), context.round);
  const path = podsOf(namespace);
  await context.quiesce();
  await sim.populate(namespace, OBJECTS);
  await loadgens.open(Array.from({ length: subscribers }, () => subscriber(system, transport, sim, path)));
  const live = await sim.step(namespace, LIVE_EVENTS);
  const synced = await loadgens.waitFor(live, sizes.storm.timeoutMs);
  if (synced.missing > 0) throw new Error(`storm ${system.name}: ${synced.missing} subscribers never saw resourceVersion ${live}`);

  await loadgens.drop();
  await sleep(200);
  await waitIdle([...system.pids, sim.pid]);
  const seq = await sim.requestSeq();
  const target = await sim.step(namespace, sizes.storm.missed);
  // The system must hold the missed events before anyone asks for them.
  await until(async () => (await system.head(path)) >= target, sizes.storm.timeoutMs, 50);

  const started = Date.now();
  const { result, ...cpu } = await cpuWhile(context, system, () => loadgens.resume(target, sizes.storm.timeoutMs));
  const requests = await sim.requestsSince(seq, namespace);
  await loadgens.close();
  const settledMs = await waitIdle([...system.pids, sim.pid], { maxMs: sizes.storm.settleMs });

  const times = result.caughtUpAt.map((at) => at - started);
  const complete = result.missing === 0;
  return {
    scenario: "storm",
    system: system.name,
    transport,
    subscribers,
    missedEvents: sizes.storm.missed,
    catchUpMs: complete ? Math.max(0, ...times) : null,
    catchUpP50Ms: percentileOf(times, 50) ?? null,
    caughtUp: result.caughtUpAt.length,
    objects: OBJECTS,
    bytesPerSubscriber: result.caughtUpAt.length > 0 ? Math.round(result.bytes / subscribers) : null,
    upstreamRequests: requests.length,
    upstreamWatches: requests.filter((r) => r.verb === "watch").length,
    upstreamLists: requests.filter((r) => r.verb === "list").length,
    errors: result.errors,
    settledMs: settledMs === undefined ? null : Math.round(settledMs),
    ...cpuFields(cpu),
  };
}
