/**
 * @module
 * `npm run bench`: the relay against the alternatives, on the same workloads, in one run; every
 * child process (each in a group of its own) is stopped on every way out.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeCharts } from "./charts.ts";
import { stopAllChildren } from "./children.ts";
import { Loadgens } from "./loadgens.ts";
import { describeMachine } from "./machine.ts";
import { merge } from "./merge.ts";
import { estimate, estimateText } from "./estimate.ts";
import { sizesFor, type Mode } from "./modes.ts";
import { descendants, waitIdle } from "./proc.ts";
import { profileNamespace, profileRelay } from "./profile.ts";
import { markdown, printTables } from "./report.ts";
import { inRound, medianRounds } from "./rounds.ts";
import type { ProfileSummary, Results, Row, Skipped } from "./rows.ts";
import { big } from "./scenarios/big.ts";
import { burst } from "./scenarios/burst.ts";
import { fanout } from "./scenarios/fanout.ts";
import { fleet } from "./scenarios/fleet.ts";
import { hot } from "./scenarios/hot.ts";
import { hubs } from "./scenarios/hubs.ts";
import { keys } from "./scenarios/keys.ts";
import type { Context, Scenario } from "./scenarios/scenario.ts";
import { snapshot } from "./scenarios/snapshot.ts";
import { sockets } from "./scenarios/sockets.ts";
import { storm } from "./scenarios/storm.ts";
import { views } from "./scenarios/views.ts";
import { Sim } from "./sim.ts";
import { SYSTEM_NAMES } from "./systems/catalog.ts";
import { directSystem } from "./systems/direct.ts";
import { startNodeSystem } from "./systems/node.ts";
import { startFloor, startProxiedRelay, startRelay, type Relay } from "./systems/workerd.ts";
import type { Launched, System, SystemName } from "./systems/system.ts";

/** Keys first (before idle hubs are evicted); storm last (a system can stay busy long after one). */
const SCENARIOS: readonly Scenario[] = [keys, fanout, sockets, burst, snapshot, views, hot, big, hubs, fleet, storm];
/** Scenarios a quick run leaves out, each minutes long even at its quick size. */
const FULL_ONLY: ReadonlyArray<Scenario["name"]> = ["keys", "views", "hot", "big", "hubs", "fleet"];

/** How each host starts, and the systems it serves; started only if one of them is measured. */
const LAUNCHERS: ReadonlyArray<{ systems: readonly SystemName[]; start(sim: Sim, logDir: string): Promise<Launched> }> = [
  { systems: ["relay", "relay-batched", "relay-delta", "relay-socket", "relay-gzip"], start: startRelay },
  { systems: ["relay-proxied"], start: startProxiedRelay },
  { systems: ["workerd-floor"], start: startFloor },
  { systems: ["direct"], start: async (sim) => ({ systems: [directSystem(sim)], processes: [] }) },
  ...(["node-relay", "raw-ws", "raw-http"] as const).map((name) => ({ systems: [name], start: (sim: Sim, logDir: string) => startNodeSystem(name, sim, logDir) })),
];
const ROOT = fileURLToPath(new URL("..", import.meta.url));

const USAGE = `usage: npm run bench -- [options]
  (default)          quick mode: 1,000 subscribers, a burst at 500; about 5 minutes on 2 cores;
                     not ${FULL_ONLY.join(", ")} (--scenarios runs them at quick sizes)
  --full             every scenario, also 100 and 5,000 subscribers (2,000 in the burst), longer
                     windows; well over an hour (the run says its estimate as it starts)
  --smoke            tiny sizes, every system and scenario, in seconds (the test runs this)
  --out DIR          write latest.json, the charts and BENCHMARKS.md to DIR
                     (default: bench/results, and BENCHMARKS.md at the repository root)
  --scenarios a,b    only these of ${SCENARIOS.map((s) => s.name).join(", ")}
  --systems a,b      only these of ${SYSTEM_NAMES.join(", ")}
  --merge            with --scenarios: replace only those scenarios' rows in the latest.json
                     already there, keeping the rest (the report says which run measured what)
  --burst-upstream U the burst with the simulator writing it as U: one-chunk (the changes made
                     together, written together), chunk-per-event (each written and sent alone,
                     as an API server streams a burst), or both (the default of --full and
                     --smoke; quick's is one-chunk)
  --rounds N         measure every scenario N times, all systems in each round, and report
                     each system's median round, with every round's figures beside it
                     (big, hubs and fleet, which take many minutes, are measured once whatever N)
  --no-profile       skip the CPU profiles of the relay
  --profile          with --merge: take the relay's CPU profiles too, in place of those
                     of the run it amends (a merged run takes none otherwise)
  --report-only      measure nothing: rewrite the charts and BENCHMARKS.md from the
                     latest.json already there (after a change to the report's generator)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      full: { type: "boolean", default: false },
      smoke: { type: "boolean", default: false },
      out: { type: "string" },
      scenarios: { type: "string" },
      systems: { type: "string" },
      rounds: { type: "string", default: "1" },
      "burst-upstream": { type: "string" },
      "no-profile": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      merge: { type: "boolean", default: false },
      "report-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const outDir = resolve(values.out ?? join(ROOT, "bench", "results"));
  const reportFile = values.out ? join(outDir, "BENCHMARKS.md") : join(ROOT, "BENCHMARKS.md");
  if (values["report-only"]) return report(JSON.parse(readFileSync(join(outDir, "latest.json"), "utf8")) as Results, outDir, reportFile);
  const mode: Mode = values.smoke ? "smoke" : values.full ? "full" : "quick";
  const names = pick(values.systems, SYSTEM_NAMES, "system");
  const all = SCENARIOS.map((s) => s.name);
  const byDefault = all.filter((name) => mode !== "quick" || !FULL_ONLY.includes(name));
  const chosen = pick(values.scenarios, byDefault, "scenario", all);
  const scenarios = SCENARIOS.filter((s) => chosen.includes(s.name));
  const measuredNames = scenarios.map((s) => s.name);
  const sizes = sizesFor(mode, availableParallelism());
  const upstreams: Record<string, boolean[]> = { "one-chunk": [false], "chunk-per-event": [true], both: [false, true] };
  if (values["burst-upstream"] !== undefined) {
    const burstUpstream = upstreams[values["burst-upstream"]];
    if (!burstUpstream) throw new Error(`--burst-upstream must be one of ${Object.keys(upstreams).join(", ")}, got ${values["burst-upstream"]}`);
    sizes.burst.chunkPerEvent = burstUpstream;
  }
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a whole number ≥ 1, got ${values.rounds}`);
  // A merged run takes profiles only when asked (they replace the amended run's).
  const profiling = !values["no-profile"] && (!values.merge || values.profile) && names.includes("relay");
  const amended = values.merge ? (JSON.parse(readFileSync(join(outDir, "latest.json"), "utf8")) as Results) : undefined;
  if (amended && amended.mode !== mode) throw new Error(`--merge: latest.json is a ${amended.mode} run, this one would be ${mode}`);
  // A merged run makes as many rounds as the rows it replaces are the median of.
  const replaces = amended?.rows.some((r) => scenarios.some((s) => s.name === r.scenario)) ?? false;
  if (amended && (amended.rounds ?? 1) !== rounds && replaces)
    throw new Error(`--merge: latest.json's rows are of ${amended.rounds ?? 1} round(s) each, this run would make ${rounds} (give --rounds ${amended.rounds ?? 1})`);
  mkdirSync(outDir, { recursive: true });
  const logDir = (workDir = mkdtempSync(join(tmpdir(), "kwr-bench-")));
  const started = Date.now();
  const progress = (line: string) => console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}`);
  progress(`${mode} mode; child processes' logs and state in ${logDir}`);

  const namesOf = (s: Scenario) => names.filter((n) => s.systems.includes(n));
  const firstRound = (s: Scenario) => s.namespaces(sizes, namesOf(s));
  const namespacesOf = (s: Scenario) => firstRound(s).flatMap((namespace) => Array.from({ length: rounds }, (_, round) => inRound(namespace, round)));
  const namespaces = [...new Set([...scenarios.flatMap(namespacesOf), ...(profiling ? sizes.profiles.map(profileNamespace) : [])])];
  const planned = scenarios.map((scenario) => ({ scenario, namespaces: firstRound(scenario) }));
  progress(`estimated: ${estimateText(estimate(sizes, planned, rounds, profiling))}`);
  const sim = await Sim.start({ namespaces, slimPodNamespaces: scenarios.filter((s) => s.slimPods).flatMap(namespacesOf) }, logDir);
  // Side by side: starting them is mostly waiting (wrangler's bundling, workerd's start).
  const [launched, loadgens] = await Promise.all([
    Promise.all(LAUNCHERS.filter((l) => l.systems.some((n) => names.includes(n))).map((l) => l.start(sim, logDir))),
    Loadgens.start(sizes.loadgens, logDir),
  ]);
  const systems = new Map<SystemName, System>(launched.flatMap((l) => l.systems.filter((s) => names.includes(s.name)).map((s) => [s.name, s] as const)));
  const relay = launched.find((l): l is Relay => "inspector" in l);
  const processes = [{ role: "sim", pid: sim.pid }, ...launched.flatMap((l) => l.processes), ...loadgens.pids.map((pid, i) => ({ role: `loadgen-${i}`, pid }))];
  progress(`started: ${processes.map((p) => `${p.role} (pid ${p.pid})`).join(", ")}`);

  const skipped: Skipped[] = [];
  const context: Context = {
    sim,
    loadgens,
    sizes,
    round: 0,
    benchPids: [process.pid, ...descendants(process.pid)],
    logDir,
    quiesce: async () => void (await waitIdle([...new Set([sim.pid, ...[...systems.values()].flatMap((s) => s.pids)])])),
    progress,
    skip(entry) {
      if (skipped.some((s) => JSON.stringify(s) === JSON.stringify(entry))) return;
      skipped.push(entry);
      progress(`${entry.scenario} ${entry.system}: not run at ${entry.subscribers} subscribers, ${entry.eventsPerSec} events/s: ${entry.reason}`);
    },
    started: (more) => void processes.push(...more),
  };
  const systemsOf = (scenario: Scenario) => namesOf(scenario).map((n) => systems.get(n) as System);
  for (const scenario of scenarios) await scenario.prelude?.(context, systemsOf(scenario));
  const profiles: ProfileSummary[] = [];
  if (profiling && relay) {
    for (const workload of sizes.profiles) {
      profiles.push(await profileRelay(context, relay, workload, join(outDir, `relay-${profileNamespace(workload)}.cpuprofile`)));
    }
  }
  const measuredRounds: Row[][] = [];
  for (let round = 0; round < rounds; round++) {
    if (rounds > 1) progress(`round ${round + 1} of ${rounds}`);
    const rows: Row[] = [];
    for (const scenario of scenarios) if (round === 0 || !scenario.once) rows.push(...(await scenario.run({ ...context, round }, systemsOf(scenario))));
    measuredRounds.push(rows);
  }
  const rows = medianRounds(measuredRounds);

  const measured: Results = {
    machine: describeMachine(relay?.info.pid),
    mode,
    sizes,
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    ...(rounds > 1 ? { rounds } : {}),
    processes,
    rows,
    skipped,
    profiles,
  };
  const results = amended ? merge(amended, measured, measuredNames) : measured;
  writeFileSync(join(outDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  report(results, outDir, reportFile);
  progress(`done in ${((Date.now() - started) / 1000).toFixed(0)} s: ${relative(process.cwd(), join(outDir, "latest.json"))}, ${relative(process.cwd(), reportFile)}`);
}

function report(results: Results, outDir: string, reportFile: string): void {
  const charts = writeCharts(results, outDir).map((c) => ({ ...c, file: relative(resolve(reportFile, ".."), c.file) }));
  writeFileSync(reportFile, markdown(results, charts));
  printTables(results);
}

/** A comma-separated choice among `known`; `fallback` when not given. */
function pick<T extends string>(value: string | undefined, fallback: readonly T[], what: string, known: readonly T[] = fallback): T[] {
  if (value === undefined) return [...fallback];
  const chosen = value.split(",").map((s) => s.trim());
  const unknown = chosen.filter((c) => !known.includes(c as T));
  if (unknown.length > 0) throw new Error(`unknown ${what} ${unknown.join(", ")}; known: ${known.join(", ")}`);
  return chosen as T[];
}

/** The children's logs and state: kept after a failed run, to read. */
let workDir: string | undefined;
let exiting = false;
async function exit(code: number): Promise<never> {
  if (!exiting) {
    exiting = true;
    await stopAllChildren();
    if (workDir && code === 0) rmSync(workDir, { recursive: true, force: true });
    else if (workDir) console.error(`[bench] the child processes' logs are in ${workDir}`);
  }
  process.exit(code);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void exit(130));
main().then(
  () => exit(0),
  (error: unknown) => {
    console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void exit(1);
  },
);
