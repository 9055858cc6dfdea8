/**
 * @module
 * The systems that run in workerd: `relay` (as `npm start` serves it; over WebSocket or HTTP), its
 * framings `relay-batched` (the batch subprotocol) and `relay-gzip` (the batches compressed),
 * `relay-proxied` (`wrangler dev` with its proxy worker in a second workerd, which it pays for),
 * and `workerd-floor` (raw fan-out in the same runtime, `floor/worker.ts`). A relay started some
 * other way is one more `relayServing` on its address.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { oneThreadDefaults } from "../../scripts/one-thread.ts";
import { BATCH_PROTOCOL, DELTA_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { startChild } from "../children.ts";
import type { RelayRuntimeArgs, RelayRuntimeInfo } from "../hosts/relay-runtime.ts";
import type { WorkerdArgs, WorkerdInfo } from "../hosts/workerd.ts";
import { Inspector } from "../inspector.ts";
import { hotClusters } from "../scenarios/hot-plan.ts";
import type { Sim } from "../sim.ts";
import type { Launched, Processes, System, SystemName } from "./system.ts";

export interface Relay extends Launched {
  /** The relay as `npm start` serves it, which the CPU profiles sample; and its clients on relay sockets. */
  relay: System;
  socket: System;
  /** With `replicaWorkerd`: the same systems served by the replicas' workerd, whose Worker admits clients next to the replicas. */
  nearReplicas?: System[];
  /** With `muxWorkerd`: the same systems served by the mux objects' workerd, whose Worker admits a relay socket next to its object. */
  nearMux?: System[];
  info: RelayRuntimeInfo;
  /** One DevTools session for the run. */
  inspector: Inspector;
  /** Its Durable Objects' state: a relay started again on it restores every hub from there. */
  stateDir: string;
  /** Stop its workerd and the process that started it. */
  stop(): Promise<void>;
}

/**
 * The relay's variables: no authentication (loopback only), and quotas out of the way — the
 * bench's subscribers are all one anonymous subject, and its scenarios open more keys than the
 * default `MAX_HUBS`. Everything else keeps its production default.
 */
const RELAY_VARS = { AUTH_MODE: "none", MAX_SUBSCRIPTIONS_PER_SUBJECT: "1000000", MAX_HUBS: "100000" };

/** `nudgePath`: a request the Worker answers by itself, to wake its isolate for the inspector. */
async function startWorkerd(name: string, config: URL, vars: Record<string, string>, nudgePath: string, logDir: string): Promise<{ info: WorkerdInfo; inspector: Inspector; processes: Processes }> {
  const args: WorkerdArgs = { config: fileURLToPath(config), vars, stateDir: join(logDir, `${name}-state`) };
  const child = await startChild<WorkerdInfo>(name, new URL("../hosts/workerd.ts", import.meta.url), args, logDir, 120_000);
  const { info } = child;
  return {
    info,
    inspector: await Inspector.connect(info.inspectorUrl, `${info.url}${nudgePath}`),
    processes: [
      { role: `${name} (workerd)`, pid: info.pid },
      { role: `${name}: wrangler dev proxy (workerd)`, pid: info.proxyPid },
      { role: `${name}: wrangler host (node)`, pid: child.pid },
    ],
  };
}

/** The isolate's JS heap, after a full collection, through the inspector. */
async function isolateHeap(inspector: Inspector): Promise<number> {
  await inspector.call("HeapProfiler.collectGarbage");
  return (await inspector.call<{ usedSize: number }>("Runtime.getHeapUsage")).usedSize;
}

const ws = (url: string) => url.replace(/^http/, "ws");

/** The relay served at `url` (`http://host:port`), as system `name`: WebSocket subscribers that acknowledge, and HTTP watches. `pids` are the processes its cost is counted on. */
export function relayServing(name: SystemName, url: string, pids: readonly number[], heapBytes: () => Promise<number>): System {
  return {
    name,
    pids,
    endpoints: { ws: { base: ws(url), ack: true }, http: { base: url, ack: false } },
    listBase: url,
    resume: "rv",
    /** The hub's window head, from the relay's per-key stats endpoint. */
    async head(path, labelSelector) {
      const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
      const response = await fetch(`${url}/_relay/stats${path}${query}`);
      return response.ok ? Number(((await response.json()) as { resourceVersion?: number }).resourceVersion ?? 0) : 0;
    },
    heapBytes,
  };
}

/** The relay served at `url` as each of its systems: `relay`, `relay-batched`, `relay-delta`, `relay-socket` and `relay-gzip`. */
function relaySystems(url: string, pids: readonly number[], heapBytes: () => Promise<number>): [System, System, System, System, System] {
  const relay = relayServing("relay", url, pids, heapBytes);
  const batched: System = { ...relay, name: "relay-batched", endpoints: { ws: { base: ws(url), ack: true, protocol: BATCH_PROTOCOL } } };
  const delta: System = { ...relay, name: "relay-delta", endpoints: { ws: { base: ws(url), ack: true, protocol: DELTA_PROTOCOL, compact: true } } };
  const socket: System = { ...relay, name: "relay-socket", endpoints: { ws: { base: ws(url), ack: true, protocol: BATCH_PROTOCOL, socket: true } } };
  const gzip: System = { ...relay, name: "relay-gzip", endpoints: { ws: { base: ws(url), ack: true, protocol: GZIP_BATCH_PROTOCOL } } };
  return [relay, batched, delta, socket, gzip];
}

/**
 * The relay as `npm start` serves it: `relay`, `relay-batched`, `relay-delta`, `relay-socket` and `relay-gzip`.
 * `name` names its log and, unless `stateDir` is given, its state directory (a scenario with a
 * relay of its own names it apart; a relay started again on a `stateDir` restores its hubs);
 * `clusters`, more clusters it relays by name (`CLUSTERS`), beside the hot scenario's.
 */
export async function startRelay(
  sim: Sim,
  logDir: string,
  {
    name = "relay",
    stateDir = join(logDir, `${name}-state`),
    replicaWorkerd = false,
    muxWorkerd = false,
    clusters = {},
  }: { name?: string; stateDir?: string; replicaWorkerd?: boolean; muxWorkerd?: boolean; clusters?: Record<string, { url: string }> } = {},
): Promise<Relay> {
  // The hot scenario's clusters (the same upstream, each with its own share per hub), and any other the caller relays.
  const args: RelayRuntimeArgs = { vars: { UPSTREAM_URL: sim.url, ...RELAY_VARS, CLUSTERS: JSON.stringify({ ...hotClusters(sim.url), ...clusters }) }, stateDir, replicaWorkerd, muxWorkerd };
  const child = await startChild<RelayRuntimeInfo>(name, new URL("../hosts/relay-runtime.ts", import.meta.url), args, logDir, 120_000);
  const { info } = child;
  // Not a Kubernetes path: the relay's router answers 404 without touching a hub or the upstream.
  const inspector = await Inspector.connect(info.inspectorUrl, `${info.url}/_bench/nudge`);
  const heapBytes = () => isolateHeap(inspector);
  // Its cost is every workerd's where replicas or mux objects have one of their own.
  const seconds = [
    { pid: info.replicaPid, role: "replica hubs" },
    { pid: info.muxPid, role: "mux objects" },
  ].filter((s): s is { pid: number; role: string } => s.pid !== undefined);
  const pids = [info.pid, ...seconds.map((s) => s.pid)];
  const systems = relaySystems(info.url, pids, heapBytes);
  const [relay, , , socket] = systems;
  const processes = [
    { role: `${name} (workerd)`, pid: info.pid },
    ...seconds.map((s) => ({ role: `${name}: ${s.role} (workerd)`, pid: s.pid })),
    { role: `${name}: npm start's runtime host (node)`, pid: child.pid },
  ];
  return {
    relay,
    socket,
    systems,
    nearReplicas: info.replicaUrl === undefined ? undefined : relaySystems(info.replicaUrl, pids, heapBytes),
    nearMux: info.muxUrl === undefined ? undefined : relaySystems(info.muxUrl, pids, heapBytes),
    info,
    inspector,
    processes,
    stateDir,
    stop: async () => {
      inspector.close();
      await child.stop();
    },
  };
}

/** The relay as `npm run dev` serves it: through `wrangler dev`'s proxy worker, with the defaults `npm run dev` gives it. */
export async function startProxiedRelay(sim: Sim, logDir: string): Promise<Launched> {
  const vars = oneThreadDefaults({ UPSTREAM_URL: sim.url, ...RELAY_VARS });
  const { info, inspector, processes } = await startWorkerd("relay-proxied", new URL("../../wrangler.toml", import.meta.url), vars, "/_bench/nudge", logDir);
  return { systems: [relayServing("relay-proxied", info.proxyUrl, [info.pid, info.proxyPid], () => isolateHeap(inspector))], processes };
}

export async function startFloor(sim: Sim, logDir: string): Promise<Launched> {
  const { info, inspector, processes } = await startWorkerd("workerd-floor", new URL("../floor/wrangler.toml", import.meta.url), { UPSTREAM_URL: sim.url }, "/_bench/nudge", logDir);
  const floor: System = {
    name: "workerd-floor",
    pids: [info.pid],
    endpoints: { ws: { base: ws(info.url), ack: false } },
    resume: "rv",
    /** The last resourceVersion its object followed (what its history reaches). */
    async head(path, labelSelector) {
      const response = await fetch(`${info.url}/_bench/head?${new URLSearchParams({ path, labelSelector: labelSelector ?? "" })}`);
      return response.ok ? Number(await response.text()) : 0;
    },
    heapBytes: () => isolateHeap(inspector),
  };
  return { systems: [floor], processes };
}
