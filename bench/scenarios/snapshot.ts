/**
 * @module
 * `snapshot`: a large collection listed from the relay against the API server, whole and paged,
 * uncoded (and the relay's gzip-coded); then consistent lists against lists of any state.
 */
import { pagedList, timedList, type TimedList } from "../listing.ts";
import { round } from "../measure.ts";
import type { SnapshotRow } from "../rows.ts";
import type { LoggedRequest } from "../../src/sim/index.ts";
import { percentileOf } from "../stats.ts";
import { podsOf, type Scenario } from "./scenario.ts";
import { inRound } from "../rounds.ts";
import { cpuMeter } from "../proc.ts";

const NAMESPACE = "snapshot";

export const snapshot: Scenario = {
  name: "snapshot",
  systems: ["relay", "direct"],
  namespaces: () => [NAMESPACE],
  async run(context, systems) {
    const { sim, sizes } = context;
    const { repeats, pageLimit, samples } = sizes.snapshot;
    const namespace = inRound(NAMESPACE, context.round);
    context.progress(`snapshot: growing the collection to ${sizes.snapshot.objects} pods`);
    const objects = await sim.populate(namespace, sizes.snapshot.objects);
    const rows: SnapshotRow[] = [];
    for (const system of systems) {
      if (!system.listBase) continue;
      context.progress(`snapshot ${system.name}: list of ${objects} pods, whole and in pages of ${pageLimit}`);
      const url = `${system.listBase}${podsOf(namespace)}`;
      await context.quiesce();
      const cold = await timedList(url);
      if (cold.items !== objects) throw new Error(`snapshot ${system.name}: listed ${cold.items} pods, expected ${objects}`);
      /** A row of `reads` of one kind: their medians, and the upstream requests they made. */
      const rowOf = (list: SnapshotRow["list"], reads: readonly TimedList[], asked: readonly LoggedRequest[], fields: Partial<SnapshotRow>): SnapshotRow => {
        const median = (of: (w: TimedList) => number) => percentileOf(reads.map(of), 50) ?? 0;
        const [ms, bytes] = [median((w) => w.ms), reads[0]?.bytes ?? cold.bytes];
        return {
          scenario: "snapshot",
          system: system.name,
          transport: "http",
          objects,
          list,
          coldMs: round(cold.ms),
          ms: round(ms),
          firstByteMs: round(median((w) => w.firstByteMs)),
          bytes,
          MBps: round(bytes / 2 ** 20 / (ms / 1000)),
          upstreamRequests: asked.length,
          upstreamLists: asked.filter((r) => r.verb === "list").length,
          ...fields,
        };
      };
      const codings = system.name === "relay" ? ([false, true] as const) : ([false] as const);
      for (const [list, gzip] of (["full", "paged"] as const).flatMap((l) => codings.map((g) => [l, g] as const))) {
        const seq = await sim.requestSeq();
        const warm: TimedList[] = [];
        const cpu = cpuMeter(system.pids);
        const started = performance.now();
        for (let i = 0; i < repeats; i++) {
          const read = list === "full" ? await timedList(url, { gzip }) : await pagedList(url, pageLimit, { gzip });
          if (read.items !== objects) throw new Error(`snapshot ${system.name}: a ${list} list had ${read.items} pods, expected ${objects}`);
          if (gzip && !read.coded) throw new Error(`snapshot ${system.name}: a ${list} list asked for gzip came uncoded`);
          warm.push(read);
        }
        const cpuMs = (cpu() * (performance.now() - started)) / 100 / repeats;
        const limit = list === "paged" ? { limit: pageLimit } : {};
        rows.push(rowOf(list, warm, await sim.requestsSince(seq, namespace), { ...limit, ...(gzip ? { coding: "gzip" as const } : {}), cpuMs: round(cpuMs) }));
      }
      context.progress(`snapshot ${system.name}: ${samples} consistent lists and ${samples} at resourceVersion=0, alternately`);
      const timed = { consistent: [] as TimedList[], any: [] as TimedList[] };
      /** Where the request log was as each list began: whose the upstream requests were. */
      const starts: Array<{ seq: number; list: keyof typeof timed }> = [];
      const from = await sim.requestSeq();
      for (let i = 0; i < samples; i++) {
        for (const list of ["consistent", "any"] as const) {
          starts.push({ seq: await sim.requestSeq(), list });
          const read = await timedList(list === "any" ? `${url}?resourceVersion=0` : url);
          if (read.items !== objects) throw new Error(`snapshot ${system.name}: a ${list} list had ${read.items} pods, expected ${objects}`);
          timed[list].push(read);
        }
      }
      const asked = await sim.requestsSince(from, namespace);
      const whose = (request: LoggedRequest) => starts.findLast((s) => s.seq <= request.seq)?.list;
      for (const list of ["consistent", "any"] as const) {
        const p99 = (of: (t: TimedList) => number) => round(percentileOf(timed[list].map(of), 99) ?? 0);
        rows.push(
          rowOf(
            list,
            timed[list],
            asked.filter((r) => whose(r) === list),
            { samples, p99Ms: p99((t) => t.ms), firstByteP99Ms: p99((t) => t.firstByteMs) },
          ),
        );
      }
    }
    return rows;
  },
};
