/**
 * @module
 * What a run says, in sentences computed from its rows (so BENCHMARKS.md stays true); a finding
 * whose rows the run did not produce is left out.
 */
import { BATCH_PROTOCOL } from "../src/k8s/websocket.ts";
import { idleMemory, rowOf, type BurstRow, type FanoutRow, type KeysRow, type ProfileSummary, type Results, type SnapshotRow, type SocketsRow, type Stage, type StormRow } from "./rows.ts";
import { labelOf } from "./systems/catalog.ts";
import { primaryTransport, RELAY_MODES, type SystemName, type Transport } from "./systems/system.ts";
import { memoryGrowthText, num, rowsOf } from "./tables.ts";
import { heapSummary } from "./heap.ts";
import { AT_FLOOR, BURST_P99_MS, sizeFor } from "./targets.ts";

const x = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const seconds = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(0)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${num(ms)} ms`);
const defined = <T>(value: T | undefined): value is T => value !== undefined;
const perMessage = (events: number) => `${num(events)} event${events === 1 ? "" : "s"} a message`;

const caught = (results: Results, r: StormRow) =>
  r.catchUpMs !== null ? `all caught up in ${seconds(r.catchUpMs)}` : `${num(r.caughtUp)} of ${num(r.subscribers)} caught up within ${seconds(results.sizes.storm.timeoutMs)}`;
const settled = (results: Results, r: StormRow) => (r.settledMs === null ? `more than ${seconds(results.sizes.storm.settleMs)}` : seconds(r.settledMs));

/** The fan-out size the targets name (1,000 subscribers), or the largest measured; `at`, a row there. */
function fanoutAt(results: Results) {
  const rows = rowsOf<FanoutRow>(results, "fanout");
  const size = sizeFor(rows, 1000);
  const rates = [...new Set(rows.map((r) => r.eventsPerSec))].sort((a, b) => a - b);
  const at = (system: SystemName, rate: number, transport: Transport = primaryTransport(system)) => rowOf(rows, system, transport, (r) => r.subscribers === size && r.eventsPerSec === rate);
  return { size, rates, at, memory: (system: SystemName) => idleMemory(rows, system, size) };
}

/** The burst at the size the targets name (500 subscribers), or the largest the run measured. */
function burstAt(results: Results) {
  // In one chunk (the chunked variant has its own target).
  const rows = rowsOf<BurstRow>(results, "burst").filter((r) => !r.chunkPerEvent);
  const size = sizeFor(rows, 500);
  return { size, rows: rows.filter((r) => r.subscribers === size), at: (system: SystemName, transport: Transport) => rowOf(rows, system, transport, (r) => r.subscribers === size) };
}

export function summary(results: Results): string[] {
  const out: string[] = [];
  const { size, rates, at, memory } = fanoutAt(results);
  if (results.rows.some((r) => r.system === "relay-batched")) {
    out.push(
      `**Two framings of one relay:** \`relay\` sends one event per WebSocket message, which is the API server's framing, what every Kubernetes client reads, and the relay's default. ` +
        `\`relay-batched\` is opt-in: only a client that offers the \`${BATCH_PROTOCOL}\` subprotocol gets the events that were ready together in one message, newline-separated, and it must split them itself. ` +
        `Both are the same relay process; the figures below give both.`,
    );
  }
  for (const rate of rates) {
    const modes = RELAY_MODES.map((m) => at(m, rate)).filter(defined);
    const [relay, floor, node, raw] = (["relay", "workerd-floor", "node-relay", "raw-ws"] as const).map((s) => at(s, rate));
    if (modes.length === 0 || !floor || !node || !raw) continue;
    const all = [...modes, floor, node, raw];
    if (!all.every((r) => r.cpuUsPerEvent)) continue;
    const delivered = (r: FanoutRow) =>
      `${r.system} delivered ${num(r.deliveredPerSec)} events/s (${num(r.deliveredPct)}% of what was asked${r.system === "relay-batched" && r.eventsPerMessage ? `, ${perMessage(r.eventsPerMessage)}` : ""}): ` +
      `${r !== relay && relay ? `${x(r.deliveredPerSec, relay.deliveredPerSec)} relay, ` : ""}${x(r.deliveredPerSec, node.deliveredPerSec)} node-relay, ${x(r.deliveredPerSec, raw.deliveredPerSec)} raw-ws, ${x(r.deliveredPerSec, floor.deliveredPerSec)} workerd-floor`;
    out.push(
      `**Fan-out, ${num(size)} subscribers × ${num(rate)} events/s:** ${modes.map(delivered).join("; ")}. ` +
        `CPU per delivered event: ${all.map((r) => `${r.system} ${num(r.cpuUsPerEvent ?? 0)} µs`).join(", ")}.`,
    );
  }
  for (const rate of rates) {
    const [relay, raw, node, direct, overWs] = [at("relay", rate, "http"), at("raw-http", rate), at("node-relay", rate, "http"), at("direct", rate), at("relay", rate)];
    if (!relay || !raw) continue;
    const others = [raw, node, direct].filter(defined);
    out.push(
      `**HTTP watches, fan-out, ${num(size)} subscribers × ${num(rate)} events/s:** relay delivered ${num(relay.deliveredPerSec)} events/s (${num(relay.deliveredPct)}% of what was asked): ` +
        others.map((r) => `${x(relay.deliveredPerSec, r.deliveredPerSec)} ${labelOf(r.system, r.transport)}`).join(", ") +
        (overWs ? `, ${x(relay.deliveredPerSec, overWs.deliveredPerSec)} its own WebSocket delivery` : "") +
        `. CPU per delivered event: ${[relay, ...others].map((r) => `${labelOf(r.system, r.transport)} ${r.cpuUsPerEvent === null ? "–" : `${num(r.cpuUsPerEvent)} µs`}`).join(", ")}.`,
    );
  }
  out.push(...burstSummary(results));
  const [relay, direct] = [at("relay", rates[0] ?? 0), at("direct", rates[0] ?? 0)];
  if (relay && direct) {
    out.push(
      `**Upstream load:** ${num(relay.upstreamConnections)} upstream watch for ${num(size)} relay subscribers; ${num(direct.upstreamConnections)} for ${num(size)} direct ones, ` +
        `which cost the API server ${num(direct.upstreamCpuPct)}% of a core against ${num(relay.upstreamCpuPct)}% with the relay in front (at ${num(relay.eventsPerSec)} events/s).`,
    );
  }
  const [relayMemory, floorMemory] = (["relay", "workerd-floor"] as const).map(memory);
  if (relayMemory) {
    out.push(
      `**Memory per idle subscriber** (${num(relayMemory.subscribers)} subscribers): resident in the relay's workerd ${memoryGrowthText(relayMemory.rssKB)}, the relay's JS heap ${memoryGrowthText(relayMemory.heapKB)}` +
        (floorMemory ? `; workerd-floor, which keeps nothing per subscriber, adds ${memoryGrowthText(floorMemory.rssKB)} resident.` : "."),
    );
  }
  out.push(...proxyHop(results));
  const storms = rowsOf<StormRow>(results, "storm");
  const stormOf = (s: SystemName) => storms.find((r) => r.system === s && r.transport === primaryTransport(s));
  const [sDirect, sNode, sRaw] = (["direct", "node-relay", "raw-ws"] as const).map(stormOf);
  const sModes = RELAY_MODES.map(stormOf).filter(defined);
  const [sHttp, sRawHttp] = [storms.find((r) => r.system === "relay" && r.transport === "http"), stormOf("raw-http")];
  const sFirst = sModes[0];
  if (sFirst) {
    const idleAgain = [...sModes, sRaw].filter(defined).map((r) => `${r.system} ${settled(results, r)}`);
    out.push(
      `**Storm** (${num(sFirst.subscribers)} subscribers resume after ${num(sFirst.missedEvents)} missed events): ` +
        sModes.map((r) => `${r.system} ${caught(results, r)}, with ${num(r.upstreamRequests)} upstream requests`).join("; ") +
        (sDirect ? `; direct ${caught(results, sDirect)}, with ${num(sDirect.upstreamRequests)} upstream watch requests` : "") +
        (sRaw ? `; raw-ws ${caught(results, sRaw)}` : "") +
        (sHttp ? `; over HTTP watches, relay ${caught(results, sHttp)}${sRawHttp ? ` and raw-http ${caught(results, sRawHttp)}` : ""}` : "") +
        (sNode ? `; node-relay cannot resume, so its clients relisted: ${num(sNode.upstreamLists)} lists from the API server, ${caught(results, sNode)}` : "") +
        `. Once the subscribers had gone, each was idle again after: ${idleAgain.join(", ")}.`,
    );
  }
  const keys = rowsOf<KeysRow>(results, "keys");
  const [kRelay, kBatched, kDirect] = (["relay", "relay-batched", "direct"] as const).map((s) => keys.find((r) => r.system === s));
  if (kRelay) {
    out.push(
      `**Many keys** (${num(kRelay.keys)} selectors × ${num(kRelay.subscribersPerKey)} subscribers, ${num(kRelay.eventsPerSec)} events/s each): ${num(kRelay.upstreamWatches)} upstream watches` +
        (kDirect ? ` (direct: ${num(kDirect.upstreamWatches)})` : "") +
        `; the relay delivered ${num(kRelay.deliveredPct)}% of the events at ${num(kRelay.cpuUsPerEvent ?? 0)} µs of CPU each` +
        (kBatched ? ` (relay-batched: ${num(kBatched.deliveredPct)}% at ${num(kBatched.cpuUsPerEvent ?? 0)} µs, ${perMessage(kBatched.eventsPerMessage ?? 0)})` : "") +
        `, and each key (a hub) added resident memory: ${memoryGrowthText(kRelay.memPerKeyKB)}; JS heap: ${memoryGrowthText(kRelay.heapPerKeyKB)}.` +
        manyKeysSyncWait(results, kRelay),
    );
  }
  const sockets = rowsOf<SocketsRow>(results, "sockets");
  const [oSocket, oSeparate] = (["relay-socket", "relay-batched"] as const).map((s) => sockets.find((r) => r.system === s));
  if (oSocket && oSeparate) {
    const cost = (r: SocketsRow) =>
      `${num(r.deliveredPerSec)} events/s (${num(r.deliveredPct)}%), p99 ${num(r.p99Ms ?? 0)} ms, ${num(r.cpuUsPerEvent ?? 0)} µs of CPU an event, ${memoryGrowthText(r.memPerClientKB)} resident a client`;
    out.push(
      `**Many watches on one socket** (${num(oSocket.clients)} clients × ${num(oSocket.watchesPerClient)} watches, ${num(oSocket.eventsPerSec)} events/s): on one relay socket each (${num(oSocket.sockets)} WebSockets), ${cost(oSocket)}; ` +
        `on a WebSocket per watch (${num(oSeparate.sockets)}), ${cost(oSeparate)}. Both held ${num(oSocket.upstreamWatches)} upstream watches: the relay socket adds a hop inside the relay, not an upstream watch.`,
    );
  }
  const snapshots = rowsOf<SnapshotRow>(results, "snapshot");
  const [lRelay, lDirect] = (["relay", "direct"] as const).map((s) => snapshots.find((r) => r.system === s && r.list !== "paged" && !r.coding));
  const [pRelay, pDirect] = (["relay", "direct"] as const).map((s) => snapshots.find((r) => r.system === s && r.list === "paged" && !r.coding));
  if (lRelay && lDirect) {
    const paged = pRelay && pDirect ? ` In pages of ${num(pRelay.limit ?? 0)}: ${num(pRelay.ms)} ms from the relay against ${num(pDirect.ms)} ms from the API server.` : "";
    out.push(
      `**List snapshot** of ${num(lRelay.objects)} pods (${num(lRelay.bytes / 2 ** 20)} MB): ${num(lRelay.ms)} ms from the relay's storage against ${num(lDirect.ms)} ms from the API server ` +
        `(${x(lDirect.ms, lRelay.ms)} faster), ${num(lRelay.upstreamRequests)} upstream requests; the first list, which builds the hub from a paged upstream list, took ${seconds(lRelay.coldMs)}.${paged}${gzipSummary(snapshots, lRelay)}${consistentSummary(snapshots)}`,
    );
  }
  out.push(...heapSummary(results));
  return out;
}

function gzipSummary(snapshots: readonly SnapshotRow[], plain: SnapshotRow): string {
  const coded = snapshots.find((r) => r.system === "relay" && r.list === plain.list && r.coding === "gzip");
  if (!coded) return "";
  const cpu = plain.cpuMs && coded.cpuMs !== undefined ? `, ${num(coded.cpuMs)} ms of the relay's CPU a list against ${num(plain.cpuMs)} ms` : "";
  return ` Gzip-coded (as kubectl and client-go ask for it, each page compressed once): ${num(coded.bytes / 2 ** 20)} MB, ${x(plain.bytes, coded.bytes)} fewer bytes${cpu}.`;
}

function consistentSummary(snapshots: readonly SnapshotRow[]): string {
  const [consistent, any] = (["consistent", "any"] as const).map((list) => snapshots.find((r) => r.system === "relay" && r.list === list));
  if (!consistent || !any) return "";
  return (
    ` A consistent list (\`resourceVersion\` unset), timed ${num(consistent.samples ?? 0)} times: p50 ${num(consistent.ms)} ms, p99 ${num(consistent.p99Ms ?? 0)} ms, its first byte at ${num(consistent.firstByteMs ?? 0)} ms (p99 ${num(consistent.firstByteP99Ms ?? 0)} ms), ` +
    `against ${num(any.ms)} ms, ${num(any.p99Ms ?? 0)} ms and ${num(any.firstByteMs ?? 0)} ms (${num(any.firstByteP99Ms ?? 0)} ms) at \`resourceVersion=0\` (${num(consistent.upstreamRequests)} upstream requests, ${num(consistent.upstreamLists ?? 0)} of them lists).`
  );
}

const burstResult = (r: BurstRow) =>
  `${r.system} ${num(r.deliveredPerSec)} events/s, p99 ${r.p99Ms === null ? "–" : seconds(r.p99Ms)}${r.deliveredPct < 100 ? ` (${num(r.deliveredPct)}% delivered before the timeout)` : ""}`;

function burstSummary(results: Results): string[] {
  const { size, rows, at } = burstAt(results);
  const first = rows[0];
  if (!first) return [];
  const kb = (r: BurstRow) => (r.eventBytes === null ? "" : ` of ${num(r.eventBytes / 1024)} KB`);
  const parts = (["http", "ws"] as const).flatMap((transport) => {
    const relays = (transport === "http" ? (["relay"] as const) : RELAY_MODES).map((m) => at(m, transport)).filter(defined);
    const raw = at(transport === "http" ? "raw-http" : "raw-ws", transport);
    const others = rows.filter((r) => r.transport === transport && !relays.includes(r) && r.system !== "relay-proxied");
    if (relays.length === 0) return [];
    const relative = (r: BurstRow) => (raw && r !== raw ? ` (${x(r.deliveredPerSec, raw.deliveredPerSec)} ${raw.system})` : "");
    return [`over ${transport === "http" ? "HTTP" : "WebSocket"}, ${[...relays, ...others].map((r) => `${burstResult(r)}${relative(r)}`).join("; ")}`];
  });
  return [`**Burst** (${num(size)} subscribers, ${num(first.changes)} changes${kb(first)} made at once; events/s from the first change to the last receipt): ${parts.join(". And ")}.`];
}

/** What wrangler dev's proxy costs, in fan-out and in the burst, on each transport measured. */
function proxyHop(results: Results): string[] {
  const { rates, at } = fanoutAt(results);
  const burst = burstAt(results);
  const parts = (["ws", "http"] as const).flatMap((transport) => {
    const name = transport === "http" ? "HTTP" : "WebSocket";
    const fan = rates.map((rate) => [at("relay-proxied", rate, transport), at("relay", rate, transport)] as const).find(([p, r]) => p && r && p.cpuUsPerEvent && r.cpuUsPerEvent);
    const [bp, br] = [burst.at("relay-proxied", transport), burst.at("relay", transport)];
    const p99 = (r: BurstRow) => (r.p99Ms === null ? "–" : seconds(r.p99Ms));
    return [
      fan?.[0] && fan[1]
        ? `${name} fan-out (${num(fan[0].subscribers)} × ${num(fan[0].eventsPerSec)} events/s): ${x(fan[0].deliveredPerSec, fan[1].deliveredPerSec)} the relay's delivery at ${x(fan[0].cpuUsPerEvent ?? 0, fan[1].cpuUsPerEvent ?? 1)} its CPU per event`
        : undefined,
      bp && br ? `${name} burst: ${x(bp.deliveredPerSec, br.deliveredPerSec)} the relay's events/s, p99 ${p99(bp)} against ${p99(br)}` : undefined,
    ].filter(defined);
  });
  if (parts.length === 0) return [];
  return [
    `**The relay as \`npm run dev\` serves it** (\`relay-proxied\`: through the proxy worker of \`wrangler dev\`, both workerd processes counted): ${parts.join("; ")}. ` +
      `The other relay figures are the relay as \`npm start\` serves it: one workerd, nothing in front of the Worker, as in production.`,
  ];
}

/** CPU per event over a system's saturated (CPU-bound) fan-out measurements: steadier than one window. */
function saturatedCpuPerEvent(results: Results, system: SystemName, transport: Transport = primaryTransport(system)): number | undefined {
  const rows = rowsOf<FanoutRow>(results, "fanout").filter((r) => r.system === system && r.transport === transport && r.deliveredPct < 95 && r.cpuUsPerEvent !== null);
  const events = rows.reduce((n, r) => n + r.deliveredPerSec, 0);
  return events > 0 ? rows.reduce((n, r) => n + (r.cpuUsPerEvent as number) * r.deliveredPerSec, 0) / events : undefined;
}

export function limits(results: Results): string[] {
  const out: string[] = [];
  const { size, rates, at } = fanoutAt(results);
  const low = rates[0];
  const [relay, node] = low === undefined ? [] : [at("relay", low), at("node-relay", low)];
  const [cRelay, cFloor, cNode, cRaw] = (["relay", "workerd-floor", "node-relay", "raw-ws"] as const).map((s) => saturatedCpuPerEvent(results, s));
  if (relay && node && cRelay && cFloor && cNode && cRaw && relay.deliveredPct < 95 && relay.deliveredPerSec < node.deliveredPerSec) {
    const share = Math.min(100, (100 * cFloor) / cRelay);
    out.push(
      `**Delivered events/s** are limited by what one WebSocket message costs in workerd, and by workerd running a hub on one thread. ` +
        `Over this run's saturated fan-out measurements, workerd-floor, which only forwards the upstream's bytes, spent ${num(cFloor)} µs of CPU per delivered event and the relay ${num(cRelay)} µs: ` +
        (share >= 95
          ? cFloor > cRelay * 1.05
            ? `the floor spent more (it forwards the API server's own lines, longer than the relay's, to hibernatable sockets), so all of the relay's cost is the runtime's. `
            : `within noise of each other, so nearly all of the relay's cost is the runtime's. `
          : `about ${share.toFixed(0)}% of the relay's cost is the runtime's, and its own work (parsing, serialising, SQLite, its send loop and acknowledgements) the other ${(100 - share).toFixed(0)}%. `) +
        `Node's \`ws\` sends the same message for ${num(cRaw)} µs (raw-ws; node-relay ${num(cNode)} µs): per CPU-second, workerd-floor delivers ${(cNode / cFloor).toFixed(2)}× what node-relay does, ` +
        `so no relay in workerd reaches node-relay's events/s on the same core while it sends one WebSocket message per event per subscriber.` +
        batchedCost(rates, at),
    );
  }
  for (const mode of RELAY_MODES) {
    const row = low === undefined ? undefined : at(mode, low);
    const perEvent = saturatedCpuPerEvent(results, mode) ?? row?.cpuUsPerEvent ?? undefined;
    // Latency measures the queue only where the relay fell behind.
    if (!row || row.p99Ms === null || row.p99Ms <= 100 || row.deliveredPct >= 95 || !perEvent) continue;
    const demand = row.subscribers * row.upstreamEventsPerSec;
    const below = keptUp(results, mode);
    out.push(
      `**${mode} p99 latency at ${num(size)} × ${num(row.eventsPerSec)} events/s:** ${num(demand)} deliveries a second at ${num(perEvent)} µs each would need ${((demand * perEvent) / 1e6).toFixed(1)} cores; ` +
        `a hub has one. It delivered ${num(row.deliveredPct)}% of them, so its queue, and every event's wait in it, grew for the whole ${seconds(results.sizes.fanout.warmupMs + results.sizes.fanout.measureMs)} of churn: ` +
        `the latency measures the length of the run, not the relay.` +
        (below
          ? ` Below saturation (${num(below.subscribers)} × ${num(below.eventsPerSec)} events/s) its p99 is ${num(below.p99Ms ?? 0)} ms${(below.p99Ms ?? 0) <= 100 ? ", within the target" : ""}.`
          : ""),
    );
  }
  out.push(...httpFanoutLimit(results), ...burstLimits(results));
  const storms = rowsOf<StormRow>(results, "storm");
  for (const mode of RELAY_MODES) {
    const storm = storms.find((r) => r.system === mode && r.transport === "ws");
    if (!storm || (storm.catchUpMs !== null && storm.catchUpMs <= 2000)) continue;
    const events = storm.subscribers * storm.missedEvents;
    const bytes = relay?.eventBytes ? ` (${num((events * relay.eventBytes) / 2 ** 20)} MB)` : "";
    const perEvent = mode === "relay" ? (cRelay ?? relay?.cpuUsPerEvent ?? undefined) : undefined;
    const framing =
      mode === "relay"
        ? `is ${num(events)} WebSocket messages${bytes}${perEvent ? `; at the ${num(perEvent)} µs per message measured in fan-out, that is ${seconds((events * perEvent) / 1000)} of CPU on the hub's one thread` : ""}`
        : `is ${num(events)} events${bytes}, which ${mode} sends as replay slices of many events a message, to every subscriber in turn (so they finish together); ${caught(results, storm)}${rawBytes(results, storm, bytes)}`;
    out.push(
      `**Storm catch-up, ${mode}:** ${num(storm.subscribers)} subscribers × ${num(storm.missedEvents)} missed events ${framing}. ` +
        (storm.upstreamRequests === 0 ? `The resume itself is right (no upstream request, every subscriber served from the window)` : `It made ${num(storm.upstreamRequests)} upstream requests`) +
        (mode === "relay" ? `; its speed is the fan-out cost again.${floorStorm(storms)}` : ".") +
        (storm.settledMs === null || storm.settledMs > 2000
          ? ` And once the subscribers had gone, the relay stayed busy for ${settled(results, storm)} more: work for subscribers that were no longer there.`
          : ""),
    );
  }
  const relayMemory = idleMemory(rowsOf<FanoutRow>(results, "fanout"), "relay", size);
  const floorMemory = idleMemory(rowsOf<FanoutRow>(results, "fanout"), "workerd-floor", size);
  if (relayMemory && relayMemory.rssKB > 20) {
    out.push(
      `**Memory:** the relay's own state per subscriber is its JS heap, ${memoryGrowthText(relayMemory.heapKB)}${relayMemory.heapKB >= 0 && relayMemory.heapKB <= 20 ? ", within 20 KB" : ""}; the resident figure, ${num(relayMemory.rssKB)} KB, is workerd's: its per-connection memory` +
        (floorMemory ? ` (workerd-floor adds ${memoryGrowthText(floorMemory.rssKB)} per idle socket while keeping nothing per subscriber)` : "") +
        ` and the buffers of each subscriber's initial state (a new subscriber is sent every cached object), all outside the isolate and its 128 MB limit.`,
    );
  }
  return out;
}

/** The runtime's own replay of a storm (workerd-floor), against the relay's and raw-ws's. */
function floorStorm(storms: readonly StormRow[]): string {
  const [relay, floor, raw] = (["relay", "workerd-floor", "raw-ws"] as const).map((s) => storms.find((r) => r.system === s && r.transport === "ws"));
  if (!relay?.catchUpMs || !floor?.catchUpMs) return "";
  return (
    ` workerd-floor, whose object sends the same missed events from a plain list, one message each, with nothing of the relay's (no window, acknowledgements or budget), caught up in ${seconds(floor.catchUpMs)}` +
    ` (${x(floor.catchUpMs, relay.catchUpMs)} the relay's time${raw?.catchUpMs ? `, ${x(floor.catchUpMs, raw.catchUpMs)} raw-ws's` : ""}): in workerd, a storm of per-event messages takes this long before any relay code runs.`
  );
}

type Costed = Pick<BurstRow, "system" | "transport" | "deliveredPerSec" | "cpuUsPerEvent" | "serverCpuPct" | "upstreamCpuPct" | "loadGenCpuPct" | "otherLoadPct">;

/** A relay's CPU per event against a baseline's, the ceiling of one core, and what limited it this time. */
function cost(results: Results, row: Costed, baseline: Costed): string {
  if (row.cpuUsPerEvent === null) return "";
  const name = labelOf(baseline.system, baseline.transport);
  const ceiling = 1e6 / row.cpuUsPerEvent;
  const against = baseline.cpuUsPerEvent ? ` against ${name}'s ${num(baseline.cpuUsPerEvent)} µs (${x(row.cpuUsPerEvent, baseline.cpuUsPerEvent)})` : "";
  const spare = results.machine.cores * 100 - (row.serverCpuPct + row.upstreamCpuPct + row.loadGenCpuPct + row.otherLoadPct);
  const bound =
    row.serverCpuPct >= BUSY_PCT
      ? `It was busy ${num(row.serverCpuPct)}% of a core: CPU-bound.`
      : spare < SPARE_PCT
        ? `It got ${num(row.serverCpuPct)}% of a core while the machine's ${results.machine.cores} cores were all but full (load generators ${num(row.loadGenCpuPct)}%, processes outside the bench ${num(row.otherLoadPct)}%): ` +
          `short of CPU rather than idle, so this rate understates it.`
        : `It was busy only ${num(row.serverCpuPct)}% of a core, with CPU to spare on the machine: the rest of the time it waited (on subscribers taking what it had written, or between its pump's turns), so its pace, not its CPU, set the rate.`;
  return (
    ` Its workerd spent ${num(row.cpuUsPerEvent)} µs of CPU per delivered event${against}: at that cost one core, all a hub has, sends at most ${num(ceiling)} events a second, ` +
    `${x(ceiling, baseline.deliveredPerSec)} what ${name} delivered here. ${bound}`
  );
}

/** Where a process counts as saturated: % of one core over the measurement. */
const BUSY_PCT = 80;
/** Less of the machine left idle (% of one core), and a process not saturated may have been starved. */
const SPARE_PCT = 50;

function httpFanoutLimit(results: Results): string[] {
  const { size, rates, at } = fanoutAt(results);
  const rate = rates.find((r) => at("relay", r, "http"));
  const relay = rate === undefined ? undefined : at("relay", rate, "http");
  const raw = rate === undefined ? undefined : at("raw-http", rate);
  if (!relay || !raw || relay.deliveredPct >= 95 || relay.deliveredPerSec >= 0.5 * raw.deliveredPerSec) return [];
  return [
    `**HTTP watches in fan-out** (${num(size)} × ${num(relay.eventsPerSec)} events/s): the relay delivered ${num(relay.deliveredPerSec)} events/s, ${x(relay.deliveredPerSec, raw.deliveredPerSec)} raw-http's, ` +
      `${num(relay.deliveredPct)}% of what was asked.` +
      cost(results, relay, raw),
  ];
}

function burstLimits(results: Results): string[] {
  const { at } = burstAt(results);
  const floor = at("workerd-floor", "ws");
  const checks: Array<{ row: BurstRow | undefined; raw: BurstRow | undefined; share: number; p99: boolean }> = [
    { row: at("relay", "http"), raw: at("raw-http", "http"), share: 0.5, p99: true },
    { row: at("relay", "ws"), raw: at("raw-ws", "ws"), share: 0.5, p99: false },
    { row: at("relay-batched", "ws"), raw: at("raw-ws", "ws"), share: 1, p99: true },
  ];
  return checks.flatMap(({ row, raw, share, p99 }) => {
    if (!row || !raw || raw.deliveredPerSec <= 0) return [];
    const ratio = row.deliveredPerSec / raw.deliveredPerSec;
    const perEvent = row.system === "relay" && row.transport === "ws";
    const atFloor = perEvent && floor !== undefined && floor.deliveredPerSec > 0 && row.deliveredPerSec >= AT_FLOOR * floor.deliveredPerSec;
    const slow = ratio < share && !atFloor;
    const late = p99 && (row.p99Ms === null || row.p99Ms > BURST_P99_MS);
    const lost = row.deliveredPct < 100;
    if (!slow && !late && !lost) return [];
    const events = row.subscribers * row.changes;
    const mb = row.eventBytes === null ? "" : ` (${num((events * row.eventBytes) / 2 ** 20)} MB)`;
    return [
      `**Burst, ${labelOf(row.system, row.transport)}:** ${num(row.subscribers)} subscribers × ${num(row.changes)} changes is ${num(events)} events${mb} to send at once. ` +
        `It delivered ${num(row.deliveredPerSec)} events/s, ${x(row.deliveredPerSec, raw.deliveredPerSec)} ${raw.system}'s, over ${row.durationMs === null ? "–" : seconds(row.durationMs)} from the first change to the last receipt; ` +
        `p99 ${row.p99Ms === null ? "–" : seconds(row.p99Ms)}` +
        (row.p99Ms !== null && row.durationMs !== null && row.p99Ms >= row.durationMs / 2 ? `: each event waits for those queued before it, so the p99 follows the burst's length.` : ".") +
        cost(results, row, raw) +
        (perEvent && floor
          ? ` workerd-floor, which only forwards the bytes one message per event, delivered ${num(floor.deliveredPerSec)} events/s at ${num(floor.cpuUsPerEvent ?? 0)} µs each: the runtime's share of the cost.`
          : "") +
        (lost
          ? ` Only ${num(row.deliveredPct)}% of the events had arrived when the bench stopped waiting (${seconds(results.sizes.burst.timeoutMs)}); ${num(row.caughtUp)} of ${num(row.subscribers)} subscribers had them all.`
          : ""),
    ];
  });
}

function rawBytes(results: Results, storm: StormRow, bytes: string): string {
  const raw = rowsOf<StormRow>(results, "storm").find((r) => r.system === "raw-ws" && r.subscribers === storm.subscribers);
  if (!raw || raw.catchUpMs === null || !bytes) return "";
  return `. raw-ws took ${seconds(raw.catchUpMs)} for the same events: on this machine, moving them within 2 s is beyond plain WebSocket fan-out too, so here the relay is bound by bytes, not by messages`;
}

function batchedCost(rates: readonly number[], at: (system: SystemName, rate: number) => FanoutRow | undefined): string {
  const parts = rates.flatMap((rate) => {
    const [batched, relay, node] = (["relay-batched", "relay", "node-relay"] as const).map((s) => at(s, rate));
    if (!batched?.cpuUsPerEvent || !batched.eventsPerMessage || !relay?.cpuUsPerEvent || !node) return [];
    return [
      `at ${num(rate)} events/s, ${perMessage(batched.eventsPerMessage)}, ${num(batched.cpuUsPerEvent)} µs of CPU per delivered event ` +
        `(${x(batched.cpuUsPerEvent, relay.cpuUsPerEvent)} the relay's) and ${x(batched.deliveredPerSec, node.deliveredPerSec)} node-relay's events/s`,
    ];
  });
  return parts.length > 0 ? ` relay-batched, whose subscribers opted in to the events that were ready together as one message, shows what the message costs: ${parts.join("; ")}.` : "";
}

/** The largest fan-out a relay framing kept up with, for "below saturation". */
function keptUp(results: Results, mode: SystemName): FanoutRow | undefined {
  const ok = rowsOf<FanoutRow>(results, "fanout").filter((r) => r.system === mode && r.transport === "ws" && r.deliveredPct >= 95 && r.p99Ms !== null);
  return ok.sort((a, b) => b.subscribers * b.eventsPerSec - a.subscribers * a.eventsPerSec)[0];
}

const stage = (profile: ProfileSummary, name: Stage) => profile.stages.find((s) => s.stage === name);

/** The time workerd's one thread waited for storage: no CPU figure counts it. */
function syncWaitReading(profile: ProfileSummary): string {
  const pct = profile.syncWaitPct;
  if (pct === null || pct === undefined) return "";
  return `Besides that CPU, its main thread was sampled waiting in fsync (SQLite commits made durable on disk) ${num(pct)}% of the time. `;
}

function manyKeysSyncWait(results: Results, relay: KeysRow): string {
  const profile = results.profiles.find((p) => p.workload.name === "many keys");
  if (relay.deliveredPct >= 95 || profile?.syncWaitPct === null || profile?.syncWaitPct === undefined) return "";
  return ` In the many-keys profile, the runtime's one thread, which runs every hub, was also sampled waiting in fsync ${num(profile.syncWaitPct)}% of the time (DESIGN.md says why: locally every commit is an fsync on that thread).`;
}

export function profileReading(profile: ProfileSummary): string {
  const w = profile.workload;
  const events = Math.max(1, (profile.deliveredPerSec * profile.durationMs) / 1000);
  const perEvent = (ms: number) => num((ms * 1000) / events);
  const sum = (...names: Stage[]) => names.reduce((n, s) => n + (stage(profile, s)?.pctOfBusy ?? 0), 0);
  return (
    (w.transport === "socket"
      ? `${num(w.subscribersPerKey)} clients × ${num(w.keys)} watches (a key each), each client's watches on one relay socket, at ${num(w.rate)} events/s, ${num(profile.deliveredPerSec)} events/s delivered. `
      : `${w.keys === 1 ? "One key" : `${num(w.keys)} keys`} × ${num(w.subscribersPerKey)} ${w.transport === "http" ? "HTTP watch" : "WebSocket"} subscribers at ${num(w.rate)} events/s, ${num(profile.deliveredPerSec)} events/s delivered. `) +
    `The relay's workerd used ${num(profile.processCpuMs)} ms of CPU in ${num(profile.durationMs)} ms, ${perEvent(profile.processCpuMs)} µs per delivered event. ` +
    `Samples in the isolate account for ${num(profile.isolateBusyMs)} ms of it (${perEvent(profile.isolateBusyMs)} µs per event); ` +
    `the other ${num(profile.outsideIsolateMs)} ms (${perEvent(profile.outsideIsolateMs)} µs per event) is workerd's own work outside the isolate and the kernel's: socket reads and writes, storage I/O. ` +
    syncWaitReading(profile) +
    `Within the isolate, sending to subscribers (the fan-out loop and workerd's natives it calls: a WebSocket's \`send\`, an HTTP body's stream) took ${num(sum("fan-out loop (JS)", "sending (native: WebSocket send, HTTP stream)"))}%, ` +
    `workerd's natives under the isolate lock (event dispatch, promise machinery) ${num(sum("workerd natives under the lock", "workerd natives with no JS caller"))}%, ` +
    `SQLite writes ${num(sum("SQLite writes"))}%, upstream intake (read, parse, serialise, window) ${num(sum("upstream intake (read, parse, cache, window)"))}%, ` +
    `acknowledgements ${num(sum("acknowledgements"))}%, garbage collection ${num(sum("garbage collection"))}%` +
    (w.transport === "socket" ? `, and the relay socket's hop (its mux object: retagging, forwarding, acknowledging) ${num(sum("relay socket's hop (mux object)"))}%.` : ".")
  );
}
