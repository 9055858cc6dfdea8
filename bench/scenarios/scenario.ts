/**
 * @module
 * What a scenario is given and gives back. It names its namespaces up front (the simulator seeds
 * them at start, so every run begins alike) and runs each of its systems on the same workload.
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
  /** 0-based (`rounds.ts`): its namespaces are `inRound` of the scenario's. */
  round: number;
  /** Every process of the bench (this one and all it started), to tell its load from the machine's. */
  benchPids: readonly number[];
  /** Wait until every system and the simulator are idle (a storm's replay can outlast its subscribers). */
  quiesce(): Promise<void>;
  progress(line: string): void;
  skip(skipped: Skipped): void;
  /** Where child processes log and keep their state. */
  logDir: string;
  /** Record processes a scenario started itself (a test checks none outlived the run). */
  started(processes: ReadonlyArray<{ role: string; pid: number }>): void;
}

export interface Scenario {
  name: "fanout" | "burst" | "storm" | "keys" | "sockets" | "snapshot" | "hot" | "views" | "big" | "hubs" | "fleet";
  systems: readonly SystemName[];
  /** The first round's; a later round's are `inRound` of these. */
  namespaces(sizes: Sizes, systems: readonly SystemName[]): string[];
  /** Its pods are slim (about 2.5 KB of JSON), not 4.3 KB. */
  slimPods?: boolean;
  /** Measured in the first round only, however many `--rounds`. */
  once?: boolean;
  /** Before any scenario or profile, on fresh processes (an allocator's earlier load skews RSS). */
  prelude?(context: Context, systems: readonly System[]): Promise<void>;
  run(context: Context, systems: readonly System[]): Promise<Row[]>;
}

export const podsOf = (namespace: string): string => `/api/v1/namespaces/${namespace}/pods`;
