/**
 * Pod logs through the relay: a log read once is the upstream's answer, byte for byte; bad
 * options are the API server's Status and never reach it; a followed log is one upstream stream
 * however many follow it, over HTTP and WebSockets, each follower sent exactly what the API server
 * would have sent it (its history and the shared stream joined without a gap or a duplicate),
 * until the container stops; limitBytes, the buffer, slow followers, the grace after the last.
 */
import { describe, expect, it } from "vitest";
import { eventually, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { followHttp, followSocket, linesOf, restartContainer, runningPod, simLog } from "./log-helpers.ts";
import { metricValue, scrape } from "./metrics-helpers.ts";

const sim = new Sim();

/** Requests the simulated API server had for `path` since `mark`: follows, and reads not followed. */
async function upstreamReads(path: string, mark: number): Promise<{ follows: number; once: number }> {
  const { requests } = await sim.requests(path, mark);
  const mine = requests.filter((r) => r.path === path);
  const follows = mine.filter((r) => new URLSearchParams(r.query).get("follow") === "true").length;
  return { follows, once: mine.length - follows };
}

const mark = async () => (await sim.requests("/nothing")).next;

describe("a pod's log, not followed", () => {
  it("is the upstream's answer, byte for byte, with its options", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web");
    await restartContainer(sim, ns, "web");
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    for (const query of ["previous=true", "previous=true&timestamps=true", "previous=true&tailLines=5", "previous=true&limitBytes=123&timestamps=true", "previous=true&tailLines=0"]) {
      const response = await relay(`${path}?${query}`, { headers: { "accept-encoding": "gzip" } });
      expect([query, response.status, response.headers.get("content-type")]).toEqual([query, 200, "text/plain"]);
      expect(response.headers.get("content-encoding")).not.toBe("gzip");
      expect(await response.text(), query).toBe(await simLog(sim, `${path}?${query}`));
    }
  });

  it("refuses what the API server refuses, with its Status; bad options never reach it", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "two", { containers: ["app", "sidecar"] });
    const path = `/api/v1/namespaces/${ns}/pods/two/log`;
    const before = await mark();
    for (const query of ["tailLines=-1&limitBytes=0", "tailLines=ten", "sinceTime=yesterday", "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z", "sinceSeconds=0"]) {
      const relayed = await relay(`${path}?${query}`);
      const direct = await fetch(`${sim.url}${path}?${query}`);
      expect([query, relayed.status, await relayed.json()]).toEqual([query, direct.status, await direct.json()]);
    }
    expect((await sim.requests(path, before)).requests.map((r) => r.query)).toEqual([
      "tailLines=-1&limitBytes=0",
      "tailLines=ten",
      "sinceTime=yesterday",
      "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
      "sinceSeconds=0",
    ]);
    // The API server's own refusals, from the upstream: an unknown pod, a container not named, or unknown.
    for (const [target, code] of [
      [`/api/v1/namespaces/${ns}/pods/nope/log`, 404],
      [path, 400],
      [`${path}?container=db`, 400],
      [`${path}?container=app&previous=true`, 400],
    ] as const) {
      const relayed = await relay(target);
      const direct = await fetch(sim.url + target);
      expect([target, relayed.status, await relayed.json()]).toEqual([target, code, await direct.json()]);
    }
    // A namespaced pod has no log outside its namespace; the relay relays no other subresource.
    expect((await relay("/api/v1/pods/two/log")).status).toBe(404);
    expect((await relay(`/api/v1/namespaces/${ns}/pods/two/exec`)).status).toBe(404);
  });
});

describe("a pod's log, followed", () => {
  it("one upstream stream however many follow, each sent what the API server would have sent it, until the container stops", async () => {
    const ns = uniqueNamespace("log");
    // More lines than the buffer keeps (LOG_BUFFER_LINES is 20 in the tests): the whole log needs a history of its own.
    await runningPod(sim, ns, "web", { startedAgoMs: 3000, intervalMs: 20 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const before = await mark();
    const [whole, plain, tail, socket, base64, since] = await Promise.all([
      followHttp(`${path}?follow=true&timestamps=true`),
      followHttp(`${path}?follow=true`),
      followHttp(`${path}?follow=true&tailLines=5&timestamps=true`),
      followSocket(`${path}?follow=true&timestamps=true`),
      followSocket(`${path}?follow=true&timestamps=true`, ["base64.binary.k8s.io"]),
      followHttp(`${path}?follow=true&sinceSeconds=1&timestamps=true`),
    ]);
    const all = [whole, plain, tail, socket, base64, since];
    expect(whole.response.headers.get("content-type")).toBe("text/plain");
    expect([socket.protocol, base64.protocol]).toEqual(["binary.k8s.io", "base64.binary.k8s.io"]);
    const seen = (n: number) => Promise.all(all.map((f, i) => f.until(`${n} lines from follower ${i} (now ${all.map((x) => x.lines.length).join(",")})`, (x) => x.lines.length >= n)));
    await seen(40);
    // A follower who joins once the stream runs.
    const late = await followHttp(`${path}?follow=true&tailLines=3&timestamps=true`);
    await late.until("lines after its tail", (f) => f.lines.length >= 8);

    await restartContainer(sim, ns, "web");
    for (const follower of [...all, late]) expect((await follower.end()).error).toBeUndefined();
    // One follow upstream for seven followers; reads once: the hub's first, and the histories the buffer did not hold.
    const reads = await upstreamReads(path, before);
    const previous = await simLog(sim, `${path}?previous=true&timestamps=true`);
    const lines = linesOf(previous);
    expect(lines.at(-1)).toMatch(/ level=error msg="exiting" code=1 reason=Error\n$/);
    expect(whole.text).toBe(previous);
    expect(socket.text).toBe(previous);
    expect(base64.text).toBe(previous);
    expect(plain.text).toBe(await simLog(sim, `${path}?previous=true`));
    // The others asked for less than all of it: what they got is the log from some line on.
    for (const follower of [tail, since, late]) expect(previous.endsWith(follower.text) && lines.includes(follower.lines[0]!)).toBe(true);
    expect(socket.messages[0]).toEqual(new ArrayBuffer(0));
    expect(base64.messages[0]).toBe("");
    expect([socket.ended?.code, socket.ended?.reason]).toEqual([1000, "the container's log ended"]);
    expect(reads.follows).toBe(1);
    expect(reads.once).toBeLessThanOrEqual(1 + 5);
  });

  it("serves a follower from the buffer when it holds what it asks for, asking the upstream nothing", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web", { startedAgoMs: 1500, intervalMs: 25 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const first = await followHttp(`${path}?follow=true&tailLines=1&timestamps=true`);
    await first.until("lines", (f) => f.lines.length >= 5);
    const before = await mark();
    const second = await followHttp(`${path}?follow=true&tailLines=10&timestamps=true`);
    await second.until("its tail", (f) => f.lines.length >= 10);
    expect(await upstreamReads(path, before)).toEqual({ follows: 0, once: 0 });
    // What both have of the log is the same lines.
    await eventually(() => first.text.endsWith(second.lines.at(-1)!) || second.text.endsWith(first.lines.at(-1)!), "the two followers to meet");
    first.close();
    second.close();
  });

  it("limitBytes ends a follow after that many bytes; the upstream stream ends a grace after the last follower leaves", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web", { startedAgoMs: 1000, intervalMs: 20 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const limited = await followHttp(`${path}?follow=true&limitBytes=1500`);
    await limited.end();
    expect(limited.bytes.length).toBe(1500);
    expect((await simLog(sim, path)).startsWith(limited.text)).toBe(true);

    const open = async () => (await sim.stats()) as unknown as { activeLogFollows: Array<{ path: string }> };
    const follower = await followHttp(`${path}?follow=true&tailLines=2`);
    await follower.until("a few lines", (f) => f.lines.length >= 4);
    expect((await open()).activeLogFollows.filter((f) => f.path === path)).toHaveLength(1);
    follower.close();
    await eventually(async () => (await open()).activeLogFollows.every((f) => f.path !== path), "the upstream follow to end after the grace");
  });

  it("answers a follow the upstream refuses with the upstream's Status", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "two", { containers: ["app", "sidecar"] });
    const path = `/api/v1/namespaces/${ns}/pods/two/log?follow=true`;
    const relayed = await relay(path);
    expect([relayed.status, await relayed.json()]).toEqual([400, await (await fetch(sim.url + path)).json()]);
    // A socket for a log speaks the API server's log protocols only.
    const refused = await relay(`${path}&container=app`, { headers: { upgrade: "websocket", "sec-websocket-protocol": "batch.watch.kube-watch-relay.dev" } });
    expect(refused.status).toBe(400);
  });

  it("cuts off a follower that falls behind, with a reason", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "chatty", { startedAgoMs: 200, intervalMs: 1 });
    const follower = await followSocket(`/api/v1/namespaces/${ns}/pods/chatty/log?follow=true&tailLines=0`);
    // It acknowledges nothing but the start: the hub counts all it sends as not taken.
    follower.socket.send(JSON.stringify({ type: "ACK", received: 0 }));
    const ended = await follower.end();
    expect(ended.code).toBe(4008);
    expect(ended.reason).toMatch(/^slow log follower: /);
  });

  it("follows a pod of a named cluster, and a restarted container's previous run", async () => {
    const other = new Sim("other");
    const ns = uniqueNamespace("log");
    await runningPod(other, ns, "web", { startedAgoMs: 1000 });
    await restartContainer(other, ns, "web");
    const path = `/api/v1/namespaces/${ns}/pods/web/log?follow=true&previous=true`;
    const previous = await followHttp(`/clusters/other${path}`);
    await previous.end();
    expect(previous.text).toBe(await simLog(other, `/api/v1/namespaces/${ns}/pods/web/log?previous=true`));
  });

  it("is in /metrics: followers against upstream streams, lines read once and sent to each, requests by kind, cut-offs", async () => {
    const metricsSim = new Sim("metrics");
    const ns = uniqueNamespace("log");
    await runningPod(metricsSim, ns, "web", { startedAgoMs: 1000, intervalMs: 10 });
    const path = `/clusters/metrics/api/v1/namespaces/${ns}/pods/web/log?follow=true&tailLines=1`;
    const cluster = { cluster: "metrics" };
    const before = await scrape();
    const follower = await followHttp(path);
    await follower.until("a few lines", (f) => f.lines.length >= 5);
    const during = await scrape();
    expect(metricValue(during, "kube_watch_relay_log_followers", { ...cluster, transport: "http" })).toBe(1);
    expect(metricValue(during, "kube_watch_relay_log_upstream_streams", cluster)).toBe(1);
    const delta = (scraped: typeof before, name: string, labels: Record<string, string>) => metricValue(scraped, name, labels) - metricValue(before, name, labels);
    expect(delta(during, "kube_watch_relay_log_upstream_requests_total", { ...cluster, kind: "follow" })).toBe(1);
    expect(delta(during, "kube_watch_relay_log_upstream_requests_total", { ...cluster, kind: "history" })).toBe(1);
    follower.close();
    // The last follower gone, the hub reports its counts; after the grace its stream stops and it leaves the gauges.
    const after = await eventually(async () => {
      const scraped = await scrape();
      return metricValue(scraped, "kube_watch_relay_log_upstream_streams", cluster) === 0 ? scraped : undefined;
    }, "the log hub to stop its stream and say so");
    expect(delta(after, "kube_watch_relay_log_lines_total", cluster)).toBeGreaterThanOrEqual(5);
    expect(delta(after, "kube_watch_relay_log_delivered_lines_total", { ...cluster, transport: "http" })).toBeGreaterThanOrEqual(5);
    expect(metricValue(after, "kube_watch_relay_log_followers", { ...cluster, transport: "http" })).toBe(0);

    await relay(`/clusters/metrics/api/v1/namespaces/${ns}/pods/web/log?tailLines=1`).then((r) => r.text());
    await runningPod(metricsSim, ns, "chatty", { startedAgoMs: 200, intervalMs: 1 });
    const chatty = await followSocket(`/clusters/metrics/api/v1/namespaces/${ns}/pods/chatty/log?follow=true&tailLines=0`);
    chatty.socket.send(JSON.stringify({ type: "ACK", received: 0 }));
    await chatty.end();
    await eventually(async () => {
      const scraped = await scrape();
      return (
        delta(scraped, "kube_watch_relay_log_follower_cutoffs_total", { ...cluster, reason: "buffer" }) +
          delta(scraped, "kube_watch_relay_log_follower_cutoffs_total", { ...cluster, reason: "slow" }) ===
          1 && delta(scraped, "kube_watch_relay_log_upstream_requests_total", { ...cluster, kind: "once" }) === 1
      );
    }, "the cut-off and the read passed through to be counted");
  });
});

describe("a pod's log from an upstream that does not behave (LOG_UPSTREAM_TIMEOUT_SECONDS is 2 here)", () => {
  /** Whether the simulator's answer to the first log read since `since` is closed: the relay hung up on it. */
  const hungUp = async (path: string, since: number) => (await sim.requests(path, since)).requests.find((r) => r.path === path)?.open === false;

  it("a first read that ignores limitBytes and holds its one line open: read to 1 MiB and hung up on, and the followers get the log", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web", { startedAgoMs: 1500, intervalMs: 20 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const since = await mark();
    await sim.faults({ hostileLogs: { count: 1, bytes: 64 * 1024 * 1024, path } });
    const follower = await followHttp(`${path}?follow=true`);
    await follower.until("its first lines", (f) => f.lines.length >= 5);
    // The line it read never ended: the stream brings the log from its start, as the API server would send it.
    expect(follower.lines.slice(0, 5)).toEqual(linesOf(await simLog(sim, path)).slice(0, 5));
    await eventually(() => hungUp(path, since), "the relay to hang up on the first read");
    follower.close();
  });

  it("a first read held open with less than that: what it had after the timeout is the start, and the followers get the log", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web", { startedAgoMs: 1500, intervalMs: 20 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const since = await mark();
    await sim.faults({ hostileLogs: { count: 1, bytes: 1000, path } });
    const follower = await followHttp(`${path}?follow=true`);
    await follower.until("its first lines", (f) => f.lines.length >= 5);
    expect(follower.lines.slice(0, 5)).toEqual(linesOf(await simLog(sim, path)).slice(0, 5));
    expect(await hungUp(path, since)).toBe(true);
    follower.close();
  });

  it("an upstream that does not answer the first read: 504 with a Status naming the setting", async () => {
    const ns = uniqueNamespace("log");
    await runningPod(sim, ns, "web");
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    await sim.faults({ delayRequests: { count: 1, ms: 15_000, path } });
    const refused = await relay(`${path}?follow=true`);
    expect([refused.status, await refused.json()]).toEqual([
      504,
      expect.objectContaining({ kind: "Status", code: 504, reason: "Timeout", message: expect.stringContaining("within 2 s (LOG_UPSTREAM_TIMEOUT_SECONDS)") }),
    ]);
  });

  it("a follower's own history that stops coming: its stream ends, the upstream's answer is hung up on, and the log's other followers go on", async () => {
    const ns = uniqueNamespace("log");
    // More lines than the buffer keeps (20 here): a follower of the whole log reads its own history.
    await runningPod(sim, ns, "web", { startedAgoMs: 3000, intervalMs: 20 });
    const path = `/api/v1/namespaces/${ns}/pods/web/log`;
    const other = await followHttp(`${path}?follow=true&tailLines=1`);
    await other.until("a line", (f) => f.lines.length >= 1);
    const since = await mark();
    await sim.faults({ hostileLogs: { count: 1, bytes: 100, path } });
    const whole = await followHttp(`${path}?follow=true`);
    expect(await whole.end()).toEqual({});
    await eventually(() => hungUp(path, since), "the relay to hang up on the history");
    const seen = other.lines.length;
    await other.until("more lines", (f) => f.lines.length > seen + 3);
    other.close();
  });
});
