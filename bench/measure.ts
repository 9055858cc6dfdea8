/**
 * @module
 * What a measurement reads, shared by the scenarios: a window of delivery (what subscribers
 * received, and every process's CPU, over the same interval), and memory.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { MergedReport } from "./loadgens.ts";
import type { SubscriberSpec } from "./loadgen.ts";
import { cpuMeter, othersMeter, sumRss, waitIdle } from "./proc.ts";
import type { Context } from "./scenarios/scenario.ts";
import type { System } from "./systems/system.ts";

const CPU = ["serverCpuPct", "upstreamCpuPct", "loadGenCpuPct", "loadGenMaxCpuPct", "otherLoadPct"] as const;
type Cpu = Record<(typeof CPU)[number], number>;

export interface Window extends Cpu {
  report: MergedReport;
  upstreamEventsPerSec: number;
  /** The upstream's resourceVersion when the window closed. */
  lastVersion: number;
}

/** A window of delivery under churn, and the subscribers behind its end `reachEndMs` after it. */
export interface DeliveryWindow extends Window {
  behindAtEnd: number | null;
}

/** Measure for `ms`; `sample` runs at a quarter, half and three quarters of the way. */
export async function measureWindow(context: Context, system: System, ms: number, sample?: () => Promise<void>): Promise<DeliveryWindow> {
  const window = await measureWhile(context, system, async () => void (await Promise.all([sleep(ms), ...[0.25, 0.5, 0.75].map((at) => sleep(ms * at).then(() => sample?.()))])));
  const { reachEndMs } = context.sizes;
  // The churn goes on meanwhile, so a subscriber that is merely behind gets there.
  const behindAtEnd = reachEndMs === null ? null : (await context.loadgens.waitFor(window.lastVersion, reachEndMs)).missing;
  return { ...window, behindAtEnd };
}

/** What the subscribers received, and what every process spent, while `work` ran. */
export async function measureWhile(context: Context, system: System, work: () => Promise<void>): Promise<Window> {
  const { sim, loadgens } = context;
  const rv0 = await sim.resourceVersion();
  const started = performance.now();
  const { result: report, ...cpu } = await cpuWhile(context, system, async () => {
    await loadgens.measure();
    await work();
    return loadgens.report();
  });
  const rv1 = await sim.resourceVersion();
  return { report, upstreamEventsPerSec: ((rv1 - rv0) * 1000) / (performance.now() - started), ...cpu, lastVersion: rv1 };
}

/** The CPU of the system, the API server, the load generators (and the busiest) and others while `work` ran. */
export async function cpuWhile<T>(context: Context, system: System, work: () => Promise<T>, loadgenPids = context.loadgens.pids): Promise<Cpu & { result: T }> {
  const server = cpuMeter(system.pids);
  const upstream = cpuMeter([context.sim.pid]);
  const generators = loadgenPids.map((pid) => cpuMeter([pid]));
  const others = othersMeter([...new Set([...context.benchPids, ...loadgenPids])]);
  const result = await work();
  const loads = generators.map((meter) => meter());
  return { result, serverCpuPct: server(), upstreamCpuPct: upstream(), loadGenCpuPct: loads.reduce((a, b) => a + b, 0), loadGenMaxCpuPct: Math.max(...loads), otherLoadPct: others() };
}

export const cpuFields = (cpu: Cpu): Cpu => Object.fromEntries(CPU.map((key) => [key, round(cpu[key])])) as Cpu;

export function receiptFields(window: Window) {
  const { report } = window;
  return {
    eventBytes: report.events > 0 ? Math.round(report.bytes / report.events) : null,
    wireEventBytes: report.events > 0 ? Math.round(report.wireBytes / report.events) : null,
    modifiedBytes: report.modified > 0 ? Math.round(report.modifiedBytes / report.modified) : null,
    eventsPerMessage: report.messages > 0 ? round(report.events / report.messages) : null,
    p50Ms: report.latency.percentile(50) ?? null,
    p99Ms: report.latency.percentile(99) ?? null,
    maxMs: report.latency.max ?? null,
    cpuUsPerEvent: report.eventsPerSec > 0 ? round((window.serverCpuPct * 1e4) / report.eventsPerSec) : null,
    cutOffs: report.cutOffs,
    errors: report.errors,
    ...cpuFields(window),
  };
}

/** The row fields of a window of steady churn, for `subscribers` watching one collection each. */
export function deliveryFields(window: DeliveryWindow, eventsPerSec: number, subscribers: number) {
  const { report } = window;
  const expected = subscribers * window.upstreamEventsPerSec;
  return {
    eventsPerSec,
    upstreamEventsPerSec: round(window.upstreamEventsPerSec),
    deliveredPerSec: round(report.eventsPerSec),
    deliveredMBps: round((report.bytes / 2 ** 20) * (report.eventsPerSec / Math.max(1, report.events))),
    deliveredPct: round(expected > 0 ? (100 * report.eventsPerSec) / expected : 0),
    behindAtEnd: window.behindAtEnd,
    ...receiptFields(window),
  };
}

/** `specs` connected, with the memory and upstream watches they added; then a window of churn. */
export async function connectThenChurn(context: Context, system: System, namespace: string, specs: readonly SubscriberSpec[], sizes: { rate: number; warmupMs: number; measureMs: number }) {
  const { sim, loadgens } = context;
  await context.quiesce();
  const before = await measureMemory(system);
  await loadgens.open(specs);
  await waitIdle([...system.pids, sim.pid]);
  const after = await measureMemory(system);
  const upstreamWatches = await sim.watchesIn(namespace);
  await sim.churn(sizes.rate, namespace);
  await sleep(sizes.warmupMs);
  const window = await measureWindow(context, system, sizes.measureMs);
  await sim.churn(0);
  await loadgens.close();
  return { window, upstreamWatches, addedKB: { rss: (after.rss - before.rss) / 1024, heap: (after.heap - before.heap) / 1024 } };
}

/** Three significant figures are all a noisy machine can vouch for. */
export function round(n: number): number {
  if (!Number.isFinite(n) || n === 0) return n;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(n))));
  return Number(n.toFixed(Math.min(digits, 3)));
}

/** JS heap first: its full collection also lets the process hand freed memory back before RSS is read. */
export async function measureMemory(system: System): Promise<{ heap: number; rss: number }> {
  const heap = await system.heapBytes();
  return { heap, rss: sumRss(system.pids) };
}

/** The high-water marks of the memory samples taken while work ran, and the reading after it. */
export interface MemoryTrace {
  heapMax: number;
  heapAfter: number;
  rssMax: number;
  samples: number;
}

/** Run `work` while sampling `system`'s memory every `everyMs` (each after a full collection), and once after. */
export async function traceMemory<T>(system: System, everyMs: number, work: () => Promise<T>): Promise<{ result: T; memory: MemoryTrace }> {
  let heapMax = 0;
  let rssMax = 0;
  let samples = 0;
  let running = true;
  let failed: unknown;
  const sample = async () => {
    const { heap, rss } = await measureMemory(system);
    heapMax = Math.max(heapMax, heap);
    rssMax = Math.max(rssMax, rss);
    samples++;
    return heap;
  };
  // A sample fails when the process died (out of memory?): `work` will fail too; this says why.
  const sampling = (async () => {
    while (running) {
      await sample();
      await sleep(everyMs);
    }
  })().catch((e: unknown) => void (failed = e));
  let result: T;
  try {
    result = await work();
  } finally {
    running = false;
    await sampling;
  }
  if (failed) throw failed;
  const heapAfter = await sample();
  return { result, memory: { heapMax, heapAfter, rssMax, samples } };
}
