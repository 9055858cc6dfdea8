/**
 * @module
 * `snapshot`: a list of a large collection from the relay (its hub's storage) against the API
 * server's, whole and paged (as kubectl and informers list); the first request to the relay builds
 * the hub, the repeats are what later clients get. Then, alternately, consistent lists
 * (`resourceVersion` unset, DESIGN.md invariant 8) and lists of any state (`resourceVersion=0`),
 * timed and their upstream requests counted. Uncompressed, as the bytes are part of the answer;
 * the relay's lists once more gzip-coded, with its CPU per list.
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
      // The relay's lists again gzip-coded, as kubectl and client-go ask for them: each page compressed once, read by every repeat.
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
        const asked = await sim.requestsSince(seq, namespace);
        const median = (of: (w: TimedList) => number) => percentileOf(warm.map(of), 50) ?? 0;
        const ms = median((w) => w.ms);
        rows.push({
          scenario: "snapshot",
          system: system.name,
          transport: "http",
          objects,
          list,
          ...(list === "paged" ? { limit: pageLimit } : {}),
          ...(gzip ? { coding: "gzip" as const } : {}),
          cpuMs: round(cpuMs),
          coldMs: round(cold.ms),
          ms: round(ms),
          firstByteMs: round(median((w) => w.firstByteMs)),
          bytes: warm[0]?.bytes ?? cold.bytes,
          MBps: round((warm[0]?.bytes ?? cold.bytes) / 2 ** 20 / (ms / 1000)),
          upstreamRequests: asked.length,
          upstreamLists: asked.filter((r) => r.verb === "list").length,
        });
      }
      context.progress(`snapshot ${system.name}: ${samples} consistent lists and ${samples} at resourceVersion=0, alternately`);
      const timed = { consistent: [] as TimedList[], any: [] as TimedList[] };
      /** Where the request log was as each list began, and what each list was: to tell whose the upstream requests were. */
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
        const mine = asked.filter((r) => whose(r) === list);
        const times = timed[list].map((t) => t.ms);
        const firstBytes = timed[list].map((t) => t.firstByteMs);
        const ms = percentileOf(times, 50) ?? 0;
        const bytes = timed[list][0]?.bytes ?? cold.bytes;
        rows.push({
          scenario: "snapshot",
          system: system.name,
          transport: "http",
          objects,
          list,
          coldMs: round(cold.ms),
          ms: round(ms),
          firstByteMs: round(percentileOf(firstBytes, 50) ?? 0),
          bytes,
          MBps: round(bytes / 2 ** 20 / (ms / 1000)),
          upstreamRequests: mine.length,
          samples,
          p99Ms: round(percentileOf(times, 99) ?? 0),
          firstByteP99Ms: round(percentileOf(firstBytes, 99) ?? 0),
          upstreamLists: mine.filter((r) => r.verb === "list").length,
        });
      }
    }
    return rows;
  },
};
