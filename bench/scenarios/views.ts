/**
 * @module
 * `views`: live views of a large collection against what a browser does without them; the
 * report's section (`report-views.ts`) says what is measured.
 */
import { get, type IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startChild, type Child } from "../children.ts";
import { cpuWhile, round, type Window } from "../measure.ts";
import type { Sizes } from "../modes.ts";
import { waitIdle } from "../proc.ts";
import { inRound } from "../rounds.ts";
import type { ViewOpen, ViewsRow } from "../rows.ts";
import { Histogram } from "../stats.ts";
import type { System } from "../systems/system.ts";
import { viewQuery, type ViewQuery } from "../view-query.ts";
import type { Received, ViewgenReport } from "../viewgen.ts";
import { hubStats, type HubStats } from "./own.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";

const NAMESPACE = "views";
/** The orders the views ask for, as a dashboard's columns would be clicked. */
const SORTS = ["name", "-Age", "Status", "-Restarts", "label:app"];
const FILTER = "Status=Running";
const NO_LIST = { listColdMs: null, listMs: null, listBytes: null, opens: null };
/** Timed one at a time: every order the views use, and a filtered one. */
const OPENS: Array<{ sort: string; filter?: string }> = [...SORTS.map((sort) => ({ sort })), { sort: "Node", filter: FILTER }];

/** View `i` of `count`: the orders in turn, every other five filtered, windows at the first few offsets. */
function viewQueries(sizes: Sizes["views"], count: number): ViewQuery[] {
  return Array.from({ length: count }, (_, i) => ({
    sort: SORTS[i % SORTS.length] as string,
    ...(Math.floor(i / SORTS.length) % 2 === 1 ? { filter: FILTER } : {}),
    offset: (Math.floor(i / (2 * SORTS.length)) % 4) * sizes.limit,
    limit: sizes.limit,
  }));
}

export const views: Scenario = {
  name: "views",
  systems: ["relay"],
  namespaces: () => [NAMESPACE],
  async run(context, systems) {
    const rows: ViewsRow[] = [];
    for (const system of systems) rows.push(...(await runOne(context, system)));
    return rows;
  },
};

async function runOne(context: Context, system: System): Promise<ViewsRow[]> {
  const { sim, sizes } = context;
  const size = sizes.views;
  const base = system.listBase;
  if (!base) throw new Error(`views: ${system.name} serves no lists`);
  const wsBase = system.endpoints.ws?.base;
  if (!wsBase) throw new Error(`views: ${system.name} serves no WebSockets`);
  const namespace = inRound(NAMESPACE, context.round);
  const path = podsOf(namespace);
  const stats = () => hubStats(base, path);

  context.progress(`views: growing the collection to ${size.objects} pods`);
  const objects = await sim.populate(namespace, size.objects);
  await context.quiesce();
  context.progress(`views ${system.name}: the first list of ${objects} pods (builds the hub)`);
  const cold = await listUntilServed(`${base}${path}`, size.timeoutMs);
  const warm = await timedGet(`${base}${path}`);
  await waitIdle([...system.pids, sim.pid]);

  const template = ((await (await fetch(`${sim.url}${path}?limit=1`)).json()) as { items: unknown[] }).items[0];
  const viewgen = await startChild<{ pid: number }>("viewgen", new URL("../viewgen.ts", import.meta.url), {}, context.logDir);
  try {
    const call = <T>(op: string, payload?: unknown) => viewgen.call<T>(op, payload);
    const measure = async (measurement: ViewsRow["measurement"]) => {
      await sleep(size.warmupMs);
      return window(context, system, viewgen, stats, measurement);
    };
    const churn = (visible: string[]) => call("startChurn", { simUrl: sim.url, namespace, rate: size.rate, template, visible, seed: 26 });
    await call("openWatch", { url: `${base}${path}?watch=1&resourceVersion=${(await stats()).resourceVersion}` });
    // No view opened yet, so no index: what keeping the views' rows costs a hub alone.
    const listed = (await (await fetch(`${sim.url}${path}?limit=${size.views}`)).json()) as { items: Array<{ metadata: { name: string } }> };
    await churn(listed.items.map((p) => `${namespace}/${p.metadata.name}`));
    context.progress(`views ${system.name}: a full watch of ${objects} pods at ${size.rate} writes/s`);
    const watch = await measure("watch");
    await call("stopChurn");
    await waitIdle([...system.pids, sim.pid]);

    context.progress(`views ${system.name}: first frames of views at ${objects} pods`);
    const opens: ViewOpen[] = [];
    for (const { sort, filter } of OPENS) {
      const first = await firstFrame(`${base}${path}?${viewQuery({ sort, filter, offset: 0, limit: size.limit })}&watch=1`);
      const second = await firstFrame(`${base}${path}?${viewQuery({ sort, filter, offset: size.limit, limit: size.limit })}&watch=1`);
      const socketMs = await call<number>("socketFirstFrame", { wsBase, path, query: { sort, filter, offset: size.limit, limit: size.limit } });
      opens.push({ sort, filter: filter ?? null, coldMs: round(first.ms), warmMs: round(second.ms), socketMs: round(socketMs), bytes: first.bytes });
    }

    // From here the churn's patches land on the pods the views show.
    const queries = viewQueries(size, size.views);
    const visible = new Set<string>();
    for (const q of new Map(queries.map((q) => [viewQuery(q), q])).values()) {
      const page = JSON.parse((await timedGet(`${base}${path}?${viewQuery(q)}`, true)).body) as { rows: Array<{ key: string }> };
      for (const row of page.rows) visible.add(row.key);
    }
    await churn([...visible].sort());
    context.progress(`views ${system.name}: ${size.views} live views of ${size.limit} rows beside it`);
    const refused = await call<number>("openViews", { base, path, queries });
    if (refused > 0) context.progress(`views ${system.name}: the relay answered ${refused} of the views' requests with a server error; they were asked for again`);
    const live = await measure("views");
    await call("closeViews");
    context.progress(`views ${system.name}: the same views as ops on relay sockets`);
    await call("openSocketViews", { wsBase, path, queries });
    const overSockets = await measure("socket-views");
    await call("closeSocketViews");
    context.progress(`views ${system.name}: ${size.refetchers} notify-then-refetch clients beside it`);
    await call("refetchers", { base, path, queries: queries.slice(0, size.refetchers) });
    const refetch = await measure("refetch");
    await call("stopChurn");
    await call("close");
    const watchBytesPerMin = (w: Measured) => perMinute(w.report.watch.bytes, w.report.elapsedMs);
    const rowOf = (w: Measured, measurement: ViewsRow["measurement"]): ViewsRow => {
      const received = { watch: w.report.watch, views: w.report.views, "socket-views": w.report.socketViews, refetch: w.report.refetch }[measurement];
      return {
        scenario: "views",
        system: system.name,
        transport: measurement === "socket-views" ? "ws" : "http",
        objects,
        measurement,
        eventsPerSec: size.rate,
        ...receivedFields(w, received),
        watchBytesPerMin: watchBytesPerMin(w),
        ...NO_LIST,
      };
    };
    return [
      rowOf(watch, "watch"),
      { ...rowOf(live, "views"), listColdMs: round(cold.ms), listMs: round(warm.ms), listBytes: warm.bytes, opens },
      rowOf(overSockets, "socket-views"),
      rowOf(refetch, "refetch"),
    ];
  } finally {
    await viewgen.stop();
  }
}

interface Measured extends Omit<Window, "report" | "lastVersion"> {
  report: ViewgenReport;
  rowsWrittenPerEvent: number | null;
}

async function window(context: Context, system: System, viewgen: Child<{ pid: number }>, stats: () => Promise<HubStats>, measurement: string): Promise<Measured> {
  const { sim, sizes } = context;
  context.progress(`views ${system.name}: measuring (${measurement})`);
  const before = await stats();
  const rv0 = await sim.resourceVersion();
  const started = performance.now();
  const measured = async () => {
    await viewgen.call("measure");
    await sleep(sizes.views.measureMs);
    return viewgen.call<ViewgenReport>("report");
  };
  const { result: report, ...cpu } = await cpuWhile(context, system, measured, [viewgen.pid]);
  const rv1 = await sim.resourceVersion();
  const elapsed = performance.now() - started;
  const after = await stats();
  const committed = after.eventsCommitted - before.eventsCommitted;
  return {
    report,
    upstreamEventsPerSec: ((rv1 - rv0) * 1000) / elapsed,
    ...cpu,
    rowsWrittenPerEvent: committed > 0 ? round((after.rowsWritten - before.rowsWritten) / committed) : null,
  };
}

const perMinute = (bytes: number, ms: number) => Math.round((bytes * 60_000) / Math.max(1, ms));

function receivedFields(w: Measured, received: Received) {
  const latency = new Histogram();
  latency.merge(received.latency);
  const seconds = w.report.elapsedMs / 1000;
  const events = w.upstreamEventsPerSec * seconds;
  const perClient = (n: number) => (received.clients > 0 && events > 0 ? round(n / received.clients / events) : null);
  return {
    clients: received.clients,
    upstreamEventsPerSec: round(w.upstreamEventsPerSec),
    deliveredPerSec: round(received.messages / seconds),
    messagesPerEvent: perClient(received.messages),
    changesPerEvent: perClient(received.withChanges),
    bytesPerClientPerMin: received.clients > 0 ? perMinute(received.bytes / received.clients, w.report.elapsedMs) : null,
    p50Ms: latency.percentile(50) ?? null,
    p99Ms: latency.percentile(99) ?? null,
    maxMs: latency.max ?? null,
    latencySamples: latency.count,
    serverCpuPct: round(w.serverCpuPct),
    cpuUsPerEvent: w.upstreamEventsPerSec > 0 ? round((w.serverCpuPct * 1e4) / w.upstreamEventsPerSec) : null,
    rowsWrittenPerEvent: w.rowsWrittenPerEvent,
    upstreamCpuPct: round(w.upstreamCpuPct),
    loadGenCpuPct: round(w.loadGenCpuPct),
    otherLoadPct: round(w.otherLoadPct),
    errors: received.errors + w.report.writeErrors,
  };
}

/** GET `url`, timed; the body kept only when asked (a list of 100,000 pods is hundreds of MB). */
export function timedGet(url: string, keep = false): Promise<{ ms: number; firstByteMs: number; bytes: number; status: number; headers: IncomingHttpHeaders; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { accept: "application/json" } }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let firstByteMs = 0;
      response.on("data", (c: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += c.length;
        if (keep || response.statusCode !== 200) chunks.push(c);
      });
      response.on("end", () => resolve({ ms: performance.now() - started, firstByteMs, bytes, status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      response.on("error", reject);
    }).on("error", reject);
  });
}

/** A collection's first list, asked again while the relay answers 503 (still listing). */
export async function listUntilServed(url: string, timeoutMs: number): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  for (;;) {
    const { status, bytes, body } = await timedGet(url);
    if (status === 200) return { ms: performance.now() - started, bytes };
    if (status !== 503 || performance.now() - started > timeoutMs) throw new Error(`listing ${url}: HTTP ${status} ${body.slice(0, 300)}`);
    await sleep(500);
  }
}

/** A live view's first frame, timed; then the view is ended. */
export function firstFrame(url: string): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`${url}: HTTP ${response.statusCode}`));
      let bytes = 0;
      response.on("data", (c: Buffer) => {
        const end = c.indexOf(10);
        bytes += end < 0 ? c.length : end + 1;
        if (end < 0) return;
        resolve({ ms: performance.now() - started, bytes });
        request.destroy();
      });
    });
    request.on("error", (e) => (request.destroyed ? undefined : reject(e)));
  });
}
