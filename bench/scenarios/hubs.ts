/**
 * @module
 * `hubs`: `keys` hubs (distinct selectors) of one collection in one isolate, a subscriber on each:
 * the isolate's JS heap against the platform's 128 MB, which they share.
 */
import { deliveryFields, traceMemory } from "../measure.ts";
import type { HubsRow } from "../rows.ts";
import { subscriber } from "../systems/system.ts";
import { BIG_POD_ANNOTATIONS } from "./big.ts";
import { keySelector } from "./keys.ts";
import { churnWindow, hubStats, OWN, stepCost, withOwn, type HubStats } from "./own.ts";
import { podsOf, type Scenario } from "./scenario.ts";

const NAMESPACE = "hubs";
const PATH = podsOf(NAMESPACE);

export const hubs: Scenario = {
  name: "hubs",
  systems: ["relay"],
  ...OWN,
  run: (context, systems) =>
    withOwn(context, systems, "hubs", { namespaces: [NAMESPACE] }, async (own) => {
      const size = context.sizes.hubs;
      const { sim, context: ownContext } = own;
      const { loadgens } = ownContext;
      const relay = own.relay.relay;
      const progress = (line: string) => context.progress(`hubs: ${line}`);
      const objects = await sim.populate(NAMESPACE, size.objects, BIG_POD_ANNOTATIONS);
      if (objects !== size.objects) throw new Error(`hubs: the simulator holds ${objects} pods, not ${size.objects}`);
      /** Every hub's stats, summed. */
      const total = async (): Promise<HubStats> => {
        const all: HubStats[] = [];
        for (let i = 0; i < size.keys; i += 20) {
          all.push(...(await Promise.all(Array.from({ length: Math.min(20, size.keys - i) }, (_, j) => hubStats(own.relay.info.url, PATH, keySelector(i + j))))));
        }
        const sum = (field: "rowsWritten" | "storageBytes" | "memoryBytes" | "objects") => all.reduce((n, s) => n + s[field], 0);
        return { ...(all[0] as HubStats), rowsWritten: sum("rowsWritten"), storageBytes: sum("storageBytes"), memoryBytes: sum("memoryBytes"), objects: sum("objects") };
      };
      const base = { scenario: "hubs" as const, system: "relay" as const, transport: "ws" as const, keys: size.keys, objects, subscribers: size.keys };

      progress(`${size.keys} hubs of ${objects} pods each, a WebSocket subscriber on each, opened at once`);
      await ownContext.quiesce();
      const opening = await traceMemory(relay, size.sampleMs, async () => {
        const started = Date.now();
        const specs = Array.from({ length: size.keys }, (_, i) => subscriber(relay, "ws", sim, PATH, keySelector(i)));
        return { ...(await loadgens.arrive(specs, { added: objects }, size.timeoutMs, 50)), started };
      });
      const opened = await total();
      if (opened.objects !== size.keys * objects) throw new Error(`hubs: the hubs hold ${opened.objects} objects, not ${size.keys} × ${objects}`);
      const { caughtUpAt, missing, started } = opening.result;
      const rows: HubsRow[] = [
        {
          ...base,
          step: "opening: every hub's first list and initial state",
          ms: missing === 0 ? Math.max(0, ...caughtUpAt.map((at) => at - started)) : null,
          upstreamWatches: await sim.watchesIn(NAMESPACE),
          ...stepCost(opening.memory, undefined, opened),
        },
      ];

      progress(`${size.churn} changes/s for ${size.churnMs / 1000} s, every hub getting every one`);
      const churned = await traceMemory(relay, size.sampleMs, () => churnWindow(own, NAMESPACE, size.churn, size.churnMs));
      const delivery = deliveryFields(churned.result, size.churn, size.keys);
      rows.push({
        ...base,
        step: `churn, ${size.churn} changes/s for ${size.churnMs / 1000} s`,
        ms: size.churnMs,
        upstreamWatches: await sim.watchesIn(NAMESPACE),
        deliveredPerSec: delivery.deliveredPerSec,
        p99Ms: delivery.p99Ms,
        cpuUsPerEvent: delivery.cpuUsPerEvent,
        ...stepCost(churned.memory, opened, await total()),
      });
      await loadgens.close();
      return rows;
    }),
};
