/**
 * @module
 * `keys`: many distinct watch keys with a few subscribers each. Memory per key is read early in
 * the run, before idle hubs of later scenarios are evicted and hand memory back.
 */
import { connectThenChurn, deliveryFields, round } from "../measure.ts";
import type { KeysRow } from "../rows.ts";
import { primaryTransport, subscriber } from "../systems/system.ts";
import { podsOf, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const namespaceOf = (system: string, keys: number) => `keys-${system}-${keys}`;

/** Key `i`'s selector: a label no pod has, negated, so every key matches every pod and carries the full churn. */
export const keySelector = (i: number): string => `!bench-k${i}`;

export const keys: Scenario = {
  name: "keys",
  systems: ["relay", "relay-batched", "direct", "node-relay"],
  namespaces: (sizes, systems) => sizes.keys.keys.flatMap((k) => systems.map((name) => namespaceOf(name, k))),
  async run(context, systems) {
    const { sim, sizes } = context;
    const { subscribersPerKey, rate } = sizes.keys;
    const rows: KeysRow[] = [];
    for (const count of sizes.keys.keys) {
      for (const system of systems) {
        context.progress(`keys ${system.name}: ${count} selectors × ${subscribersPerKey} subscribers`);
        const namespace = inRound(namespaceOf(system.name, count), context.round);
        const transport = primaryTransport(system);
        const specs = Array.from({ length: count * subscribersPerKey }, (_, i) => subscriber(system, transport, sim, podsOf(namespace), keySelector(i % count)));
        const { window, upstreamWatches, addedKB } = await connectThenChurn(context, system, namespace, specs, sizes.keys);
        rows.push({
          scenario: "keys",
          system: system.name,
          transport,
          keys: count,
          subscribersPerKey,
          subscribers: specs.length,
          ...deliveryFields(window, rate, specs.length),
          upstreamWatches,
          memPerKeyKB: round(addedKB.rss / count),
          heapPerKeyKB: round(addedKB.heap / count),
        });
      }
    }
    return rows;
  },
};
