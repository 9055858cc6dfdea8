/**
 * @module
 * The hot scenario in the report. Here every hub shares workerd's one thread, so a tree adds no
 * throughput: each object's load and the hop's cost are measured, and a model multiplies them out.
 */
import { atOf, fullest, hopAdded, keptUp, replicasOf, rootOf, sizesOf, type HotRow, type Results } from "./rows.ts";
import { columns, num, rowsOf } from "./tables.ts";

export const replicaCounts = (row: HotRow) =>
  replicasOf(row)
    .map((h) => num(h.subscribers))
    .join(", ");

const range = (values: number[]) => (values.length === 0 ? "–" : `${num(Math.min(...values))}–${num(Math.max(...values))}`);

export const hotTable = (rows: readonly HotRow[]): string =>
  columns(rows, [
    ["S", (r) => r.subscribers],
    ["ev/s", (r) => r.eventsPerSec],
    ["system", (r) => r.system],
    ["replicas (serving)", (r) => `${r.replicas === 0 ? "0" : `${r.replicas} (${r.replicasLive})`}${r.replicaWorkerd ? ", own workerd" : ""}`],
    ["root: sends to", (r) => rootOf(r)?.destinations],
    ["root: msgs/event", (r) => rootOf(r)?.messagesPerEvent],
    ["replicas' subscribers", (r) => range(replicasOf(r).map((h) => h.subscribers))],
    ["fullest replica: msgs/event", (r) => fullest(r)?.messagesPerEvent],
    ["upstream watches", (r) => r.upstreamWatches],
    ["delivered/s", (r) => r.deliveredPerSec],
    ["% of S×upstream", (r) => r.deliveredPct],
    ["p50 ms", (r) => r.p50Ms],
    ["p99 ms", (r) => r.p99Ms],
    ["CPU µs/event", (r) => r.cpuUsPerEvent],
    ["server CPU %", (r) => r.serverCpuPct],
    ["others' CPU %", (r) => r.otherLoadPct],
    ["cut-offs", (r) => r.cutOffs],
    ["5xx while building", (r) => r.refused],
    ["storm: missed", (r) => r.missedEvents],
    ["storm: all caught up ms", (r) => r.catchUpMs],
    ["storm: p50 ms", (r) => r.catchUpP50Ms],
    ["storm: back on replicas", (r) => r.stormOnReplicas],
    ["storm: upstream requests", (r) => r.stormUpstreamRequests],
    ["storm: failed reconnections", (r) => r.stormErrors],
  ]);

export function hotSection(results: Results): string[] {
  const rows = rowsOf<HotRow>(results, "hot");
  if (rows.length === 0) return [];
  const sizes = results.sizes.hot;
  const { tree, hop } = sizesOf(rows);
  const at = atOf(rows);
  const most = Math.max(...rows.filter((r) => r.subscribers === tree).map((r) => r.replicas));
  const hopReplicas = Math.max(0, ...rows.filter((r) => r.subscribers === hop).map((r) => r.replicas));
  const out = [
    `## hot`,
    `One key, ${num(tree ?? 0)} subscribers at ${num(sizes.rate)} events/s, one event per message (relay) and batched (relay-batched), without replicas and on ${sizes.replicas.join(", ")} replica hubs; ` +
      `then the extra hop alone: ${num(hop ?? 0)} subscribers without replicas and all on ${hopReplicas}. ` +
      `Each is measured over ${num(sizes.measureMs / 1000)} s after ${num(sizes.warmupMs / 1000)} s of churn, the hop's two over ${num((sizes.hop.measureMs ?? sizes.measureMs) / 1000)} s (a difference of tens of ms in p50 needs the longer window). ` +
      `Each replica count is a cluster of the relay whose \`subscribersPerHub\` is subscribers ÷ replicas (one simulated API server behind all). ` +
      `The tree is built as the relay builds it for subscribers that keep arriving: the root is filled with its share by watches the bench holds, then the measured subscribers come in waves of a share, each once the Worker's list of the key's replicas (kept 5 s) has expired and the replicas have reported, so the root places every wave; ` +
      `then the bench's watches leave and the root serves its replicas only, as it does once its own first subscribers have reconnected (their watches end every 30–60 minutes, and a hot root sends every newcomer to a replica). ` +
      `\`msgs/event\` is what a hub sent (WebSocket messages, HTTP chunks) per event it committed over the window, from \`/_relay/stats\` (\`?replica=\` for each replica). ` +
      `At the main size a storm follows: every subscriber drops, ${num(sizes.missed)} changes are made, all come back at once from their last resourceVersion; \`back on replicas\` is where they were once all had resumed.`,
    hotTable(rows),
  ];
  const placement = rows.find((r) => r.subscribers === tree && r.replicas === most && replicasOf(r).length > 1);
  const top = placement && fullest(placement);
  if (placement && top && tree !== undefined) {
    const share = tree / most;
    out.push(
      `**Placement, as measured:** with ${most} replicas the ${num(tree)} subscribers landed ${replicaCounts(placement)} (a share is ${num(share)}). ` +
        `The root names a region's replicas (as many as its subscribers fill, and one more) with the subscribers each last reported, and the Worker sends each newcomer to the emptiest of them, counting what it sent since: ` +
        `the fullest held ${num(top.subscribers)}, ${num(top.subscribers / share)}× a share. A fan-out's cost follows its fullest hub, so this is the figure the capacity below uses.`,
    );
  }
  out.push(...capacity({ tree, hop, most, hopReplicas, at }));
  return out;
}

/** The extra hop's CPU per upstream event (`cpuUs`); less than nothing is noise, and said so. */
export function hopCost(cpuUs: number, replicas: number, subscribers: number): string {
  const where = `measured at ${num(subscribers)} subscribers where both kept up`;
  if (cpuUs < 0)
    return `the extra hop's CPU did not show: the tree used ${num(-cpuUs)} µs less per upstream event than one hub, ${where}, which is this run's noise (or one hub's own batching) and not a saving`;
  return `the extra hop cost ${num(cpuUs)} µs of CPU per upstream event for ${replicas} replicas (${num(cpuUs / replicas)} µs a replica: the root's message and the replica's intake), ${where}`;
}

/** One hub's delivery ceiling × replicas, with the hop's cost and the root's load. */
function capacity({ tree, hop, most, hopReplicas, at }: { tree: number | undefined; hop: number | undefined; most: number; hopReplicas: number; at: ReturnType<typeof atOf> }): string[] {
  const lines: string[] = [];
  for (const system of ["relay", "relay-batched"] as const) {
    const solo = at(system, tree, 0);
    const spread = at(system, tree, most);
    if (!solo?.cpuUsPerEvent || !spread || tree === undefined) continue;
    const perCore = 1e6 / solo.cpuUsPerEvent;
    const even = tree / most;
    const top = fullest(spread)?.subscribers ?? even;
    const rootPerEvent = rootOf(spread)?.messagesPerEvent ?? most;
    // CPU where every hub is in one process (the difference is the hop's work); p50 where split.
    const shared = [at(system, hop, 0), at(system, hop, hopReplicas)];
    const hopCpu = keptUp(shared) && hopReplicas > 0 ? (shared[1].serverCpuPct * 1e4) / shared[1].upstreamEventsPerSec - (shared[0].serverCpuPct * 1e4) / shared[0].upstreamEventsPerSec : undefined;
    const split = at(system, hop, hopReplicas, true) !== undefined;
    const timed = [at(system, hop, 0, split), at(system, hop, hopReplicas, split)];
    const hopP50 = keptUp(timed) ? hopAdded(timed[0], timed[1]).added : undefined;
    const rate = (subscribersOnHub: number) => perCore / subscribersOnHub;
    lines.push(
      `**Capacity deployed, ${system}** (a model from this run's numbers). Here one workerd thread ran every hub: without replicas it delivered ${num(solo.deliveredPerSec)} events/s (${num(solo.deliveredPct)}% of ${num(tree)} × ${num(solo.upstreamEventsPerSec)}/s) at ${num(solo.serverCpuPct)}% of a core; ` +
        `with ${most} replicas, ${num(spread.deliveredPerSec)} events/s (${num(spread.deliveredPct)}%), which is the same thread's work shared out, not more of it. ` +
        `The measured parts: a delivered event costs ${num(solo.cpuUsPerEvent)} µs of the process's CPU, so one core sends about ${num(perCore)} events/s; the root sent ${num(rootPerEvent)} messages per event (to its ${most} replicas) instead of ${num(tree)}; ` +
        (hopCpu !== undefined ? `${hopCost(hopCpu, hopReplicas, hop ?? 0)}; ` : "") +
        (hopP50 !== undefined
          ? `and ${hopP50 >= 0 ? "added" : "took"} ${num(Math.abs(hopP50))} ms ${hopP50 >= 0 ? "to" : "from"} p50 at ${num(hop ?? 0)} × ${num(timed[1]?.eventsPerSec ?? 0)} events/s (the median of the rounds' differences${split ? ", the replicas in a second workerd" : ", every hub on one thread"}). `
          : ". ") +
        `Deployed, each hub of the tree is its own object on its own thread, so a key's subscribers can take ${most} × ${num(perCore)} ≈ ${num(most * perCore)} events/s: ` +
        `at ${num(tree)} subscribers that is ${num(rate(even))} upstream events/s with them spread evenly (${num(even)} a replica), ${num(rate(top))} events/s with the fullest replica at ${num(top)} as placed here, against ${num(rate(tree))} events/s for one hub. ` +
        `The root's own load is ${most} messages and one intake per event, so it is not the limit until about ${num(perCore / Math.max(1, rootPerEvent))} events/s. ` +
        `Assumptions: every hub has a core of its own (Durable Objects are single-threaded and the platform places them apart; here they share one); a delivery costs what it cost here, the kernel's share of the sockets included; ` +
        `a message to a replica costs about one delivery; deployed, a replica in another region adds the network between the regions to the hop (not measured: locally the hop stays inside one machine), which is what a replica near its subscribers is for; subscribers are placed as measured above.`,
    );
  }
  if (lines.length > 0)
    lines.push(
      `**The hop on a thread of its own.** The hop's pair is measured twice: on the relay every other row measures, where the root, its replicas and every send share one workerd thread (so the tree's p50 is that thread's queue, which the replicas' turns lengthen), ` +
        `and on a relay started with its replica hubs in a second workerd (\`REPLICA_WORKERD=1\`, \`own workerd\` in the table), which reaches the root and every other object through Miniflare's dev registry, as deployed each hub has a thread of its own. ` +
        `There one hub's subscribers connect to the first workerd, next to their hub, and a tree's to the second, next to its replicas (as deployed, the Worker that admits a replica's subscribers runs near them), so only the root's messages to its replicas cross between the two. ` +
        `The target is judged on the second, where each hub has a thread as deployed (the machine's cores shared by both workerds, the load generators and the API server). On one thread the difference is that thread's queue, which the replica's turns lengthen.`,
    );
  return lines;
}
