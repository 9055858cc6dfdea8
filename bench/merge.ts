/**
 * @module
 * `--merge`: a later run's scenarios (and profiles, if it took them) in place of the amended run's,
 * each amendment recorded for the report to say which run measured what.
 */
import type { Results, Row } from "./rows.ts";

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
      },
    ],
  };
}

/** What an amendment replaced, as the report names it: "fanout and storm rows", "profiles", or both. */
export function amendedParts(amendment: NonNullable<Results["amendments"]>[number]): string {
  const parts = [...(amendment.scenarios.length > 0 ? [`${amendment.scenarios.join(" and ")} rows`] : []), ...(amendment.profiles ? ["profiles"] : [])];
  return parts.join(" and the ");
}
