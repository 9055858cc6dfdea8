/**
 * @module
 * What a scenario is given and what it gives back. A scenario names the simulator namespaces
 * it needs up front (the simulator seeds them at start, so every run begins from the same
 * state) and runs every system it applies to on the same workload, one after the other.
 */
import type { Loadgens } from "../loadgens.ts";
import type { Sizes } from "../modes.ts";
import type { Row, Skipped } from "../rows.ts";
import type { Sim } from "../sim.ts";
import type { System, SystemName } from "../systems/system.ts";

export interface Context {
  sim: Sim;
  loadgens: Loadgens;
  sizes: Sizes;
  /** Which round of the run this is (0-based; see `rounds.ts`): its namespaces are `inRound` of the scenario's. */
  round: number;
  /** Every process of the bench (this one and all it started), to tell its load from the machine's. */
  benchPids: readonly number[];
  /** Wait until every system and the simulator are idle: a measurement starts only once what came before it (in any system: a storm's replay can outlast its subscribers) has drained. */
  quiesce(): Promise<void>;
  progress(line: string): void;
  /** Record a measurement not made, with the reason (it appears in the report). */
  skip(skipped: Skipped): void;
  /** Where child processes log and keep their state (a scenario that starts processes of its own puts theirs there too). */
  logDir: string;
  /** Record processes a scenario started itself (the report lists them; a test checks none outlived the run). */
  started(processes: ReadonlyArray<{ role: string; pid: number }>): void;
}

export interface Scenario {
  name: "fanout" | "burst" | "storm" | "keys" | "sockets" | "snapshot" | "hot" | "views" | "big" | "hubs" | "fleet";
  /** The systems this scenario compares (others have nothing to measure here). */
  systems: readonly SystemName[];
  /** The first round's; a later round's are `inRound` of these. */
  namespaces(sizes: Sizes, systems: readonly SystemName[]): string[];
  /** Its namespaces' pods are slim (about 2.5 KB of JSON) rather than the usual 4.3 KB. */
  slimPods?: boolean;
  /** Measured in the first round only, however many `--rounds` (a scenario of many minutes: its rows are of one round). */
  once?: boolean;
  /** Runs before any scenario or profile, while every process is fresh: for what the load of earlier measurements would distort (resident memory depends on what an allocator already holds). */
  prelude?(context: Context, systems: readonly System[]): Promise<void>;
  run(context: Context, systems: readonly System[]): Promise<Row[]>;
}

/** Pods of one namespace: the collection every scenario watches. */
export const podsOf = (namespace: string): string => `/api/v1/namespaces/${namespace}/pods`;
