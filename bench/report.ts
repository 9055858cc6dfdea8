/**
 * @module
 * The run as a report: tables on stdout, and BENCHMARKS.md, all from the run's results.
 */
import type { ChartFile } from "./charts.ts";
import { limits, profileReading, summary } from "./findings.ts";
import { bigReading } from "./heap.ts";
import type { Machine } from "./machine.ts";
import { amendedParts } from "./merge.ts";
import { hotSection, hotTable } from "./report-hot.ts";
import { viewsSection, viewsTable } from "./report-views.ts";
import type { BigRow, BurstRow, FanoutRow, FleetRow, HotRow, HubsRow, KeysRow, ProfileSummary, Results, SnapshotRow, SocketsRow, StormRow, ViewsRow } from "./rows.ts";
import { factsOf, SYSTEM_NAMES } from "./systems/catalog.ts";
import { bigTable, burstTable, fanoutRatios, fanoutTable, fleetTable, hubsTable, keysTable, num, rowsOf, snapshotTable, socketsTable, stormTable, table } from "./tables.ts";
import { checkTargets, HEAP_TARGET_MB } from "./targets.ts";

function targetsTable(results: Results): string {
  const rows = checkTargets(results.rows).map((t) => [t.target, t.measured, t.met === undefined ? "–" : t.met ? "yes" : "**no**"]);
  return table(["target", "measured", "met"], rows);
}

export function printTables(results: Results): void {
  const sections: Array<[string, string, boolean]> = [
    ["fanout", fanoutTable(rowsOf<FanoutRow>(results, "fanout")), true],
    ["fanout, WebSocket: each framing of the relay against each system", fanoutRatios(rowsOf<FanoutRow>(results, "fanout"), "ws"), rowsOf(results, "fanout").length > 0],
    ["fanout, HTTP watches: the relay against each system", fanoutRatios(rowsOf<FanoutRow>(results, "fanout"), "http"), rowsOf<FanoutRow>(results, "fanout").some((r) => r.transport === "http")],
    ["burst", burstTable(rowsOf<BurstRow>(results, "burst")), true],
    ["storm", stormTable(rowsOf<StormRow>(results, "storm")), true],
    ["keys", keysTable(rowsOf<KeysRow>(results, "keys")), true],
    ["sockets", socketsTable(rowsOf<SocketsRow>(results, "sockets")), true],
    ["snapshot", snapshotTable(rowsOf<SnapshotRow>(results, "snapshot")), true],
    ["views", viewsTable(rowsOf<ViewsRow>(results, "views")), true],
    ["hot", hotTable(rowsOf<HotRow>(results, "hot")), true],
    ["big", bigTable(rowsOf<BigRow>(results, "big")), true],
    ["hubs", hubsTable(rowsOf<HubsRow>(results, "hubs")), true],
    ["fleet", fleetTable(rowsOf<FleetRow>(results, "fleet")), true],
  ];
  for (const [name, text, show] of sections) if (show && results.rows.some((r) => name.startsWith(r.scenario))) console.log(`\n${name}\n${text}`);
  console.log(`\ntargets\n${targetsTable(results).replaceAll("**", "")}`);
}

/** Where a later run (`--merge`) measured some of the results. */
const amended = (a: NonNullable<Results["amendments"]>[number]) =>
  ` The ${amendedParts(a)} come from a later run on ${a.machine ? `another machine (kernel ${a.machine.kernel}; see Machine)` : "the same machine"}: \`${a.command}\` (${Math.round(a.durationMs / 1000)} s, ${a.startedAt.slice(0, 10)}${a.rounds === undefined ? "" : `, ${a.rounds === 1 ? "one round" : `${a.rounds} rounds`}`}).`;

const sizeList = (at: { subscribers: number[]; rates: number[] }) => `${at.subscribers.map(num).join(" and ")} subscribers × ${at.rates.map(num).join(" and ")} events/s`;

/** Others' share of the machine, where it was large enough to change what the run says. */
function disturbance(results: Results): string {
  const loads = results.rows.flatMap((r) => ("otherLoadPct" in r ? [r.otherLoadPct] : []));
  const mean = loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length);
  if (mean < BUSY_MACHINE_PCT) return "";
  return (
    ` This run shared the machine: processes outside the bench used ${num(mean)}% of a core on average during its measurements (at most ${num(Math.max(...loads))}%) of the ${results.machine.cores} cores' ${results.machine.cores * 100}%, ` +
    `so every system got less CPU than it would alone, and not equally: its events/s and latencies understate all of them, and the \`others' CPU %\` column says where most.`
  );
}

/** Mean CPU of processes outside the bench (% of one core) above which a run says so. */
const BUSY_MACHINE_PCT = 25;

/** The run's machine, and any other a later run (`--merge`) was measured on. */
function machineTable(results: Results): string {
  const machines: Array<[string, Machine]> = [
    ["this run", results.machine],
    ...(results.amendments ?? []).flatMap((a): Array<[string, Machine]> => (a.machine ? [[`the ${amendedParts(a)} (${a.startedAt.slice(0, 10)})`, a.machine]] : [])),
  ];
  return table(
    ["measured", "CPU", "cores", "memory", "kernel", "fresh page µs", "load average at start", "Node", "workerd", "wrangler", "ws", "@kubernetes/client-node"],
    machines.map(([what, m]) => [what, m.cpuModel, m.cores, `${m.memoryGiB} GiB`, m.kernel, m.freshPageUs, m.loadAverage, m.node, m.workerd, m.wrangler, m.ws, m.clientNode]),
  );
}

function profileSection(profile: ProfileSummary): string {
  return [
    `### ${profile.workload.name}`,
    "",
    profileReading(profile),
    "",
    table(
      ["stage", "ms", "% of busy", "µs per delivered event"],
      profile.stages.map((s) => [s.stage, s.ms, s.pctOfBusy, s.usPerEvent]),
    ),
    "",
    table(
      ["function (self time)", "module (natives: their caller's)", "ms", "% of busy"],
      profile.functions.slice(0, 12).map((f) => [`\`${f.name}\``, f.module, f.ms, f.pctOfBusy]),
    ),
  ].join("\n");
}

export function markdown(results: Results, charts: ChartFile[]): string {
  const { sizes } = results;
  const fanout = rowsOf<FanoutRow>(results, "fanout");
  const bullets = (lines: string[]) => lines.flatMap((l) => (l === "" ? [] : [`- ${l}`])).join("\n");
  const date = results.startedAt.slice(0, 10);
  const sections = [
    `# Benchmarks`,
    `<!-- Written by \`npm run bench\` (bench/report.ts) from bench/results/latest.json: change the generator, not this file. -->`,
    `kube-watch-relay's fan-out, over WebSocket and over HTTP watches (what kubectl and informers use), under steady churn and in a burst of changes, measured against the alternatives on the same workloads, in one run: \`${results.command}\` ` +
      `(${results.mode} mode, ${Math.round(results.durationMs / 1000)} s, ${date}). \`npm run bench -- --full\` adds 5,000 subscribers (2,000 in the burst) and longer windows; ` +
      `\`--smoke\` is the seconds-long run the tests use. The machine is shared and noisy, so compare systems by their ratios within this run, ` +
      `and by CPU time per delivered event, which does not depend on how much of the machine a system happened to get.` +
      ((results.rounds ?? 1) > 1
        ? ` Every scenario was measured ${results.rounds} times, every system in each round, on fresh collections: each row is a system's median round (by delivered events/s; a storm by its catch-up time, a snapshot by its time), ` +
          `a throughput target gives its ratio in each round too, and a latency target is judged on the median of its rounds' p99.` +
          (results.rows.some((r) => r.scenario === "big" || r.scenario === "hubs" || r.scenario === "fleet") ? " The big, hubs and fleet scenarios, many minutes each, were measured once." : "")
        : "") +
      (results.amendments ?? []).map(amended).join("") +
      disturbance(results),
    `## Summary`,
    bullets(summary(results)),
    `## Targets`,
    targetsTable(results),
    limits(results).join("\n\n"),
    `## Method`,
    `### Systems`,
    bullets([
      ...SYSTEM_NAMES.filter((name) => results.rows.some((r) => r.system === name)).map((name) => factsOf(name).about(sizes)),
      "The Node baselines cut off a subscriber with more than 4 MiB unsent, as the relay does by default (a WebSocket with the relay's close code 4008, an HTTP watch ended as the API server ends one), so none of them buffers without bound.",
    ]),
    `### Workload and measurements`,
    bullets([
      "The upstream is the project's simulated API server (`src/sim`) in its own process: realistic pods (about 4.3 KB of JSON each; slim ones of about 2.5 KB in the burst), churned on one namespace per measurement. " +
        "Every write stamps `sim.kube-watch-relay.dev/written-at` (ms); latency is the subscriber's receipt time minus that stamp (same clock, 1 ms resolution).",
      "Subscribers watch over a WebSocket (`transport` ws) or, as kubectl, client-go and client-node informers do, over HTTP (`transport` http: `?watch=1`, a chunked response of newline-separated events). " +
        "Rows are per system and transport; the relay's WebSocket subscribers acknowledge, its HTTP ones are paced by TCP alone.",
      `Subscribers live in ${sizes.loadgens} load-generator child processes, which split events out of the bytes (HTTP chunks and batched messages into lines) and read each event's resourceVersion and stamp straight out of them, without parsing JSON. ` +
        "Their CPU is reported (`loadgen CPU %`: all of them, the busiest in brackets; 100% is one core): a load generator near 100% would be the bottleneck.",
      "CPU and resident memory (RSS) come from `/proc` for each system's own processes; `others' CPU %` is what processes outside the bench used meanwhile. " +
        "JS heap is the live heap after a full collection (the isolate's, through the inspector, for the workerd systems).",
      `fanout: fresh subscribers on a fresh collection for every measurement; ${sizes.fanout.warmupMs / 1000} s of churn before a ${sizes.fanout.measureMs / 1000} s window. ` +
        `HTTP watches are measured at ${sizeList(sizes.fanout.http)} (direct's too, its only transport). ` +
        "`% of S×upstream` is delivered events over subscribers × upstream events: below about 100% a system is overloaded, its queue grows through the window, and its latency measures the window's length. " +
        "`upstream conns` is the most watches held open on the API server at once (sampled three times); `re-watches` the watch requests made during the window (the API server ends a watch that falls 16 MiB behind, and the watcher comes back). " +
        `Idle memory is measured first of all, on fresh processes, at ${sizes.fanout.memorySubscribers.map(num).join(" and ")} subscribers: what one subscriber (which creates the hub or topic) to all of them added, per subscriber ` +
        "(relay-batched, being the relay's process, right after the relay). `events/msg` is delivered events per WebSocket message received. " +
        "`KB/event` is a delivered event's text; `wire KB/event` the message payloads (or HTTP body) that carried it, smaller than its text only where the system compressed them (relay-gzip). " +
        "Resident memory also depends on what a process's allocator already holds, so it is indicative; the JS heap figure is exact.",
      `burst: ${sizes.burst.subscribers.map(num).join(" and ")} subscribers on a fresh collection of slim pods receive one change (so each is live), then ${num(sizes.burst.changes)} changes are made at once (in one turn of the simulator's event loop); ` +
        `each is timed from its write to its receipt by each subscriber, until every subscriber has the last (at most ${sizes.burst.timeoutMs / 1000} s). ` +
        "`delivered/s` is the events received over the time from the first change's write to the last receipt; `÷ raw` sets it against raw-ws's or raw-http's, on the same transport and upstream. Every system runs it over each transport it serves, " +
        "with the simulator writing the burst in one chunk, and again writing each change as a chunk of its own, in a turn of its event loop of its own (`chunkPerEvent`: as an API server streams a burst's events as they happen).",
      `storm: ${sizes.storm.subscribers.map(num).join(" and ")} subscribers receive a few live changes (so each holds a current resourceVersion), all drop at once, ${num(sizes.storm.missed)} changes are made, the system is given the time to hold them, ` +
        `and all reconnect at the same moment with their last resourceVersion; timed until the last has seen the newest change (at most ${sizes.storm.timeoutMs / 1000} s). Upstream requests are counted from the simulator's request log. ` +
        "Then every subscriber leaves, and `idle again after` is how long the system kept working (a system still sending to subscribers that have gone delays everything after it; every measurement waits for all systems to be idle first).",
      `keys: ${sizes.keys.keys.join(" and ")} distinct label selectors (\`!bench-k<i>\`, each matching every pod) × ${sizes.keys.subscribersPerKey} subscribers, ${sizes.keys.rate} events/s; ${sizes.keys.warmupMs / 1000} s of churn before a ${sizes.keys.measureMs / 1000} s window (the relay's hubs lengthen their gathers only once the runtime is behind, which takes the first seconds of the churn).`,
      rowsOf(results, "sockets").length === 0
        ? ""
        : `sockets: ${num(sizes.sockets.clients)} clients × ${sizes.sockets.watchesPerClient} watches (distinct selectors \`!bench-s<i>\` of one namespace, each matching every pod, so every watch carries the full churn), ${sizes.sockets.rate} events/s: ` +
          "each client on one relay socket (relay-socket) against a WebSocket per watch (relay-batched), the same events either way. `% of W×upstream` is delivered events over watches × upstream events; memory is what the relay process added per client as the clients connected.",
      rowsOf(results, "sockets").length === 0
        ? ""
        : "sockets, `own workerd`: the pair again on a relay started with its mux objects in a second workerd, relay-socket's clients connected to it (next to their mux object, as deployed the Worker that admits a socket runs next to its object), relay-batched's to the first, next to the hubs. " +
          "The sockets targets of delivery and p99 are judged on that pair where it was measured: as deployed each object has a thread of its own, where on one thread the mux objects' turns lengthen the hubs' queue. " +
          "CPU per delivered event is judged on one thread: there both systems' work is in one process, while between two local workerds every message between a hub and a mux object also crosses a socket from one process to the other (Miniflare's dev registry), whose sending and receiving both count; deployed, that transport is the platform's, not the objects' CPU.",
      `snapshot: one list of ${num(sizes.snapshot.objects)} pods, uncompressed, timed to the last byte, whole and in pages of ${num(sizes.snapshot.pageLimit ?? 500)} (following continue tokens); the median of ${sizes.snapshot.repeats} repeats after the first. Then ${num(sizes.snapshot.samples ?? 0)} whole lists with \`resourceVersion\` unset (consistent reads: a watching hub first learns it has what the upstream had) and ${num(sizes.snapshot.samples ?? 0)} at \`resourceVersion=0\` (served at once), alternately, their median and p99, and the upstream requests each kind made.`,
      ...(rowsOf(results, "big").length === 0
        ? []
        : [
            `big: a simulator and a relay of its own (started as \`npm start\` starts it, its heap held to the platform's 128 MB), one namespace grown to ${num(sizes.big.objects)} pods of about 3.5 KB as the relay serves them (copies of seeded pods with four common annotations), one hub, step by step: ` +
              `the API server's own lists, whole and in pages of ${num(sizes.big.pageLimit)} (the baseline; the hub reads it in pages); the hub's first list (from the request that starts it until the hub is watching with every object), and the cold key's first requests, answered as the hub lists (the full list that starts it, and a list paged as kubectl pages it asked 2 s later), each to its first byte and its last; ` +
              `full lists through the relay (\`resourceVersion=0\`, and a consistent read, which first asks the API server for its resourceVersion) and a paged one; the initial state to ${num(sizes.big.subscribers)} subscribers at once over each transport (until each has every object), and to one watch-list (\`sendInitialEvents=true\`); ` +
              `${sizes.big.churnMs / 1000} s of the simulator's churn at ${num(sizes.big.churn)} changes/s with ${num(sizes.big.subscribers)} WebSocket subscribers; a resume for net changes (\`compact=true\`, as the project's client resumes) from the hub's horizon (its first list); ` +
              `${num(sizes.big.resumes)} subscribers resuming at once after ${num(sizes.big.missed)} changes; a relist after a 410 (the hub's upstream watch stalled, ${num(sizes.big.missed)} changes, then the history compacted and the watch expired); ` +
              `and a restart (workerd killed with SIGKILL, then started again on the same state), timed to the answer of the first request after it. A subscriber of the scenario's own watches from the first list on, so that the hub keeps its upstream watch between steps. ` +
              `At every step the relay's isolate's JS heap is read through the inspector after a full collection, every ${sizes.big.sampleMs / 1000} s while the step runs and once after it, beside workerd's RSS and the hub's own count of SQLite rows written and its storage (\`/_relay/stats\`).`,
            `hubs: a simulator and a relay of its own; ${num(sizes.hubs.keys)} distinct label selectors (each matching every pod) over one namespace of ${num(sizes.hubs.objects)} pods, so ${num(sizes.hubs.keys)} hubs of ${num(sizes.hubs.objects)} objects each in one workerd, ` +
              `a WebSocket subscriber on each, opened at once (until each has its whole initial state); then ${sizes.hubs.churnMs / 1000} s of churn at ${num(sizes.hubs.churn)} changes/s, which every hub gets. The JS heap is sampled as in big.`,
          ]),
      rowsOf(results, "fleet").length === 0
        ? ""
        : `fleet: one watch across clusters. ${num(sizes.fleet.clusters)} simulators, each a process of its own with one namespace of ${num(sizes.fleet.pods)} slim pods, relayed by one relay (as \`npm start\` serves it) as clusters \`fleet-0\`, \`fleet-1\`, … and watched as the merged key \`/clusters/fleet-0,fleet-1,…/api/v1/namespaces/fleet/pods\`. ` +
          `Every cluster's own key is listed first (a merged list leaves out a member that takes more than a second); then the merged list, cold (it builds the merge hub from its members' hubs) and warm, to its first byte and its last, and the watches open on the simulators (each counts its own). ` +
          `Live delivery: ${num(sizes.fleet.subscribers)} WebSocket subscribers on the merged key, every cluster churned at ${num(sizes.fleet.rate)} changes/s, ${sizes.fleet.warmupMs / 1000} s before a ${sizes.fleet.measureMs / 1000} s window; then the same subscribers each watching every cluster's own key (the same events, ${num(sizes.fleet.clusters)} watches each), and the relay's CPU per delivered event of each. ` +
          `A storm: the merged key's subscribers drop, every cluster makes ${num(sizes.fleet.missed)} changes, and all resume at once from their last resourceVersion. ` +
          `A member down: under churn, the last cluster's simulator closes its listener and every connection for ${sizes.fleet.downMs / 1000} s (its churn goes on); the others' delivery is measured over most of the outage, and once it answers again, how long until its hub holds what changed there meanwhile, and what it was asked. ` +
          `A view on the merged key: first frames (an order's first, which builds its index; a second window; one filtered by the Cluster column), then a live view of ${num(sizes.fleet.viewLimit)} rows youngest first (\`rows=object\`) under churn, each change of a row it shows timed from its write to the frame.`,
    ]),
    `### Machine`,
    machineTable(results),
    `## fanout`,
    fanoutTable(fanout),
    `Each WebSocket framing of the relay against each system, same size and rate (above 1× it is ahead on delivery, and behind on CPU per event):`,
    fanoutRatios(fanout, "ws"),
    ...(fanout.some((r) => r.transport === "http") ? [`The relay's HTTP watches against each system, same size and rate:`, fanoutRatios(fanout, "http")] : []),
    charts.map((c) => `![${c.title}](${c.file})`).join("\n"),
    `## burst`,
    burstTable(rowsOf<BurstRow>(results, "burst")),
    `## storm`,
    stormTable(rowsOf<StormRow>(results, "storm")),
    `## keys`,
    keysTable(rowsOf<KeysRow>(results, "keys")),
    ...(rowsOf(results, "sockets").length > 0 ? [`## sockets`, socketsTable(rowsOf<SocketsRow>(results, "sockets"))] : []),
    `## snapshot`,
    snapshotTable(rowsOf<SnapshotRow>(results, "snapshot")),
    `node-relay and raw-ws keep no list cache, so this compares the relay with the API server only.`,
    ...viewsSection(results),
    ...hotSection(results),
    ...(rowsOf(results, "big").length > 0
      ? [
          `## big`,
          `One hub holding a large collection, through every step of its life, against the platform's 128 MB a Durable Object's isolate has, and the ${HEAP_TARGET_MB} MB a hub is held to.`,
          bigTable(rowsOf<BigRow>(results, "big")),
          bigReading(results),
        ]
      : []),
    ...(rowsOf(results, "hubs").length > 0 ? [`## hubs`, `Many hubs sharing one isolate, and its 128 MB.`, hubsTable(rowsOf<HubsRow>(results, "hubs"))] : []),
    ...(rowsOf(results, "fleet").length > 0
      ? [`## fleet`, `One watch across clusters: a merged key over every cluster, against the same subscribers on each cluster's own key.`, fleetTable(rowsOf<FleetRow>(results, "fleet"))]
      : []),
    `## Where the relay's time goes`,
    `CPU profiles of the relay's isolate (the Worker and its hubs), taken through wrangler's inspector while the bench drives the load, on a fresh relay before the scenarios (\`bench/profile.ts\`; the raw profiles are written beside the results for Chrome DevTools). ` +
      `Samples are traced to source files through the bundle's module markers; a native function, or workerd's own JavaScript, is charged to the relay function that called it. ` +
      `Process-level CPU per event (the tables above) includes what a JS profile cannot see: kernel time for the sockets, and workerd's I/O outside the isolate lock. ` +
      `To take them alone: \`npm run bench -- --scenarios snapshot --systems relay,direct --out <dir>\` (the profiles run before any scenario), then open \`<dir>/relay-profile-*.cpuprofile\` in DevTools.`,
    ...results.profiles.map(profileSection),
    ...(results.skipped.length > 0
      ? [`## Not measured`, bullets(results.skipped.map((s) => `${s.scenario} ${s.system} (${s.transport}) at ${num(s.subscribers)} subscribers × ${num(s.eventsPerSec)} events/s: ${s.reason}.`))]
      : []),
  ];
  return `${sections.filter((s) => s.length > 0).join("\n\n")}\n`;
}
