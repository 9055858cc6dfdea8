/**
 * @module
 * `snapshot`: a list of a large collection from the relay (served from its hub's cache) against
 * the same list from the API server. The first request to the relay builds the hub (one paged
 * upstream list); the repeats are what every later client gets. Both uncompressed, as the
 * bytes on the wire are part of the answer.
 */
import { get } from "node:http";
import { round } from "../measure.ts";
import type { SnapshotRow } from "../rows.ts";
import { percentileOf } from "../stats.ts";
import { podsOf, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";

const NAMESPACE = "snapshot";

export const snapshot: Scenario = {
  name: "snapshot",
  systems: ["relay", "direct"],
  namespaces: () => [NAMESPACE],
  async run(context, systems) {
    const { sim, sizes } = context;
    const namespace = inRound(NAMESPACE, context.round);
    context.progress(`snapshot: growing the collection to ${sizes.snapshot.objects} pods`);
    const objects = await sim.populate(namespace, sizes.snapshot.objects);
    const rows: SnapshotRow[] = [];
    for (const system of systems) {
      if (!system.listBase) continue;
      context.progress(`snapshot ${system.name}: list of ${objects} pods`);
      const url = `${system.listBase}${podsOf(namespace)}`;
      await context.quiesce();
      const cold = await timedList(url);
      if (cold.items !== objects) throw new Error(`snapshot ${system.name}: listed ${cold.items} pods, expected ${objects}`);
      const seq = await sim.requestSeq();
      const warm: Array<{ ms: number; bytes: number }> = [];
      for (let i = 0; i < sizes.snapshot.repeats; i++) warm.push(await timedList(url));
      const upstreamRequests = (await sim.requestsSince(seq, namespace)).length;
      const ms =
        percentileOf(
          warm.map((w) => w.ms),
          50,
        ) ?? cold.ms;
      rows.push({
        scenario: "snapshot",
        system: system.name,
        transport: "http",
        objects,
        coldMs: round(cold.ms),
        ms: round(ms),
        bytes: cold.bytes,
        MBps: round(cold.bytes / 2 ** 20 / (ms / 1000)),
        upstreamRequests,
      });
    }
    return rows;
  },
};

/** GET a list, timed to its last byte, without compression; counts its items. */
function timedList(url: string): Promise<{ ms: number; bytes: number; items: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { accept: "application/json" } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`${url}: HTTP ${response.statusCode}`));
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => {
        const ms = performance.now() - started;
        const body = Buffer.concat(chunks);
        resolve({ ms, bytes: body.length, items: (JSON.parse(body.toString()) as { items: unknown[] }).items.length });
      });
      response.on("error", reject);
    }).on("error", reject);
  });
}
