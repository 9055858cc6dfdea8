/**
 * @module
 * Simulators and a relay of a scenario's own (`big`, `hubs`, `fleet`): the shared simulator would
 * pay for a large collection in every other scenario, and heap readings are of its hubs alone.
 * And a relay of its own on the shared simulator with some objects in a second workerd (`hot`, `sockets`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { measureWindow, type DeliveryWindow, type MemoryTrace } from "../measure.ts";
import { descendants, waitIdle } from "../proc.ts";
import { inRound } from "../rounds.ts";
import type { Row, StepCost } from "../rows.ts";
import { Sim } from "../sim.ts";
import { startRelay, type Relay } from "../systems/workerd.ts";
import type { System } from "../systems/system.ts";
import type { Context } from "./scenario.ts";

/** What `/_relay/stats/<collection>` says of a hub (zeros for one that has not started). */
export interface HubStats {
  upstream: string;
  watching: boolean;
  subscribers: number;
  resourceVersion: number;
  eventsCommitted: number;
  objects: number;
  storageBytes: number;
  memoryBytes: number;
  rowsWritten: number;
}

export async function hubStats(relayUrl: string, path: string, labelSelector?: string): Promise<HubStats> {
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
  const response = await fetch(`${relayUrl}/_relay/stats${path}${query}`);
  if (!response.ok) throw new Error(`/_relay/stats${path}${query}: HTTP ${response.status}`);
  return { ...NO_HUB, ...((await response.json()) as Partial<HubStats>) };
}

const NO_HUB: HubStats = { upstream: "stopped", watching: false, subscribers: 0, resourceVersion: 0, eventsCommitted: 0, objects: 0, storageBytes: 0, memoryBytes: 0, rowsWritten: 0 };

/** Poll `check` every `everyMs` until it holds; false if `timeoutMs` passed first. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

const MB = 2 ** 20;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

/** A step's cost from its memory trace and the hub's stats around it (a restarted hub counts from 0). */
type Written = Pick<HubStats, "rowsWritten" | "storageBytes" | "memoryBytes">;
export function stepCost(memory: MemoryTrace | undefined, before: Pick<Written, "rowsWritten"> | undefined, after: Written | undefined): StepCost {
  return {
    heapMaxMB: memory ? mb(memory.heapMax) : null,
    heapAfterMB: memory ? mb(memory.heapAfter) : null,
    rssMaxMB: memory ? mb(memory.rssMax) : null,
    rowsWritten: after ? after.rowsWritten - (before && before.rowsWritten <= after.rowsWritten ? before.rowsWritten : 0) : null,
    storageMB: after ? mb(after.storageBytes) : null,
    linesMB: after ? mb(after.memoryBytes) : null,
  };
}

export interface Own {
  sim: Sim;
  sims: Sim[];
  relay: Relay;
  context: Context;
  /** Kill the relay, as a crash, and start it again on its state. */
  restart(): Promise<Relay>;
  stop(): Promise<void>;
}

type SimArgs = { namespaces: string[]; historyLimit?: number; slimPods?: boolean };

/** A simulator holding `namespaces` and a relay in front of it; with `clusters`, a simulator for each. */
export async function startOwn(context: Context, name: string, simArgs: SimArgs, clusters?: readonly string[]): Promise<Own> {
  const label = inRound(name, context.round);
  const sims: Sim[] = [];
  let relay: Relay | undefined;
  const stop = async () => {
    await relay?.stop();
    await Promise.all(sims.map((s) => s.stop()));
  };
  const args = { namespaces: simArgs.namespaces, slimPodNamespaces: simArgs.slimPods ? simArgs.namespaces : [], historyLimit: simArgs.historyLimit };
  try {
    for (const simName of clusters ? clusters.map((_, i) => `${label}-sim-${i}`) : [`${label}-sim`]) sims.push(await Sim.start(args, context.logDir, simName));
    const members = Object.fromEntries((clusters ?? []).map((c, i) => [c, { url: (sims[i] as Sim).url }]));
    relay = await startRelay(sims[0] as Sim, context.logDir, { name: `${label}-relay`, clusters: members });
  } catch (e) {
    await stop();
    throw e;
  }
  const sim = sims[0] as Sim;
  const own = (): Context => ({
    ...context,
    sim,
    benchPids: [process.pid, ...descendants(process.pid)],
    quiesce: async () => void (await waitIdle([...sims.map((s) => s.pid), result.relay.info.pid])),
  });
  context.started([...sims.map((s, i) => ({ role: clusters ? `${label}: simulator of ${clusters[i]}` : `${label}: simulator`, pid: s.pid })), ...relay.processes]);
  const result: Own = {
    sim,
    sims,
    relay,
    context: own(),
    async restart() {
      const old = result.relay;
      process.kill(old.info.pid, "SIGKILL");
      await old.stop();
      relay = result.relay = await startRelay(sim, context.logDir, { name: `${label}-relay`, stateDir: old.stateDir });
      context.started(relay.processes);
      result.context = own();
      return relay;
    },
    stop,
  };
  return result;
}

/** `rate` changes a second on `namespace`, warmed up (a quarter of `ms`, 2 s at most), then a window of `ms`. */
export async function churnWindow(own: Own, namespace: string, rate: number, ms: number): Promise<DeliveryWindow> {
  await own.sim.churn(rate, namespace);
  try {
    await sleep(Math.min(2000, ms / 4));
    return await measureWindow(own.context, own.relay.relay, ms);
  } finally {
    await own.sim.churn(0);
  }
}

/** Its own simulators hold its namespaces; many minutes at its full size, so measured once. */
export const OWN = { namespaces: () => [], once: true } as const;

/** `measure` on processes of its own, stopped after it; nothing unless the relay is measured. */
export async function withOwn(context: Context, systems: readonly System[], name: string, args: SimArgs, measure: (own: Own) => Promise<Row[]>, clusters?: readonly string[]) {
  if (!systems.some((s) => s.name === "relay")) return [];
  const own = await startOwn(context, name, args, clusters);
  try {
    return await measure(own);
  } finally {
    await own.stop();
  }
}

/**
 * A relay of the scenario's own, on its simulator, with `split`'s objects in a second workerd
 * (`scripts/runtime.ts`): as deployed, where every object has a thread of its own.
 */
export async function startSplit(context: Context, name: string, split: { replicaWorkerd?: true; muxWorkerd?: true }, what: string): Promise<{ relay: Relay; context: Context }> {
  context.progress(what);
  const relay = await startRelay(context.sim, context.logDir, { name: inRound(name, context.round), ...split });
  context.started(relay.processes);
  return { relay, context: { ...context, benchPids: [process.pid, ...descendants(process.pid)] } };
}
