/**
 * @module
 * `big`: one large collection through one hub, step by step (the report's method lists them). A
 * subscriber watches throughout, so that the hub keeps its upstream watch between steps.
 */
import { get, type ClientRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { DELTA_PROTOCOL } from "../../src/k8s/websocket.ts";
import { pagedList, timedList, type TimedList } from "../listing.ts";
import type { CatchUp, SubscriberSpec } from "../loadgen.ts";
import { deliveryFields, measureMemory, round, traceMemory, type MemoryTrace } from "../measure.ts";
import { cpuMeter } from "../proc.ts";
import type { BigRow } from "../rows.ts";
import { subscriber, type System, type SystemName } from "../systems/system.ts";
import { churnWindow, hubStats, OWN, stepCost, until, withOwn, type HubStats, type Own } from "./own.ts";
import { podsOf, type Scenario } from "./scenario.ts";

const NAMESPACE = "big";
const PATH = podsOf(NAMESPACE);

/** Common annotations, so that a grown pod as the relay serves it is about 3.5 KB. */
export const BIG_POD_ANNOTATIONS: Readonly<Record<string, string>> = {
  "kubectl.kubernetes.io/restartedAt": "2026-11-20T09:14:03Z",
  "prometheus.io/path": "/metrics",
  "prometheus.io/port": "9090",
  "prometheus.io/scrape": "true",
};

function keepWatching(url: string): ClientRequest {
  const request = get(url, { agent: false }, (response) => response.resume());
  request.on("error", () => undefined);
  return request;
}

const MB = 2 ** 20;
/** When a paged list of the cold key is asked, after the request that starts the hub's first list. */
const LATE_MS = 2000;

export const big: Scenario = {
  name: "big",
  systems: ["relay", "direct", "relay-batched", "relay-gzip"],
  ...OWN,
  // The watch cache's history must reach back over the storm's and the relist's changes.
  run: (context, systems) =>
    withOwn(context, systems, "big", { namespaces: [NAMESPACE], historyLimit: 100_000 }, async (own) => {
      let keeper: ClientRequest | undefined;
      try {
        return await steps(own, systems, (url) => (keeper = keepWatching(url)));
      } finally {
        keeper?.destroy();
      }
    }),
};

async function steps(own: Own, systems: readonly System[], keep: (url: string) => void): Promise<BigRow[]> {
  const { sim } = own;
  const size = own.context.sizes.big;
  const rows: BigRow[] = [];
  const relayUrl = () => own.relay.info.url;
  const relay = () => own.relay.relay;
  const stats = () => hubStats(relayUrl(), PATH);
  const progress = (line: string) => own.context.progress(`big: ${line}`);

  progress(`growing the collection to ${size.objects} pods`);
  const objects = await sim.populate(NAMESPACE, size.objects, BIG_POD_ANNOTATIONS);
  if (objects !== size.objects) throw new Error(`big: the simulator holds ${objects} pods, not ${size.objects}`);
  const base = { scenario: "big" as const, objects };

  const step = async <T>(name: string, work: () => Promise<T>): Promise<{ result: T; before: HubStats; after: HubStats; memory: MemoryTrace }> => {
    progress(name);
    await own.context.quiesce();
    const before = await stats();
    const { result, memory } = await traceMemory(relay(), size.sampleMs, work);
    return { result, before, after: await stats(), memory };
  };
  const row = (name: string, transport: BigRow["transport"], traced: { before: HubStats; after: HubStats; memory: MemoryTrace }, fields: Partial<BigRow>): BigRow => ({
    ...base,
    system: "relay",
    transport,
    step: name,
    ms: null,
    ...stepCost(traced.memory, traced.before, traced.after),
    ...fields,
  });
  const listFields = (list: { firstByteMs: number; ms: number; bytes: number; items: number }, what: string) => {
    if (list.items !== objects) throw new Error(`big: ${what} had ${list.items} items, not ${objects}`);
    return { ms: Math.round(list.ms), firstByteMs: round(list.firstByteMs), bytes: list.bytes, MBps: round(list.bytes / MB / (list.ms / 1000)) };
  };
  /** Upstream requests since `seq`: list pages apart from the one-item lists asking for a resourceVersion. */
  const upstreamSince = async (seq: number) => {
    const requests = await sim.requestsSince(seq, NAMESPACE);
    const lists = requests.filter((r) => r.verb === "list");
    const checks = lists.filter((r) => new URLSearchParams(r.query).get("limit") === "1").length;
    const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
    return {
      all: requests.length,
      pages: lists.length - checks,
      said: `${count(lists.length - checks, "list page")}, ${count(checks, "resourceVersion check")} (limit=1) and ${count(requests.filter((r) => r.verb === "watch").length, "watch")} upstream`,
    };
  };

  /** A row of no traced step (`memory`: one reading, if any). */
  const untraced = (system: SystemName, step: string, fields: Partial<BigRow>, memory?: MemoryTrace): BigRow => ({
    ...base,
    system,
    transport: "http",
    step,
    ms: null,
    ...stepCost(memory, undefined, undefined),
    ...fields,
  });
  const idle = await measureMemory(relay());
  rows.push(untraced("relay", "idle, before the first request", {}, { heapMax: idle.heap, heapAfter: idle.heap, rssMax: idle.rss, samples: 1 }));

  if (systems.some((s) => s.name === "direct")) {
    for (const paged of [false, true]) {
      progress(`the API server's own list, ${paged ? `in pages of ${size.pageLimit}` : "whole"}`);
      await own.context.quiesce();
      const list = paged ? await pagedList(`${sim.url}${PATH}`, size.pageLimit) : await timedList(`${sim.url}${PATH}`);
      const step = paged ? `paged list (limit=${size.pageLimit}), the API server's own` : "full list, the API server's own";
      rows.push(untraced("direct", step, { ...listFields(list, "the API server's list"), pages: list.pages }));
    }
  }

  // The hub's first list, started by a full list answered as the hub stages the upstream's pages;
  // nobody watching, the hub may then stop its upstream watch (the next request resumes it).
  {
    const seq = await sim.requestSeq();
    const name = `first list (the hub's, from the API server in pages of 500)`;
    const answer = <T>(list: Promise<T>) => list.then((value) => ({ value })).catch((e: Error) => ({ failed: /HTTP (\d+)/.exec(e.message)?.[1] ?? e.message }));
    const traced = await step(name, async () => {
      const started = performance.now();
      const cold = answer(timedList(`${relayUrl()}${PATH}`));
      const synced = until(async () => {
        const s = await stats();
        return s.objects === objects && s.resourceVersion > 0;
      }, size.timeoutMs).then((done) => (done ? performance.now() - started : null));
      await sleep(LATE_MS);
      const late = answer(pagedList(`${relayUrl()}${PATH}`, size.pageLimit));
      return { ms: await synced, cold: await cold, late: await late };
    });
    const { cold, late } = traced.result;
    const answered = (a: { value: unknown } | { failed: string }) => ("failed" in a ? `answered ${a.failed}` : "answered 200");
    const upstream = await upstreamSince(seq);
    rows.push(
      row(name, "http", traced, {
        ms: traced.result.ms === null ? null : Math.round(traced.result.ms),
        upstreamRequests: upstream.all,
        pages: upstream.pages,
        note:
          `${upstream.said}; the full list that started it was ${answered(cold)}, the paged one asked ${LATE_MS / 1000} s later ${answered(late)}` +
          (traced.after.watching ? "" : `; the hub, with no subscriber, had stopped its upstream watch by then (idle)`),
      }),
    );
    const coldRow = (step: string, list: { value: TimedList } | { failed: string }) =>
      untraced("relay", step, "failed" in list ? { note: `answered ${list.failed}` } : { ...listFields(list.value, step), pages: list.value.pages });
    rows.push(coldRow("cold full list (the request that starts the hub's first list)", cold));
    rows.push(coldRow(`cold paged list (limit=${size.pageLimit}), asked ${LATE_MS / 1000} s into the first list`, late));
  }
  const horizon = (await stats()).resourceVersion;
  keep(`${relayUrl()}${PATH}?watch=1&resourceVersion=${horizon}`);

  const lists: Array<[string, () => Promise<TimedList>]> = [
    ["full list, resourceVersion=0", () => timedList(`${relayUrl()}${PATH}?resourceVersion=0`)],
    ["full list, consistent read", () => timedList(`${relayUrl()}${PATH}`)],
    [`paged list (limit=${size.pageLimit})`, () => pagedList(`${relayUrl()}${PATH}`, size.pageLimit)],
  ];
  for (const [name, list] of lists) {
    const seq = await sim.requestSeq();
    const traced = await step(name, list);
    rows.push(row(name, "http", traced, { ...listFields(traced.result, name), pages: traced.result.pages, upstreamRequests: (await upstreamSince(seq)).all }));
  }

  /** A step of subscribers catching up, timed until the last had it all (`ms`: null if one did not). */
  const caughtUp = async <T extends CatchUp>(
    name: string,
    transport: BigRow["transport"],
    catchUp: () => Promise<T>,
    fields: (caught: T, ms: number | null) => Partial<BigRow> | Promise<Partial<BigRow>>,
  ) => {
    const traced = await step(name, async () => {
      const started = Date.now();
      return { caught: await catchUp(), started };
    });
    await own.context.loadgens.close();
    const { caught, started } = traced.result;
    const ms = caught.missing === 0 ? Math.max(0, ...caught.caughtUpAt.map((at) => at - started)) : null;
    rows.push(row(name, transport, traced, { ms, bytes: caught.bytes, ...(await fields(caught, ms)) }));
  };
  const late = (caught: CatchUp, count: number, what: string) => (caught.missing > 0 ? { note: `${caught.missing} of ${count} did not ${what} within ${size.timeoutMs / 1000} s` } : {});

  const initial = async (name: string, transport: BigRow["transport"], count: number, extra = "", system: SystemName = "relay") => {
    const served = own.relay.systems.find((s) => s.name === system) as System;
    const specs = Array.from({ length: count }, () => {
      const spec = subscriber(served, transport, sim, PATH);
      return { ...spec, url: `${spec.url}${extra}` };
    });
    const arrive = async () => {
      const [clock, cpu] = [performance.now(), cpuMeter(served.pids)];
      const caught = await own.context.loadgens.arrive(specs, { added: objects }, size.timeoutMs, 100);
      return { ...caught, cpuMs: (cpu() * (performance.now() - clock)) / 100 };
    };
    await caughtUp(name, transport, arrive, (caught, ms) => ({
      system,
      subscribers: count,
      cpuUsPerEvent: ms === null ? null : round((caught.cpuMs * 1000) / (objects * count)),
      MBps: ms === null ? null : round(caught.bytes / MB / (Math.max(1, ms) / 1000)),
      ...late(caught, count, "have it all"),
    }));
  };
  await initial(`initial state to ${size.subscribers} subscribers at once, WebSocket`, "ws", size.subscribers);
  for (const framing of ["relay-batched", "relay-gzip"] as const) {
    if (systems.some((s) => s.name === framing)) await initial(`initial state to ${size.subscribers} subscribers at once, WebSocket`, "ws", size.subscribers, "", framing);
  }
  await initial(`initial state to ${size.subscribers} subscribers at once, HTTP`, "http", size.subscribers);
  await initial("watch-list (sendInitialEvents=true), HTTP", "http", 1, "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");

  {
    const name = `churn, ${size.churn} changes/s for ${size.churnMs / 1000} s, ${size.subscribers} WebSocket subscribers`;
    const head = (await stats()).resourceVersion;
    const spec = { ...subscriber(relay(), "ws", sim, PATH), from: head };
    await own.context.loadgens.open(new Array<SubscriberSpec>(size.subscribers).fill(spec), 100);
    const traced = await step(name, () => churnWindow(own, NAMESPACE, size.churn, size.churnMs));
    await own.context.loadgens.close();
    const delivery = deliveryFields(traced.result, size.churn, size.subscribers);
    rows.push(
      row(name, "ws", traced, {
        subscribers: size.subscribers,
        ms: size.churnMs,
        deliveredPerSec: delivery.deliveredPerSec,
        p99Ms: delivery.p99Ms,
        cpuUsPerEvent: delivery.cpuUsPerEvent,
        note: `${delivery.upstreamEventsPerSec} changes/s upstream; ${delivery.deliveredPct}% of them delivered to every subscriber; ${delivery.cutOffs} cut off`,
      }),
    );
  }

  {
    const name = "resume for net changes (compact=true) from the horizon";
    const head = (await stats()).resourceVersion;
    const spec = { ...subscriber(relay(), "ws", sim, PATH), protocol: DELTA_PROTOCOL, compact: true, from: horizon };
    const note = `${head - horizon} changes since the horizon (the first list), each changed object sent once`;
    const arrive = () => own.context.loadgens.arrive([spec], { target: head }, size.timeoutMs);
    await caughtUp(name, "ws", arrive, () => ({ subscribers: 1, note }));
  }

  {
    const name = `storm of ${size.resumes} resumes after ${size.missed} changes, WebSocket`;
    const head = (await stats()).resourceVersion;
    const { loadgens } = own.context;
    const spec = { ...subscriber(relay(), "ws", sim, PATH), from: head };
    await loadgens.open(new Array<SubscriberSpec>(size.resumes).fill(spec), 100);
    const live = await sim.step(NAMESPACE, 10);
    const synced = await loadgens.waitFor(live, size.timeoutMs);
    if (synced.missing > 0) throw new Error(`big: ${synced.missing} of the storm's subscribers never saw resourceVersion ${live}`);
    await loadgens.drop();
    const target = await sim.step(NAMESPACE, size.missed);
    if (!(await until(async () => (await stats()).resourceVersion >= target, size.timeoutMs, 50))) throw new Error(`big: the hub never reached resourceVersion ${target}`);
    const seq = await sim.requestSeq();
    const fields = async (caught: CatchUp) => ({ subscribers: size.resumes, upstreamRequests: (await upstreamSince(seq)).all, ...late(caught, size.resumes, "catch up") });
    await caughtUp(name, "ws", () => loadgens.resume(target, size.timeoutMs), fields);
  }

  // A relist after a 410: the hub's watch stalls, then the history is compacted and the watch expired.
  {
    const name = `relist after a 410, ${size.missed} changes missed`;
    await sim.faults({ stallWatches: true });
    const target = await sim.step(NAMESPACE, size.missed);
    const expected = await sim.count(NAMESPACE);
    const seq = await sim.requestSeq();
    let slowestAnswerMs = 0;
    const traced = await step(name, async () => {
      const started = performance.now();
      await sim.faults({ compact: true, expireWatches: true });
      const relisted = await until(async () => {
        const asked = performance.now();
        const s = await stats();
        slowestAnswerMs = Math.max(slowestAnswerMs, performance.now() - asked);
        return s.upstream === "watching" && s.resourceVersion >= target && s.objects === expected;
      }, size.timeoutMs);
      return relisted ? performance.now() - started : null;
    });
    const upstream = await upstreamSince(seq);
    rows.push(
      row(name, "http", traced, {
        ms: traced.result === null ? null : Math.round(traced.result),
        upstreamRequests: upstream.all,
        pages: upstream.pages,
        slowestAnswerMs: Math.round(slowestAnswerMs),
        note: `${upstream.said}; the hub's slowest answer meanwhile ${Math.round(slowestAnswerMs)} ms`,
      }),
    );
  }

  {
    const name = `restart (workerd killed and started again), first answer (limit=${size.pageLimit})`;
    const before = await stats();
    const seq = await sim.requestSeq();
    progress(name);
    const startedAt = performance.now();
    await own.restart();
    const startMs = performance.now() - startedAt;
    const { result, memory } = await traceMemory(relay(), size.sampleMs, () => timedList(`${relayUrl()}${PATH}?limit=${size.pageLimit}`, { parse: true }));
    const after = await stats();
    const upstream = await upstreamSince(seq);
    rows.push({
      ...base,
      system: "relay",
      transport: "http",
      step: name,
      ...stepCost(memory, undefined, after),
      ms: Math.round(result.ms),
      firstByteMs: round(result.firstByteMs),
      upstreamRequests: upstream.all,
      note: `workerd up again after ${(startMs / 1000).toFixed(1)} s; the hub came back from its storage with ${after.objects} objects, at resourceVersion ${after.resourceVersion} (${before.resourceVersion} before); ${upstream.said}`,
    });
  }
  return rows;
}
