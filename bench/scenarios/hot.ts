/**
 * @module
 * `hot`: one key's subscribers on one hub and spread over replica hubs (`report-hot.ts` says how):
 * S on k replicas watch the relay's cluster of share S ÷ k; `bench-hot-solo` never spreads.
 */
import { get, type ClientRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { deliveryFields, measureWindow, round } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import { inRound } from "../rounds.ts";
import type { HotRow, TreeHub } from "../rows.ts";
import { percentileOf } from "../stats.ts";
import type { SubscriberSpec } from "../loadgen.ts";
import { subscriber, type System } from "../systems/system.ts";
import type { Relay } from "../systems/workerd.ts";
import { clusterOf, plan, type Measurement } from "./hot-plan.ts";
import { startSplit, until, type HubStats } from "./own.ts";
import { podsOf, type Context, type Scenario } from "./scenario.ts";

/** The Worker keeps a root's list of replicas this long (`src/http/placement.ts`): a wave after it is placed afresh. */
const PLACEMENT_FRESH_MS = 5000;
/** A replica tells its root its subscribers within this long of a change (`src/hub/replicas.ts`). */
const REPORT_MS = 1000;

const namespaceOf = (system: string, subscribers: number, replicas: number, split: boolean) => `hot-${system}-${subscribers}-${replicas}${split ? "-split" : ""}`;
const NO_STORM = { missedEvents: null, catchUpMs: null, catchUpP50Ms: null, caughtUp: null, stormUpstreamRequests: null, stormErrors: null, stormOnReplicas: null };
const pathOf = (cluster: string, namespace: string) => `/clusters/${cluster}${podsOf(namespace)}`;

export const hot: Scenario = {
  name: "hot",
  systems: ["relay", "relay-batched"],
  namespaces: (sizes, systems) => plan(sizes).flatMap((p) => systems.map((s) => namespaceOf(s, p.subscribers, p.replicas, p.split))),
  async run(context, systems) {
    const rows: HotRow[] = [];
    let split: { relay: Relay; context: Context } | undefined;
    try {
      for (const measurement of plan(context.sizes)) {
        for (const system of systems) {
          if (!measurement.split) {
            rows.push(await runOne(context, system, measurement));
            continue;
          }
          split ??= await startSplit(context, "hot-split-relay", { replicaWorkerd: true }, "hot: starting a relay whose replica hubs run in a second workerd");
          // Subscribers are admitted next to their hub, or a tree's replicas, as deployed.
          const same = (measurement.replicas === 0 ? split.relay.systems : (split.relay.nearReplicas ?? [])).find((s) => s.name === system.name);
          if (!same) throw new Error(`hot: the relay with a replicas' workerd serves no ${system.name}`);
          rows.push({ ...(await runOne(split.context, same, measurement)), replicaWorkerd: true });
        }
      }
    } finally {
      await split?.relay.stop();
    }
    return rows;
  },
};

interface Stats extends HubStats {
  sent: Record<"websocket" | "http", { events: number; messages: number }>;
  replicas: Array<{ name: string; subscribers: number }>;
}

async function runOne(context: Context, system: System, { subscribers, replicas, storm, measureMs, split }: Measurement): Promise<HotRow> {
  const { sim, loadgens, sizes } = context;
  const base = system.listBase;
  if (!base) throw new Error(`hot: ${system.name} serves no HTTP`);
  const namespace = inRound(namespaceOf(system.name, subscribers, replicas, split), context.round);
  const path = pathOf(clusterOf(subscribers, replicas), namespace);
  // Asked again after a 500, which a cluster's discovery refresh may cause (BENCHMARKS.md, hot).
  const stats = async (replica?: string): Promise<Stats> => {
    for (let tries = 1; ; tries++) {
      const response = await fetch(`${base}/_relay/stats${path}${replica ? `?replica=${encodeURIComponent(replica)}` : ""}`);
      if (response.ok) return (await response.json()) as Stats;
      if (response.status < 500 || tries === 10) throw new Error(`hot: stats of ${replica ?? "the root"}: HTTP ${response.status} ${await response.text()}`);
      await sleep(300);
    }
  };
  const treeStats = async (tree: readonly string[]) => {
    const all = [await stats()];
    for (const name of tree) all.push(await stats(name));
    return all;
  };
  /** Subscribers and placeholders answered with a 5xx while the tree was built. */
  let refused = 0;
  let missing = 0;
  const open = async (count: number) => {
    const failed = await openSome(context, new Array<SubscriberSpec>(count).fill(spec));
    refused += failed;
    missing += failed;
  };
  const onReplicas = async () => (await stats()).replicas.reduce((n, r) => n + r.subscribers, 0);
  const spec = subscriber(system, "ws", sim, path);
  context.progress(`hot ${system.name}: ${subscribers} subscribers, ${replicas === 0 ? "no replicas" : `${replicas} replicas`}, ${sizes.hot.rate} events/s${split ? " (replicas' workerd)" : ""}`);
  await context.quiesce();
  let release: (() => void) | undefined;
  if (replicas === 0) {
    await open(subscribers);
  } else {
    const share = subscribers / replicas;
    release = await holdWatches(`${base}${path}?watch=1`, share, (status) => {
      refused++;
      context.progress(`hot ${system.name}: a placeholder watch got HTTP ${status}; asked again`);
    });
    await waitUntil(async () => (await stats()).subscribers >= share, `the root to hold its ${share} placeholders`);
    for (let wave = 1; wave <= replicas; wave++) {
      const started = Date.now();
      await open(share);
      // Not the root's own count: a cancelled request may leave a watch there until the churn writes.
      await waitUntil(async () => (await onReplicas()) === wave * share - missing, `the replicas to hold ${wave * share - missing} subscribers`);
      if (wave < replicas) await sleep(Math.max(0, started + PLACEMENT_FRESH_MS + 200 - Date.now()));
    }
  }
  await waitIdle([...system.pids, sim.pid]);
  const tree = (await stats()).replicas.map((r) => r.name);
  await sim.churn(sizes.hot.rate, namespace);
  if (release) {
    release();
    // The root notices a watch has gone when it next writes to it: the churn's first events.
    const rootOnly = async () => {
      const root = await stats();
      return root.subscribers === root.replicas.length;
    };
    await waitUntil(rootOnly, "the root to serve its replicas only");
  }
  await sleep(sizes.hot.warmupMs);
  let upstreamWatches = 0;
  const before = await treeStats(tree);
  const window = await measureWindow(context, system, measureMs, async () => {
    upstreamWatches = Math.max(upstreamWatches, await sim.watchesIn(namespace));
  });
  const after = await treeStats(tree);
  await sim.churn(0);
  const hubs = after.map((hub, i) => treeHub(i === 0 ? "root" : (tree[i - 1] as string), hub, before[i] as Stats, tree.length));
  const row: HotRow = {
    scenario: "hot",
    system: system.name,
    transport: "ws",
    subscribers,
    replicas,
    replicasLive: hubs.filter((h) => h.hub !== "root" && h.subscribers > 0).length,
    hubs,
    ...deliveryFields(window, sizes.hot.rate, subscribers - missing),
    upstreamWatches,
    refused,
    ...(storm ? await stormOf(context, system, path, namespace, subscribers, replicas, missing, onReplicas) : NO_STORM),
  };
  await loadgens.close();
  await waitIdle([...system.pids, sim.pid], { maxMs: 20_000 });
  return row;
}

function treeHub(name: string, after: Stats, before: Stats, replicas: number): TreeHub {
  const root = name === "root";
  const own = root ? after.subscribers - replicas : after.subscribers;
  const committed = after.eventsCommitted - before.eventsCommitted;
  const messages = after.sent.websocket.messages + after.sent.http.messages - before.sent.websocket.messages - before.sent.http.messages;
  return {
    // A replica's name is its root's, `#`, and its own: the root's is long and the same for all.
    hub: root ? "root" : name.slice(name.lastIndexOf("#") + 1),
    subscribers: own,
    destinations: root ? own + replicas : own,
    messagesPerEvent: committed > 0 ? round(messages / committed) : null,
  };
}

async function stormOf(context: Context, system: System, path: string, namespace: string, subscribers: number, replicas: number, missing: number, onReplicas: () => Promise<number>) {
  const { sim, loadgens, sizes } = context;
  // The window's backlog delivered first: every subscriber leaves from the head.
  await waitIdle([...system.pids, sim.pid], { maxMs: sizes.hot.timeoutMs });
  const live = await sim.step(namespace, 10);
  const synced = await loadgens.waitFor(live, sizes.hot.timeoutMs);
  if (synced.missing > missing) throw new Error(`hot ${system.name}: ${synced.missing - missing} subscribers never saw resourceVersion ${live}`);
  await loadgens.drop();
  await waitIdle([...system.pids, sim.pid]);
  const seq = await sim.requestSeq();
  const target = await sim.step(namespace, sizes.hot.missed);
  await until(async () => (await system.head(path)) >= target, sizes.hot.timeoutMs, 50);
  context.progress(`hot ${system.name}: storm of ${subscribers} subscribers after ${sizes.hot.missed} missed events (${replicas} replicas)`);
  const started = Date.now();
  const result = await loadgens.resume(target, sizes.hot.timeoutMs);
  const requests = await sim.requestsSince(seq, namespace);
  await sleep(REPORT_MS + 200);
  const times = result.caughtUpAt.map((at) => at - started);
  return {
    missedEvents: sizes.hot.missed,
    catchUpMs: result.missing === 0 ? Math.max(0, ...times) : null,
    catchUpP50Ms: percentileOf(times, 50) ?? null,
    caughtUp: result.caughtUpAt.length,
    stormUpstreamRequests: requests.length,
    stormErrors: result.errors,
    stormOnReplicas: replicas === 0 ? 0 : await onReplicas(),
  };
}

/** `count` watches that fill the root's own share until ended; a few at a time, so it counts each. */
async function holdWatches(url: string, count: number, failed: (status: number) => void): Promise<() => void> {
  const requests: ClientRequest[] = [];
  const attempt = () =>
    new Promise<number>((resolve, reject) => {
      let opened = false;
      const request = get(url, { agent: false }, (response) => {
        response.resume();
        opened = response.statusCode === 200;
        resolve(response.statusCode ?? 0);
      });
      request.on("error", (e) => opened || reject(e));
      requests.push(request);
    });
  const open = async () => {
    for (let tries = 1; ; tries++) {
      const status = await attempt();
      if (status === 200) return;
      failed(status);
      if (status < 500 || tries === 5) throw new Error(`hot: a placeholder watch got HTTP ${status}`);
      await sleep(500);
    }
  };
  for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: Math.min(10, count - i) }, open));
  return () => {
    for (const request of requests) request.destroy();
  };
}

/** Open subscribers; how many the relay refused (they stay unconnected until the storm). */
async function openSome(context: Context, specs: SubscriberSpec[]): Promise<number> {
  try {
    await context.loadgens.open(specs);
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    const failed = Number(/^(\d+) of \d+ subscribers could not connect/.exec(message)?.[1]);
    if (!Number.isInteger(failed)) throw e;
    context.progress(`hot: ${message}`);
    return failed;
  }
}

async function waitUntil(done: () => Promise<boolean>, what: string): Promise<void> {
  if (!(await until(done, 30_000, 100))) throw new Error(`hot: waited 30 s for ${what}`);
}
