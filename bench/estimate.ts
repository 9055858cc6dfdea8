/**
 * @module
 * How long a run will take: each scenario's seconds from its sizes and measurements, by a model
 * fitted to quick runs on 2 cores (docs/performance.md); a full run's is good to about a third.
 */
import type { ProfileWorkload, Sizes } from "./modes.ts";
import type { Scenario } from "./scenarios/scenario.ts";

const STARTUP_S = 6;

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const seconds = (ms: number) => ms / 1000;

/** A scenario's seconds for `n` measurements (`idle` of them fan-out's idle memory, no window). */
const SECONDS: Record<Scenario["name"], (sizes: Sizes, n: number, idle: number) => number> = {
  fanout: ({ fanout }, n, idle) => idle * 1.5 + (n - idle) * (seconds(fanout.warmupMs + fanout.measureMs) + 0.6 + mean(fanout.subscribers) / 1000),
  burst: ({ burst }, n) => n * (1 + mean(burst.subscribers) / 143),
  storm: ({ storm }, n) => n * (1 + mean(storm.subscribers) / 250),
  keys: ({ keys }, n) => n * (seconds(keys.warmupMs + keys.measureMs) + (mean(keys.keys) * keys.subscribersPerKey) / 100),
  sockets: ({ sockets }, n) => n * (seconds(sockets.warmupMs + sockets.measureMs) + (sockets.clients * sockets.watchesPerClient) / 250),
  snapshot: ({ snapshot }) => 7 + (snapshot.objects * (4 * snapshot.repeats + 2 * snapshot.samples)) / 10_000,
  // Building each tree (a wave a replica, each waiting out the Worker's 5 s list of replicas), then its window; the hop's windows are the longer.
  hot: ({ hot }, n) => n * (seconds(hot.warmupMs + (hot.measureMs + hot.hop.measureMs) / 2) + 2 + 2.8 * mean(hot.replicas) + hot.subscribers / 200),
  views: ({ views }) => views.objects / 1000 + 4 * seconds(views.warmupMs + views.measureMs) + views.views / 5,
  big: ({ big }) => big.objects / 1050 + seconds(big.churnMs),
  hubs: ({ hubs }) => (hubs.keys * hubs.objects) / 3600 + seconds(hubs.churnMs),
  fleet: ({ fleet }) => 10 + (fleet.clusters * fleet.pods) / 500 + 3 * seconds(fleet.warmupMs + fleet.measureMs) + seconds(fleet.downMs),
};

/** A CPU profile: its window, connecting its subscribers, and the profiler's start and stop. */
const profileSeconds = (w: ProfileWorkload) => seconds(w.ms) + (w.keys * w.subscribersPerKey) / 250 + 3;

export interface Estimate {
  totalS: number;
  parts: Array<{ name: string; s: number }>;
}

/** `scenarios` (each with one round's namespaces, one a measurement) at `sizes`, `rounds` times. */
export function estimate(sizes: Sizes, scenarios: ReadonlyArray<{ scenario: Scenario; namespaces: readonly string[] }>, rounds: number, profiling: boolean): Estimate {
  const parts = [
    ...scenarios.map(({ scenario, namespaces }) => ({
      name: scenario.name,
      s: SECONDS[scenario.name](sizes, namespaces.length, namespaces.filter((n) => n.endsWith("-idle")).length) * (scenario.once ? 1 : rounds),
    })),
    ...(profiling ? [{ name: "profiles", s: sizes.profiles.reduce((sum, w) => sum + profileSeconds(w), 0) }] : []),
  ];
  return { totalS: STARTUP_S + parts.reduce((sum, p) => sum + p.s, 0), parts };
}

/** "about 4.5 minutes (fanout 104 s, …)". */
export function estimateText({ totalS, parts }: Estimate): string {
  const total = totalS < 120 ? `${Math.round(totalS)} s` : `${(totalS / 60).toFixed(totalS < 600 ? 1 : 0)} minutes`;
  return `about ${total} (${parts.map((p) => `${p.name} ${Math.round(p.s)} s`).join(", ")}, and ${STARTUP_S} s to start)`;
}
