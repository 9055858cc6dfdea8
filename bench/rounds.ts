/**
 * @module
 * `--rounds N`: every scenario measured N times on fresh namespaces; a system's row is its median
 * round by the headline figure, every round kept beside it, so how much a ratio moves is a number.
 */
import type { Row } from "./rows.ts";

/** Round `round`'s namespace (0-based): the first keeps the scenario's own. */
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
  "muxWorkerd",
  "measurement",
  "list",
  "coding",
  "step",
] as const;

function identity(row: Row): string {
  const fields = row as unknown as Record<string, unknown>;
  return DIMENSIONS.map((name) => String(fields[name] ?? "")).join(" ");
}

/** The figure a round is ranked by: events/s delivered, or how long it took (never: last). */
export function headline(row: Row): number {
  if (row.scenario === "storm") return row.catchUpMs ?? Number.POSITIVE_INFINITY;
  if (row.scenario === "snapshot") return row.ms;
  if (row.scenario === "big" || row.scenario === "hubs" || row.scenario === "fleet") return row.ms ?? Number.POSITIVE_INFINITY;
  return row.deliveredPerSec;
}

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

/** One row per measurement: its median round, with every round's row as `rounds`. */
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
