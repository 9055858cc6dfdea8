/**
 * @module
 * Where the relay's time goes: a CPU profile of its isolate under load, its samples traced to files
 * by the bundle's `// src/...` markers (natives charged to their caller), against `/proc`'s CPU.
 */
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Inspector } from "./inspector.ts";
import { round } from "./measure.ts";
import { cpuMeter, syncWaitMeter, waitIdle } from "./proc.ts";
import type { ProfileWorkload } from "./modes.ts";
import type { ProfileSummary, Stage } from "./rows.ts";
import { keySelector } from "./scenarios/keys.ts";
import { podsOf, type Context } from "./scenarios/scenario.ts";
import { clientOf, subscriber } from "./systems/system.ts";
import type { Relay } from "./systems/workerd.ts";

export const profileNamespace = (workload: ProfileWorkload): string => `profile-${workload.name.toLowerCase().replace(/\W+/g, "-")}`;

const ACK_FUNCTIONS = new Set(["webSocketMessage", "parseAck", "acknowledge", "wake"]);
const FANOUT_MODULES = new Set(["src/hub/fanout.ts", "src/hub/subscriber.ts"]);
const INTAKE_MODULES = new Set(["src/hub/reflector.ts", "src/hub/feed.ts", "src/hub/collection.ts", "src/hub/relist.ts", "src/hub/tombstones.ts", "src/hub/window.ts"]);
const SOCKET_MODULES = new Set(["src/k8s/mux.ts", "src/k8s/ack-ledger.ts"]);

/** What a sample was doing; `foreign` frames are not the relay's code (natives, workerd's own JS). */
function stageOf(frame: CallFrame, foreign: boolean, module: string, caller: string | undefined): Stage {
  if (module === "(program)") return "workerd natives under the lock";
  if (module === "(garbage collector)") return "garbage collection";
  if (module === NO_CALLER) return "workerd natives with no JS caller";
  if (module === "src/hub/storage.ts" || (foreign && (frame.functionName === "exec" || frame.functionName === "transactionSync"))) return "SQLite writes";
  if (ACK_FUNCTIONS.has(caller ?? "")) return "acknowledgements";
  if (foreign && FANOUT_MODULES.has(module)) return "sending (native: WebSocket send, HTTP stream)";
  if (FANOUT_MODULES.has(module)) return "fan-out loop (JS)";
  if (module.startsWith("src/mux/") || SOCKET_MODULES.has(module)) return "relay socket's hop (mux object)";
  if (INTAKE_MODULES.has(module) || module.startsWith("src/k8s/")) return "upstream intake (read, parse, cache, window)";
  return "other";
}

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** µs: fine enough for the per-event path, cheap enough to leave it unchanged. */
const INTERVAL_US = 500;
/** Longer gaps between samples are time the profiler did not see (outside the isolate). */
const MAX_SAMPLE_US = 2 * INTERVAL_US;

export async function profileRelay(context: Context, host: Relay, workload: ProfileWorkload, cpuprofileFile: string): Promise<ProfileSummary> {
  const { relay, inspector } = host;
  const { sim, loadgens, sizes } = context;
  const { keys, subscribersPerKey, rate, ms, transport } = workload;
  const namespace = profileNamespace(workload);
  const who = transport === "socket" ? `${subscribersPerKey} clients × ${keys} watches on a relay socket each` : `${keys} key(s) × ${subscribersPerKey} subscribers`;
  context.progress(`profile relay (${workload.name}): ${who}, ${rate} events/s, ${ms} ms`);
  await context.quiesce();
  const selector = (i: number) => (keys > 1 ? keySelector(i) : undefined);
  const clients = Array.from({ length: subscribersPerKey }, () => Array.from({ length: keys }, (_, k) => ({ path: podsOf(namespace), labelSelector: selector(k) })));
  const system = transport === "socket" ? host.socket : relay;
  await loadgens.open(clients.flatMap((watches) => (transport === "http" ? watches.map((w) => subscriber(relay, "http", sim, w.path, w.labelSelector)) : clientOf(system, sim, watches))));
  await waitIdle([...relay.pids, sim.pid]);
  await sim.churn(rate, namespace);
  await sleep(sizes.fanout.warmupMs);
  await inspector.call("Profiler.enable");
  await inspector.call("Profiler.setSamplingInterval", { interval: INTERVAL_US });
  await inspector.call("Profiler.start");
  const cpu = cpuMeter(relay.pids);
  const syncWait = syncWaitMeter(relay.pids[0] as number);
  const started = performance.now();
  let syncWaitPct: number | undefined;
  let profile: CpuProfile;
  try {
    await loadgens.measure();
    await sleep(ms);
    ({ profile } = await inspector.call<{ profile: CpuProfile }>("Profiler.stop"));
  } finally {
    syncWaitPct = syncWait();
  }
  const processCpuMs = (cpu() * (performance.now() - started)) / 100;
  const delivered = await loadgens.report();
  await sim.churn(0);
  await loadgens.close();
  writeFileSync(cpuprofileFile, JSON.stringify(profile));
  const sources = await scriptSources(inspector, profile);
  return summarise(profile, sources, { workload, deliveredPerSec: round(delivered.eventsPerSec), syncWaitPct: syncWaitPct === undefined ? null : round(syncWaitPct) }, processCpuMs);
}

/** The text of every script the profile sampled, by script id. */
async function scriptSources(inspector: Inspector, profile: CpuProfile): Promise<Map<string, string>> {
  const ids = new Set(profile.nodes.filter((n) => n.callFrame.url !== "").map((n) => n.callFrame.scriptId));
  const sources = new Map<string, string>();
  await inspector.call("Debugger.enable");
  for (const scriptId of ids) {
    try {
      sources.set(scriptId, (await inspector.call<{ scriptSource: string }>("Debugger.getScriptSource", { scriptId })).scriptSource);
    } catch {
      // not available: its frames fall back to the script's file name
    }
  }
  await inspector.call("Debugger.disable");
  return sources;
}

/** Module boundaries in an esbuild bundle: `// src/hub/fanout.ts`, `// node_modules/hono/dist/...`. */
function moduleMarkers(source: string): Array<{ line: number; module: string }> {
  const markers: Array<{ line: number; module: string }> = [];
  source.split("\n").forEach((text, line) => {
    const match = /^\/\/ ((?:src|node_modules)\/\S+)$/.exec(text);
    if (!match?.[1]) return;
    const path = match[1];
    const module = path.startsWith("node_modules/") ? (/^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path) : path;
    markers.push({ line, module });
  });
  return markers;
}

const SPECIAL = new Set(["(root)", "(program)", "(idle)", "(garbage collector)"]);
const NO_CALLER = "(runtime, no caller in the bundle)";

function summarise(profile: CpuProfile, sources: Map<string, string>, meta: Pick<ProfileSummary, "workload" | "deliveredPerSec" | "syncWaitPct">, processCpuMs: number): ProfileSummary {
  const markers = new Map([...sources].map(([id, source]) => [id, moduleMarkers(source)]));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  /** The relay's own code: the script with module markers. */
  const inBundle = (frame: CallFrame) => (markers.get(frame.scriptId)?.length ?? 0) > 0;
  const ownModule = (frame: CallFrame): string | undefined => {
    if (SPECIAL.has(frame.functionName)) return frame.functionName;
    if (!inBundle(frame)) return undefined;
    return markers.get(frame.scriptId)?.findLast((m) => m.line <= frame.lineNumber)?.module ?? frame.url;
  };
  const moduleCache = new Map<number, string>();
  /** A frame's own module, or (for natives and runtime internals) its nearest caller's. */
  const moduleOf = (id: number): string => {
    const cached = moduleCache.get(id);
    if (cached) return cached;
    const node = byId.get(id) as ProfileNode;
    const up = parent.get(id);
    const module = ownModule(node.callFrame) ?? (up === undefined || byId.get(up)?.callFrame.functionName === "(root)" ? NO_CALLER : moduleOf(up));
    moduleCache.set(id, module);
    return module;
  };

  /** The nearest function of the relay's own code on the stack. */
  const callerOf = (id: number): string | undefined => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (ownModule(frame)?.startsWith("src/")) return frame.functionName;
    }
    return undefined;
  };

  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + Math.min(profile.timeDeltas[i] ?? 0, MAX_SAMPLE_US) / 1000));
  const durationMs = (profile.endTime - profile.startTime) / 1000;
  const modules = new Map<string, number>();
  const stages = new Map<Stage, number>();
  const functions = new Map<string, { name: string; module: string; ms: number }>();
  let idle = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id) as ProfileNode;
    const module = moduleOf(id);
    if (module === "(idle)") {
      idle += ms;
      continue;
    }
    modules.set(module, (modules.get(module) ?? 0) + ms);
    const frame = node.callFrame;
    const foreign = !SPECIAL.has(frame.functionName) && !inBundle(frame);
    const stage = stageOf(frame, foreign, module, callerOf(id));
    stages.set(stage, (stages.get(stage) ?? 0) + ms);
    const origin = !foreign ? "" : frame.url === "" ? " (native)" : ` (${frame.url})`;
    const name = SPECIAL.has(frame.functionName) ? frame.functionName : `${frame.functionName || "(anonymous)"}${origin}`;
    const key = `${name} ${module}`;
    const entry = functions.get(key) ?? { name, module, ms: 0 };
    entry.ms += ms;
    functions.set(key, entry);
  }
  const total = [...modules.values()].reduce((a, b) => a + b, 0);
  const busy = Math.max(1e-9, total);
  const pct = (ms: number) => round((100 * ms) / busy);
  const delivered = Math.max(1, (meta.deliveredPerSec * durationMs) / 1000);
  const topFunctions = [...functions.values()].sort((a, b) => b.ms - a.ms).slice(0, 20);
  return {
    ...meta,
    durationMs: round(durationMs),
    processCpuMs: round(processCpuMs),
    isolateBusyMs: round(busy),
    isolateIdleMs: round(idle),
    outsideIsolateMs: round(Math.max(0, processCpuMs - busy)),
    modules: [...modules].sort((a, b) => b[1] - a[1]).map(([module, ms]) => ({ module, ms: round(ms), pctOfBusy: pct(ms) })),
    functions: topFunctions.map((f) => ({ ...f, ms: round(f.ms), pctOfBusy: pct(f.ms) })),
    stages: [...stages].sort((a, b) => b[1] - a[1]).map(([stage, ms]) => ({ stage, ms: round(ms), pctOfBusy: pct(ms), usPerEvent: round((ms * 1000) / delivered) })),
  };
}
