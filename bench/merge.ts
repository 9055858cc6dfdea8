/**
 * @module
 * `--merge`: a later run's scenarios (and profiles, if it took them) in place of the amended run's,
 * each amendment recorded for the report to say which run measured what.
 */
import type { Machine } from "./machine.ts";
import type { Results, Row } from "./rows.ts";

/** What makes figures comparable: the hardware, the kernel (a virtual machine's build) and the runtimes. */
function sameMachine(a: Machine, b: Machine): boolean {
  return a.cpuModel === b.cpuModel && a.cores === b.cores && a.memoryGiB === b.memoryGiB && a.kernel === b.kernel && a.node === b.node && a.workerd === b.workerd;
}

export function merge(amended: Results, later: Results, scenarios: ReadonlyArray<Row["scenario"]>): Results {
  const profiled = later.profiles.length > 0;
  return {
    ...amended,
    sizes: later.sizes,
    rows: [...amended.rows.filter((r) => !scenarios.includes(r.scenario)), ...later.rows],
    skipped: [...amended.skipped.filter((s) => !scenarios.includes(s.scenario)), ...later.skipped],
    processes: [...amended.processes, ...later.processes],
    profiles: profiled ? later.profiles : amended.profiles,
    amendments: [
      ...(amended.amendments ?? []),
      {
        command: later.command,
        startedAt: later.startedAt,
        durationMs: later.durationMs,
        scenarios: [...scenarios],
        ...((later.rounds ?? 1) !== (amended.rounds ?? 1) ? { rounds: later.rounds ?? 1 } : {}),
        ...(profiled ? { profiles: true } : {}),
        // Only where it differs: the report says "on the same machine" otherwise.
        ...(sameMachine(amended.machine, later.machine) ? {} : { machine: later.machine }),
      },
    ],
  };
}

/** What an amendment replaced, as the report names it: "fanout and storm rows", "profiles", or both. */
export function amendedParts(amendment: NonNullable<Results["amendments"]>[number]): string {
  const parts = [...(amendment.scenarios.length > 0 ? [`${amendment.scenarios.join(" and ")} rows`] : []), ...(amendment.profiles ? ["profiles"] : [])];
  return parts.join(" and the ");
}
