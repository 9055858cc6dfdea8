/**
 * @module
 * `fleet`: one watch across clusters: `clusters` simulators relayed as `fleet-0`, `fleet-1`, … and
 * watched as the merged key `/clusters/fleet-0,fleet-1,…/…`, step by step.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { get } from "node:http";
import { WRITTEN_AT } from "../../src/sim/index.ts";
import { CLUSTER_ANNOTATION, CLUSTER_VERSION_ANNOTATION, MEMBERS_BEHIND_HEADER } from "../../src/k8s/members.ts";
import { ByteLines } from "../lines.ts";
import type { SubscriberSpec } from "../loadgen.ts";
import { measureWhile, receiptFields, round, type Window } from "../measure.ts";
import { waitIdle } from "../proc.ts";
import type { FleetRow } from "../rows.ts";
import type { Sim } from "../sim.ts";
import { Histogram } from "../stats.ts";
import { subscriber } from "../systems/system.ts";
import { OWN, until, withOwn, type Own } from "./own.ts";
import { podsOf, type Scenario } from "./scenario.ts";
import { firstFrame, listUntilServed, timedGet } from "./views.ts";

const NAMESPACE = "fleet";
const PODS = podsOf(NAMESPACE);
const memberName = (i: number) => `fleet-${i}`;
const CATCH_UP_MS = 60_000;
/** Changes each cluster makes before a storm's drop: every subscriber holds a live resourceVersion. */
const LIVE_EVENTS = 5;
/** Youngest first: the churn's new pods, from every cluster, land in the live view's window. */
const VIEW_SORT = "-Age";

export const fleet: Scenario = {
  name: "fleet",
  systems: ["relay"],
  ...OWN,
  run: (context, systems) =>
    withOwn(
      context,
      systems,
      "fleet",
      { namespaces: [NAMESPACE], slimPods: true },
      measure,
      Array.from({ length: context.sizes.fleet.clusters }, (_, i) => memberName(i)),
    ),
};

async function measure(own: Own): Promise<FleetRow[]> {
  const { sims, context } = own;
  const { loadgens } = context;
  const size = context.sizes.fleet;
  const relay = own.relay.relay;
  const url = own.relay.info.url;
  const members = sims.map((_, i) => memberName(i));
  const merged = `/clusters/${members.join(",")}${PODS}`;
  const memberPath = (i: number) => `/clusters/${members[i]}${PODS}`;
  const progress = (line: string) => context.progress(`fleet: ${line}`);
  const sum = async (each: (sim: Sim, i: number) => Promise<number>) => (await Promise.all(sims.map(each))).reduce((a, b) => a + b, 0);
  const churn = (rate: number) => Promise.all(sims.map((s) => s.churn(rate, NAMESPACE)));
  /**
   * The merged number of the newest change the merged key's objects carry: where a watch without
   * bookmarks ends once changes stop. Not the hub's head, which also moves by a bookmark alone
   * (when the members behind change: a member back after the changes stopped, under load).
   */
  const lastChange = async (): Promise<number> => {
    const list = await timedGet(`${url}${merged}?resourceVersion=0`, true);
    if (list.status !== 200) throw new Error(`fleet: the merged list: HTTP ${list.status} ${list.body.slice(0, 300)}`);
    const { items } = JSON.parse(list.body) as { items: Array<{ metadata: { resourceVersion: string } }> };
    return items.reduce((newest, o) => Math.max(newest, Number(o.metadata.resourceVersion)), 0);
  };
  /** The merged key's last change once every member's hub holds `targets` and the merge hub has taken it all. */
  const settled = async (targets: readonly number[]): Promise<number> => {
    const held = await until(async () => (await Promise.all(targets.map(async (t, i) => (await relay.head(memberPath(i))) >= t))).every(Boolean), size.timeoutMs, 50);
    if (!held) throw new Error(`fleet: the members' hubs did not reach ${targets.join(", ")} in ${size.timeoutMs / 1000} s`);
    let head = await relay.head(merged);
    for (;;) {
      await sleep(250);
      const now = await relay.head(merged);
      if (now === head && now > 0) return lastChange();
      head = now;
    }
  };

  /** A subscriber of `path` from its head: no initial state, whose old objects would time as late events. */
  const fromHead = async (path: string) => {
    const spec = subscriber(relay, "ws", context.sim, path);
    return { ...spec, url: `${spec.url}&resourceVersion=${await relay.head(path)}` };
  };
  const onMergedKey = async () => new Array<SubscriberSpec>(size.subscribers).fill(await fromHead(merged));

  progress(`${size.clusters} clusters of ${size.pods} pods`);
  const objects = await sum((s) => s.populate(NAMESPACE, size.pods));
  const base = { scenario: "fleet" as const, system: "relay" as const, clusters: size.clusters, objects };
  await context.quiesce();
  // Every member's hub first: a member that takes more than a second is left out of a merged list.
  for (let i = 0; i < sims.length; i++) await listUntilServed(`${url}${memberPath(i)}`, size.timeoutMs);
  await context.quiesce();

  const rows: FleetRow[] = [];
  progress(`the merged list of ${objects} pods, cold (builds the merge hub) and warm`);
  for (const step of ["merged list, cold (builds the merge hub from its members' hubs)", "merged list, warm"]) {
    const seqs = await Promise.all(sims.map((s) => s.requestSeq()));
    const list = await timedGet(`${url}${merged}`);
    if (list.status !== 200) throw new Error(`fleet: the merged list: HTTP ${list.status} ${list.body.slice(0, 300)}`);
    const behind = list.headers[MEMBERS_BEHIND_HEADER];
    rows.push({
      ...base,
      transport: "http",
      step,
      ms: round(list.ms),
      firstByteMs: round(list.firstByteMs),
      bytes: list.bytes,
      upstreamWatches: await sum((s) => s.watchesIn(NAMESPACE)),
      upstreamRequests: await sum((s, i) => s.requestsSince(seqs[i] as number, NAMESPACE).then((r) => r.length)),
      ...(behind ? { note: `members behind: ${String(behind)}` } : {}),
    });
  }

  const churning = async (specs: SubscriberSpec[]) => {
    await context.quiesce();
    await loadgens.open(specs);
    await waitIdle([...sims.map((s) => s.pid), ...relay.pids]);
    await churn(size.rate);
    await sleep(size.warmupMs);
  };
  const delivery = async (step: string, specs: SubscriberSpec[], watches: number): Promise<FleetRow> => {
    await churning(specs);
    const window = await measureWhile(context, relay, () => sleep(size.measureMs));
    await churn(0);
    await loadgens.close();
    return { ...base, transport: "ws", step, subscribers: size.subscribers, watches, ms: size.measureMs, ...windowFields(window) };
  };
  const S = size.subscribers;
  progress(`${S} subscribers on the merged key, ${size.rate} changes/s in each cluster`);
  const onMerged = await delivery(`live delivery: ${S} subscribers on the merged key`, await onMergedKey(), S);
  progress(`the same ${S} subscribers, each watching every cluster's own key`);
  const perCluster = await delivery(
    `live delivery: the same ${S} subscribers on every cluster's own key`,
    (await Promise.all(sims.map((_, i) => fromHead(memberPath(i))))).flatMap((spec) => Array.from({ length: S }, () => spec)),
    S * sims.length,
  );
  const ratio = onMerged.cpuUsPerEvent && perCluster.cpuUsPerEvent ? perCluster.cpuUsPerEvent / onMerged.cpuUsPerEvent : undefined;
  rows.push(onMerged, { ...perCluster, ...(ratio === undefined ? {} : { note: `CPU per delivered event ${round(ratio)}× the merged key's` }) });

  progress(`a storm: ${S} subscribers resume on the merged key after ${size.missed} changes in each cluster`);
  await context.quiesce();
  await loadgens.open(await onMergedKey());
  const live = await settled(await Promise.all(sims.map((s) => s.step(NAMESPACE, LIVE_EVENTS))));
  const synced = await loadgens.waitFor(live, size.timeoutMs);
  if (synced.missing > 0) throw new Error(`fleet: ${synced.missing} subscribers never saw the merged key's resourceVersion ${live}`);
  await loadgens.drop();
  await sleep(200);
  await context.quiesce();
  const stormSeqs = await Promise.all(sims.map((s) => s.requestSeq()));
  const target = await settled(await Promise.all(sims.map((s) => s.step(NAMESPACE, size.missed))));
  const started = Date.now();
  const resumed = await loadgens.resume(target, size.timeoutMs);
  const requests = await sum((s, i) => s.requestsSince(stormSeqs[i] as number, NAMESPACE).then((r) => r.length));
  await loadgens.close();
  rows.push({
    ...base,
    transport: "ws",
    step: `storm: ${S} subscribers resume on the merged key after ${size.missed} changes in each cluster`,
    subscribers: S,
    ms: resumed.missing === 0 ? Math.max(0, ...resumed.caughtUpAt.map((at) => at - started)) : null,
    upstreamRequests: requests,
    errors: resumed.errors,
    note: `${resumed.caughtUpAt.length} of ${S} caught up`,
  });

  const down = sims.length - 1;
  const downSim = sims[down] as Sim;
  progress(`${members[down]} down for ${size.downMs / 1000} s under churn, ${S} subscribers on the merged key`);
  await churning(await onMergedKey());
  const downSeq = await downSim.requestSeq();
  const rvDown = await downSim.resourceVersion();
  const tally = tallyWatch(`${url}${merged}?watch=1&resourceVersion=${await relay.head(merged)}`, members[down] as string);
  // Its listener closes (every connection with it) and opens again after `downMs`; its churn goes on.
  await downSim.faults({ restart: { downtimeMs: size.downMs } });
  const downAt = performance.now();
  await sleep(size.downMs * 0.1);
  const during = await measureWhile(context, relay, () => sleep(size.downMs * 0.8));
  rows.push({
    ...base,
    transport: "ws",
    step: `${members[down]} down for ${size.downMs / 1000} s: the others' delivery meanwhile`,
    subscribers: S,
    ms: round(size.downMs * 0.8),
    ...windowFields(during),
  });
  await sleep(Math.max(0, downAt + size.downMs - performance.now()));
  const answering = async () => (await downSim.stats().catch(() => undefined)) !== undefined;
  if (!(await until(answering, size.timeoutMs, 50))) throw new Error(`fleet: ${members[down]}'s simulator did not come back`);
  const backAt = performance.now();
  const rvBack = await downSim.resourceVersion();
  const caughtUp = await until(async () => (await relay.head(memberPath(down))) >= rvBack, size.timeoutMs, 50);
  const backMs = performance.now() - backAt;
  // Churn stopped first: a saturated relay would never let every subscriber reach a moving head.
  await churn(0);
  const newest = await settled(await Promise.all(sims.map((s) => s.resourceVersion())));
  // Not the mode's whole timeout: a subscriber the relay cut off (fallen out of its window) never gets there.
  const reached = await loadgens.waitFor(newest, Math.min(size.timeoutMs, CATCH_UP_MS));
  const since = await downSim.requestsSince(downSeq, NAMESPACE);
  await loadgens.close();
  const lists = since.filter((r) => r.verb === "list").length;
  const tallied = await until(async () => tally.last >= newest || tally.ended, Math.min(size.timeoutMs, CATCH_UP_MS), 50);
  const cutOff = tally.ended;
  tally.close();
  const missed = tally.versions.filter((v) => v > rvDown && v <= rvBack);
  const once =
    tallied && !cutOff ? `a watch of the merged key got ${new Set(missed).size} of them, ${missed.length - new Set(missed).size} twice` : "a watch of the merged key was ended before it got them all";
  rows.push({
    ...base,
    transport: "ws",
    step: `${members[down]} back: its hub holds what changed there meanwhile`,
    subscribers: S,
    ms: caughtUp ? round(backMs) : null,
    upstreamRequests: since.length,
    note:
      `${rvBack - rvDown} changes in ${members[down]} while it was down; ${since.filter((r) => r.verb === "watch").length} watch and ${lists} list requests to it` +
      `${lists === 0 ? " (resumed from its resourceVersion, not relisted)" : ""}; ${once}; ` +
      `${S - reached.missing} of ${S} subscribers reached the merged key's last change after it`,
  });

  progress(`a view on the merged key: first frames, then a live window under churn`);
  await context.quiesce();
  const view = (query: string) => `${url}${merged}?view=1&${query}&limit=${size.viewLimit}&watch=1`;
  const opens: Array<[string, string]> = [
    [`view: first frame, sort ${VIEW_SORT} (cold: builds the order's index)`, `sort=${VIEW_SORT}`],
    [`view: first frame, sort ${VIEW_SORT}, its second window`, `sort=${VIEW_SORT}&offset=${size.viewLimit}`],
    [`view: first frame, filter Cluster=${members[1]}, sort name`, `sort=name&filter=${encodeURIComponent(`Cluster=${members[1]}`)}`],
  ];
  for (const [step, query] of opens) {
    const frame = await firstFrame(view(query));
    rows.push({ ...base, transport: "http", step, ms: round(frame.ms), bytes: frame.bytes });
  }
  await churn(size.rate);
  const changes = await liveView(view(`sort=${VIEW_SORT}&rows=object`), size.warmupMs, size.measureMs, (key) => {
    // `<namespace>/<cluster>:<name>`: a label patched on the pod in its own cluster, which moves it nowhere in the view's order.
    const [namespace, ownName] = key.split("/") as [string, string];
    const colon = ownName.indexOf(":");
    const sim = sims[members.indexOf(ownName.slice(0, colon))];
    return sim?.patch(namespace, ownName.slice(colon + 1), { metadata: { labels: { "bench-fleet-tick": String(Date.now()) } } });
  });
  await churn(0);
  rows.push({
    ...base,
    transport: "http",
    step: `view: live, ${size.viewLimit} rows sorted ${VIEW_SORT}, a visible row's change under ${size.rate} changes/s in each cluster`,
    subscribers: 1,
    ms: size.measureMs,
    p50Ms: changes.percentile(50) ?? null,
    p99Ms: changes.percentile(99) ?? null,
    note: `${changes.count} row changes, from their write to the frame that carried them`,
  });
  return rows;
}

function windowFields(window: Window): Pick<FleetRow, "deliveredPerSec" | "p50Ms" | "p99Ms" | "cpuUsPerEvent" | "serverCpuPct" | "errors"> {
  const receipt = receiptFields(window);
  return {
    deliveredPerSec: round(window.report.eventsPerSec),
    p50Ms: receipt.p50Ms,
    p99Ms: receipt.p99Ms,
    cpuUsPerEvent: receipt.cpuUsPerEvent,
    serverCpuPct: receipt.serverCpuPct,
    errors: receipt.errors + receipt.cutOffs,
  };
}

interface ViewRow {
  key: string;
  resourceVersion: string;
  object?: { metadata?: { annotations?: Record<string, string> } };
}
interface Frame {
  type: string;
  rows?: ViewRow[];
  changes?: Array<{ op: string; row?: ViewRow }>;
}

/** A watch of a merged key keeping the cluster-resource-version of every event of `cluster`. */
function tallyWatch(url: string, cluster: string): { versions: number[]; last: number; ended: boolean; close(): void } {
  const tally = { versions: [] as number[], last: 0, ended: false, close: () => request.destroy() };
  const request = get(url, { agent: false }, (response) => {
    response.on("close", () => void (tally.ended = true));
    // A newline alone (the relay's keep-alive) is no line.
    const lines = new ByteLines();
    response.on("data", (chunk: Buffer) =>
      lines.push(chunk, (line) => {
        const event = JSON.parse(line.toString()) as { type: string; object: { metadata?: { resourceVersion?: string; annotations?: Record<string, string> } } };
        const { resourceVersion, annotations } = event.object.metadata ?? {};
        tally.last = Math.max(tally.last, Number(resourceVersion ?? 0));
        if (event.type !== "BOOKMARK" && annotations?.[CLUSTER_ANNOTATION] === cluster) tally.versions.push(Number(annotations[CLUSTER_VERSION_ANNOTATION]));
      }),
    );
  });
  request.on("error", () => undefined);
  return tally;
}

/** Visible rows patched a second while a live view is measured: the churn alone changes too few. */
const VIEW_PATCHES_PER_SEC = 20;

/** A live view's row updates timed from write to frame (not inserts: a row moving in was written long before). */
function liveView(url: string, warmupMs: number, measureMs: number, patch: (key: string) => Promise<unknown> | undefined): Promise<Histogram> {
  const latency = new Histogram();
  const shown = new Map<string, string>();
  const from = performance.now() + warmupMs;
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`fleet: ${url}: HTTP ${response.statusCode}`));
      const lines = new ByteLines();
      response.on("data", (chunk: Buffer) => {
        const [at, measuring] = [Date.now(), performance.now() >= from];
        lines.push(chunk, (line) => {
          const frame = JSON.parse(line.toString()) as Frame;
          if (frame.type === "VIEW") shown.clear();
          for (const row of frame.rows ?? []) shown.set(row.key, row.resourceVersion);
          for (const { op, row } of frame.changes ?? []) {
            if (!row) continue;
            const before = shown.get(row.key);
            shown.set(row.key, row.resourceVersion);
            const written = Number(row.object?.metadata?.annotations?.[WRITTEN_AT] ?? 0);
            if (measuring && op === "update" && before !== undefined && before !== row.resourceVersion && written > 0) latency.add(at - written);
          }
        });
      });
    });
    request.on("error", (e) => (request.destroyed ? undefined : reject(e)));
    const patching = setInterval(() => {
      const keys = [...shown.keys()];
      const key = keys[Math.floor(Math.random() * keys.length)];
      if (key) void patch(key)?.catch(() => undefined);
    }, 1000 / VIEW_PATCHES_PER_SEC);
    setTimeout(() => {
      clearInterval(patching);
      request.destroy();
      resolve(latency);
    }, warmupMs + measureMs);
  });
}
