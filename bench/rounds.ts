/**
 * @module
 * Rounds: with `--rounds N` every scenario is measured N times, each time every system back to
 * back (so the machine's noise falls on all of them alike, round after round), on fresh
 * namespaces. A system's row is then its median round, by the scenario's headline figure, with
 * every round kept beside it: a ratio between systems can be read round by round, and how much
 * it moves is a number rather than a guess.
 */
import type { Row } from "./rows.ts";

/** Round `round`'s namespace (0-based): the first round keeps the scenario's own names. */
export const inRound = (namespace: string, round: number): string => (round === 0 ? namespace : `${namespace}-r${round + 1}`);

/** The fields that say what was measured (a row has those of its scenario): the rest are what was found. */
export const DIMENSIONS = [
  "scenario",
  "system",
  "transport",
  "subscribers",
  "eventsPerSec",
  "changes",
  "chunkPerEvent",
  "missedEvents",
  "keys",
  "clients",
  "objects",
  "replicas",
  "replicaWorkerd",
  "measurement",
  "list",
  "coding",
  "step",
] as const;

/** What identifies a measurement across rounds. */
function identity(row: Row): string {
  const fields = row as unknown as Record<string, unknown>;
  return DIMENSIONS.map((name) => String(fields[name] ?? "")).join(" ");
}

/**
 * The figure a round is ranked by: events delivered a second, or for a storm how long every
 * subscriber took to catch up (never: last), for a snapshot how long the list took, for a step
 * of a big collection, of many hubs or of a fleet how long it took (never: last).
 */
export function headline(row: Row): number {
  if (row.scenario === "storm") return row.catchUpMs ?? Number.POSITIVE_INFINITY;
  if (row.scenario === "snapshot") return row.ms;
  if (row.scenario === "big" || row.scenario === "hubs" || row.scenario === "fleet") return row.ms ?? Number.POSITIVE_INFINITY;
  return row.deliveredPerSec;
}

/** What `headline` reads from a row of this scenario, in words. */
export function headlineName(row: Row): string {
  if (row.scenario === "storm") return "catch-up ms";
  if (row.scenario === "snapshot") return "list ms";
  if (row.scenario === "big" || row.scenario === "hubs" || row.scenario === "fleet") return "ms";
  return "delivered/s";
}

/** The middle of `items` ranked by `by` (the lower middle of an even count). */
export function middle<T>(items: readonly T[], by: (item: T) => number): T | undefined {
  return [...items].sort((a, b) => by(a) - by(b))[Math.floor((items.length - 1) / 2)];
}

/** One row per measurement: its median round (the lower middle of an even count), with every round's row, in order, as `rounds`. A measurement made once is passed on unchanged. */
export function medianRounds(rounds: ReadonlyArray<readonly Row[]>): Row[] {
  const groups = new Map<string, Row[]>();
  for (const rows of rounds) {
    for (const row of rows) {
      const key = identity(row);
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
  }
  return [...groups.values()].map((group) => {
    if (group.length === 1) return group[0] as Row;
    return { ...(middle(group, headline) as Row), rounds: group };
  });
}
