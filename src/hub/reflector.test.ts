import { describe, expect, it } from "vitest";
import { watchKey } from "../k8s/key.ts";
import type { KubeObject, WatchEvent } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import { Changes } from "../../test/kit/wait.ts";
import { FakeClock, settled } from "./clock.fake.ts";
import { PagePermits } from "./page-permits.ts";
import {
  BATCH_CHARS,
  PAGE_CHARS,
  PROGRESS_TIMEOUT_SECONDS,
  Reflector,
  type ListedCollection,
  type ReflectorHandler,
  type ReflectorState,
  type UpstreamEvent,
  type UpstreamObserver,
} from "./reflector.ts";
import { ObjectTooLarge, type UpstreamError } from "./upstream-error.ts";

const key = watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });
const pod = (name: string, rv: number) => ({ metadata: { name, namespace: "ns", uid: `u-${name}`, resourceVersion: String(rv) } });
/** A pod of about `chars` characters of JSON. */
const bigPod = (name: string, rv: number, chars: number) => ({ ...pod(name, rv), data: "x".repeat(chars) });
/** The test's backoff cap: moving the clock this far ends any backoff that no Retry-After lengthened. */
const MAX_BACKOFF_MS = 100;
/** How long a wait for the reflector may take before it fails (under the test's timeout). */
const WAIT_MS = 2_000;

/** An open watch stream the test writes lines to. */
class Stream {
  readonly from: number;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly body = new ReadableStream<Uint8Array>({ start: (c) => void (this.#controller = c) });
  constructor(from: number) {
    this.from = from;
  }
  send(event: WatchEvent | { type: "ERROR"; object: unknown }): void {
    this.#controller.enqueue(new TextEncoder().encode(`${JSON.stringify(event)}\n`));
  }
  end(): void {
    this.#controller.close();
  }
  /** As fetch does when its signal aborts: the body's pending read fails. */
  abort(reason: unknown): void {
    this.#controller.error(reason);
  }
}

/**
 * The API server as the reflector sees it: lists at `rv`, watches whose streams the test drives,
 * and failures it queues. Every request is recorded.
 */
class ScriptedUpstream implements Upstream {
  readonly cluster = "c";
  rv = 10;
  items = [pod("a", 5)];
  readonly requests: string[] = [];
  readonly failures: Response[] = [];
  /** Items per list page; the rest follow a continue token (the item's index). */
  pageSize = Number.POSITIVE_INFINITY;
  readonly streams: Stream[] = [];
  readonly #opened = new Changes(WAIT_MS);

  async fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
    this.requests.push(pathAndQuery);
    const query = new URL(pathAndQuery, "http://x").searchParams;
    const failure = this.failures.shift();
    if (failure) return failure;
    if (query.get("watch") !== "1") {
      if (query.get("limit") === "1") return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: String(this.rv) }, items: this.items.slice(0, 1) });
      const from = Number(query.get("continue") ?? 0);
      const to = Math.min(this.items.length, from + this.pageSize);
      // A continue token here is an index: a list at an exact resourceVersion answers at it, from its first page on.
      const rv = query.get("resourceVersionMatch") === "Exact" ? Number(query.get("resourceVersion")) : this.rv;
      const metadata = { resourceVersion: String(rv), ...(to < this.items.length ? { continue: String(to) } : {}) };
      return Response.json({ kind: "PodList", apiVersion: "v1", metadata, items: this.items.slice(from, to) });
    }
    const stream = new Stream(Number(query.get("resourceVersion")));
    const signal = init?.signal;
    signal?.addEventListener("abort", () => stream.abort(signal.reason));
    this.streams.push(stream);
    this.#opened.changed();
    return new Response(stream.body);
  }

  /** The `n`th watch (1-based), once it is open. */
  async watch(n: number): Promise<Stream> {
    await this.#opened.until(`watch ${n}`, () => this.streams.length >= n);
    return this.streams[n - 1] as Stream;
  }
}

/** The handler's side: what the reflector reported, with waits for it. */
class Recorder implements ReflectorHandler {
  head: number | undefined;
  readonly lists: Array<{ resourceVersion: number; past: boolean; items: KubeObject[] }> = [];
  readonly batches: WatchEvent[][] = [];
  readonly states: Array<[ReflectorState, string | undefined, UpstreamError | undefined]> = [];
  checks = 0;
  current = 0;
  readonly #changes = new Changes(WAIT_MS);
  resumeVersion(): number | undefined {
    return this.head;
  }
  /** What happened, in order: each page taken, and (by the upstream) each request. */
  log: string[] | undefined;
  async listed(list: ListedCollection): Promise<void> {
    const items: KubeObject[] = [];
    for await (const page of list.pages) {
      this.log?.push(`took ${page.length}`);
      items.push(...page);
    }
    this.lists.push({ resourceVersion: list.resourceVersion, past: list.past === true, items });
    this.head = list.resourceVersion;
    this.#changes.changed();
  }
  events(batch: WatchEvent[]): void {
    this.batches.push(batch);
    for (const e of batch) this.head = Math.max(this.head ?? 0, Number(e.object.metadata?.resourceVersion));
    this.#changes.changed();
  }
  state(state: ReflectorState, detail?: string, error?: UpstreamError): void {
    this.states.push([state, detail, error]);
    this.#changes.changed();
  }
  checking(): number {
    return ++this.checks;
  }
  upToDate(): void {
    this.current++;
    this.#changes.changed();
  }
  /** The checks probes passed, and those that failed, with why. */
  readonly passes: number[] = [];
  readonly failures: Array<[number, UpstreamError]> = [];
  passed(check: number): void {
    this.passes.push(check);
    this.#changes.changed();
  }
  checkFailed(check: number, error: UpstreamError): void {
    this.failures.push([check, error]);
    this.#changes.changed();
  }
  progress = 0;
  progressed(): void {
    this.progress++;
    this.#changes.changed();
  }
  readonly caughtUp: number[] = [];
  currentOnceAt(rv: number): void {
    this.caughtUp.push(rv);
    this.#changes.changed();
  }
  until(what: string, done: () => boolean): Promise<void> {
    return this.#changes.until(what, done);
  }
  /** Once the reflector has backed off `n` times. */
  backoffs(n: number): Promise<void> {
    return this.until(`backoff ${n}`, () => this.states.filter(([state]) => state === "backoff").length >= n);
  }
}

/** What the reflector reports to the metrics, in order. */
function observer() {
  const seen: string[] = [];
  const o: UpstreamObserver = {
    watch: (reconnect) => void seen.push(reconnect ? "rewatch" : "watch"),
    relisted: () => void seen.push("relisted"),
    expired: () => void seen.push("expired"),
    stalled: () => void seen.push("stalled"),
    renewed: () => void seen.push("renewed"),
    failed: (status) => void seen.push(`failed ${status}`),
  };
  return { o, seen };
}

/** A reflector on a scripted upstream, started unless `noList` (the test sets the upstream up first). */
function start(options: { stallMs?: number; followsHub?: boolean; firstAt?: number; pageSize?: number; noList?: boolean } = {}) {
  const clock = new FakeClock();
  const upstream = new ScriptedUpstream();
  if (options.pageSize !== undefined) upstream.pageSize = options.pageSize;
  const handler = new Recorder();
  const { o, seen } = observer();
  const reflector = new Reflector(key, upstream, handler, {
    stallMs: options.stallMs ?? 60_000,
    watchTimeoutSeconds: () => 300,
    random: () => 0.5,
    backoff: { initialMs: 20, maxMs: MAX_BACKOFF_MS },
    observer: o,
    clock,
    followsHub: options.followsHub,
  });
  if (options.firstAt !== undefined) reflector.listFirstAt(options.firstAt);
  if (!options.noList) reflector.start();
  return { upstream, handler, reflector, seen, clock };
}

describe("Reflector", () => {
  it("made by a watch from N: its first list is at exactly N (its next pages by their continue token), its watch from N; a relist is of the current state", async () => {
    const { upstream, handler, reflector } = start({ firstAt: 7, pageSize: 1 });
    upstream.items = [pod("a", 5), pod("b", 6)];
    const first = await upstream.watch(1);
    expect(upstream.requests.slice(0, 2)).toEqual(["/api/v1/namespaces/ns/pods?limit=500&resourceVersion=7&resourceVersionMatch=Exact", "/api/v1/namespaces/ns/pods?limit=500&continue=1"]);
    expect([handler.lists[0]?.resourceVersion, handler.lists[0]?.past, first.from]).toEqual([7, true, 7]);
    first.send({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
    await upstream.watch(2);
    expect(upstream.requests.filter((r) => !r.includes("watch=1")).slice(2)).toEqual(["/api/v1/namespaces/ns/pods?limit=500", "/api/v1/namespaces/ns/pods?limit=500&continue=1"]);
    expect([handler.lists[1]?.resourceVersion, handler.lists[1]?.past]).toEqual([10, false]);
    reflector.stop();
  });

  it("a past state the upstream no longer has (410): the first list is of the current state at once, without a backoff", async () => {
    const clock = new FakeClock();
    const upstream = new ScriptedUpstream();
    upstream.failures.push(Response.json({ kind: "Status", code: 410, reason: "Expired", message: "The resourceVersion for the provided list is too old." }, { status: 410 }));
    const handler = new Recorder();
    const reflector = new Reflector(key, upstream, handler, { stallMs: 60_000, watchTimeoutSeconds: () => 300, random: () => 0.5, observer: observer().o, clock });
    reflector.listFirstAt(7);
    reflector.start();
    expect((await upstream.watch(1)).from).toBe(10);
    expect(upstream.requests.slice(0, 2)).toEqual(["/api/v1/namespaces/ns/pods?limit=500&resourceVersion=7&resourceVersionMatch=Exact", "/api/v1/namespaces/ns/pods?limit=500"]);
    expect(handler.states.map(([state]) => state)).not.toContain("backoff");
    expect(handler.lists.map((l) => l.resourceVersion)).toEqual([10]);
    reflector.stop();
  });

  it("lists, watches from the list's resourceVersion, and re-watches from the last event when a stream ends", async () => {
    const { upstream, handler, reflector } = start();
    const first = await upstream.watch(1);
    expect([handler.lists.length, first.from]).toEqual([1, 10]);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    first.send({ type: "MODIFIED", object: pod("a", 12) });
    await handler.until("the events", () => handler.head === 12);
    first.end();
    expect((await upstream.watch(2)).from).toBe(12);
    expect(handler.lists).toHaveLength(1);
    reflector.stop();
  });

  it("lists a page at a time: each page asked for once the one before is taken, never the whole list in hand", async () => {
    const clock = new FakeClock();
    const upstream = new ScriptedUpstream();
    upstream.items = [pod("a", 5), pod("b", 6), pod("c", 7)];
    upstream.pageSize = 1;
    const handler = new Recorder();
    const log: string[] = [];
    handler.log = log;
    const fetch = upstream.fetch.bind(upstream);
    upstream.fetch = (path, init) => {
      if (!path.includes("watch=1")) log.push(`asked ${new URL(path, "http://x").searchParams.get("continue") ?? "first"}`);
      return fetch(path, init);
    };
    const reflector = new Reflector(key, upstream, handler, { stallMs: 60_000, watchTimeoutSeconds: () => 300, random: () => 0.5, observer: observer().o, clock });
    reflector.start();
    await upstream.watch(1);
    expect(log).toEqual(["asked first", "took 1", "asked 1", "took 1", "asked 2", "took 1"]);
    expect(handler.lists[0]?.items.map((i) => i.metadata?.name)).toEqual(["a", "b", "c"]);
    reflector.stop();
  });

  it("holds no more list pages than the isolate's permits: hubs that list together take turns, each page given back once taken", async () => {
    const clock = new FakeClock();
    const permits = new PagePermits(1);
    const log: string[] = [];
    let held = 0;
    let mostHeld = 0;
    const hub = (name: string) => {
      const upstream = new ScriptedUpstream();
      upstream.items = [pod("a", 5), pod("b", 6), pod("c", 7)];
      upstream.pageSize = 1;
      const handler = new Recorder();
      handler.log = { push: () => log.push(`${name} took`, `${name} held ${held--}`) } as unknown as string[];
      const fetch = upstream.fetch.bind(upstream);
      upstream.fetch = (path, init) => {
        if (!path.includes("watch=1")) mostHeld = Math.max(mostHeld, ++held);
        return fetch(path, init);
      };
      const reflector = new Reflector(key, upstream, handler, { stallMs: 60_000, watchTimeoutSeconds: () => 300, random: () => 0.5, observer: observer().o, clock, pages: permits });
      reflector.start();
      return { upstream, handler, reflector };
    };
    const hubs = [hub("A"), hub("B"), hub("C")];
    // The waiting hubs look again on the clock: move it until every hub has listed and watches.
    for (let i = 0; i < 200 && hubs.some((h) => h.upstream.streams.length === 0); i++) {
      clock.advance(10);
      await settled();
    }
    expect(hubs.map((h) => h.handler.lists[0]?.items.length)).toEqual([3, 3, 3]);
    expect(mostHeld).toBe(1);
    expect(permits.held).toBe(0);
    for (const h of hubs) h.reflector.stop();
  });

  it("a hub stopped while it waits for a page's permit takes none and asks the upstream for nothing more", async () => {
    const clock = new FakeClock();
    const permits = new PagePermits(1);
    const taken = await permits.take(clock); // another hub's page
    const upstream = new ScriptedUpstream();
    upstream.items = [pod("a", 5)];
    const asked: string[] = [];
    const fetch = upstream.fetch.bind(upstream);
    upstream.fetch = (path, init) => {
      asked.push(path);
      return fetch(path, init);
    };
    const reflector = new Reflector(key, upstream, new Recorder(), { stallMs: 60_000, watchTimeoutSeconds: () => 300, random: () => 0.5, observer: observer().o, clock, pages: permits });
    reflector.start();
    clock.advance(10);
    await settled();
    reflector.stop();
    taken?.();
    for (let i = 0; i < 10; i++) {
      clock.advance(100);
      await settled();
    }
    expect([asked, permits.held]).toEqual([[], 0]);
  });

  it("gives a page's permit back when its list fails", async () => {
    const upstream = new ScriptedUpstream();
    const handler = new Recorder();
    const permits = new PagePermits(1);
    upstream.failures.push(new Response("no", { status: 500 }));
    const reflector = new Reflector(key, upstream, handler, {
      stallMs: 60_000,
      watchTimeoutSeconds: () => 300,
      random: () => 0.5,
      observer: observer().o,
      clock: new FakeClock(),
      pages: permits,
      backoff: { initialMs: 20, maxMs: MAX_BACKOFF_MS },
    });
    reflector.start();
    await handler.backoffs(1);
    expect(permits.held).toBe(0);
    reflector.stop();
  });

  it("relists when the watch answers 410 Expired, and reports it", async () => {
    const { upstream, handler, reflector, seen } = start();
    const first = await upstream.watch(1);
    upstream.rv = 30;
    first.send({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version" } });
    expect((await upstream.watch(2)).from).toBe(30);
    expect(handler.lists.map((l) => l.resourceVersion)).toEqual([10, 30]);
    expect(seen).toEqual(["watch", "expired", "relisted", "rewatch"]);
    reflector.stop();
  });

  it("a re-watch answered 410 is reported as expired, then a relist", async () => {
    const { upstream, reflector, seen } = start();
    const first = await upstream.watch(1);
    upstream.failures.push(Response.json({ kind: "Status", code: 410 }, { status: 410 }));
    // A stream that delivered something and ended is re-watched at once; that re-watch is 410.
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    first.end();
    await upstream.watch(2);
    expect(seen).toEqual(["watch", "rewatch", "expired", "relisted", "rewatch"]);
    reflector.stop();
  });

  it("backs off after a failure, at least as long as Retry-After says", async () => {
    const { upstream, handler, reflector, clock } = start();
    const first = await upstream.watch(1);
    upstream.failures.push(new Response("busy", { status: 429, headers: { "retry-after": "1" } }));
    clock.advance(1000); // a stream that ran a while: its end is healthy, and re-watched at once
    first.end();
    await handler.backoffs(1);
    expect(handler.states.some(([state, , error]) => state === "backoff" && error?.status === 429)).toBe(true);
    clock.advance(999);
    await settled();
    expect(upstream.streams).toHaveLength(1);
    clock.advance(1);
    await upstream.watch(2);
    reflector.stop();
  });

  it("takes a stream that closes at once with nothing in it for a failure, and backs off; one that ran a second is re-watched at once", async () => {
    const { upstream, handler, reflector, clock } = start();
    (await upstream.watch(1)).end();
    await handler.backoffs(1);
    expect(handler.states.at(-1)?.[1]).toContain("the watch closed immediately");
    clock.advance(MAX_BACKOFF_MS);
    const second = await upstream.watch(2);
    clock.advance(1000);
    second.end();
    await upstream.watch(3);
    expect(handler.states.filter(([state]) => state === "backoff")).toHaveLength(1);
    reflector.stop();
  });

  it("takes a silent stream for dead and watches again from where it was, counting a stall apart from an error status", async () => {
    const { upstream, handler, reflector, seen, clock } = start({ stallMs: 100 });
    const first = await upstream.watch(1);
    clock.advance(60);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    upstream.failures.push(new Response("boom", { status: 500 }));
    await handler.until("the event", () => handler.head === 11);
    // Silent for 99 ms since the event (the check 100 ms into the stream found 40): alive.
    clock.advance(99);
    await settled();
    expect(seen).toEqual(["watch"]);
    clock.advance(1);
    await handler.backoffs(1);
    clock.advance(MAX_BACKOFF_MS);
    await handler.backoffs(2);
    clock.advance(MAX_BACKOFF_MS);
    expect((await upstream.watch(2)).from).toBe(11);
    expect(handler.states.some(([state, detail]) => state === "backoff" && detail?.includes("no data from the upstream watch"))).toBe(true);
    expect(seen).toEqual(["watch", "stalled", "rewatch", "failed 500", "rewatch"]);
    reflector.stop();
  });

  it("renews a stream older than the bound: re-watches at once from the last resourceVersion, no backoff, no relist", async () => {
    const { upstream, handler, reflector, seen, clock } = start();
    const first = await upstream.watch(1);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    await handler.until("the event", () => handler.head === 11);
    reflector.renew(30_000); // a fresh stream: left alone
    clock.advance(29_999);
    reflector.renew(30_000); // younger than the bound: left alone
    expect(seen).toEqual(["watch"]);
    clock.advance(1);
    reflector.renew(30_000);
    expect((await upstream.watch(2)).from).toBe(11);
    expect(handler.states.map(([state]) => state)).not.toContain("backoff");
    expect(handler.lists).toHaveLength(1);
    expect(seen).toEqual(["watch", "renewed", "rewatch"]);
    reflector.stop();
  });

  it("asked how far the upstream has got, ends its stream and watches on from where it is with a short timeout, whose bookmark says, then as before; one at a time", async () => {
    const { upstream, handler, reflector, seen } = start();
    const first = await upstream.watch(1);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    await handler.until("the event", () => handler.head === 11);
    reflector.progress();
    reflector.progress();
    const asking = await upstream.watch(2);
    expect(asking.from).toBe(11);
    expect(new URL(upstream.requests.at(-1) as string, "http://x").searchParams.get("timeoutSeconds")).toBe(String(PROGRESS_TIMEOUT_SECONDS));
    reflector.progress(); // already asking
    asking.send({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: "20" } } });
    asking.end();
    const after = await upstream.watch(3);
    expect(after.from).toBe(20);
    expect(new URL(upstream.requests.at(-1) as string, "http://x").searchParams.get("timeoutSeconds")).toBe("300");
    expect(handler.progress).toBe(1);
    expect(upstream.streams).toHaveLength(3);
    expect(handler.states.map(([state]) => state)).not.toContain("backoff");
    expect(handler.lists).toHaveLength(1);
    expect(seen).toEqual(["watch", "rewatch", "rewatch"]);
    reflector.stop();
  });

  it("a refresh ends the watch and asks the upstream where it is: current if it has not moved, a relist if it has", async () => {
    const { upstream, handler, reflector } = start();
    await upstream.watch(1);
    reflector.refresh();
    await upstream.watch(2);
    expect(handler.current).toBe(1);
    expect(upstream.requests.filter((r) => r.includes("limit=1"))).toHaveLength(1);
    expect(handler.lists).toHaveLength(1);

    upstream.rv = 20; // changes elsewhere in the cluster: nothing cheaper tells if this collection changed
    reflector.refresh();
    await upstream.watch(3);
    expect(handler.lists.map((l) => l.resourceVersion)).toEqual([10, 20]);
    reflector.stop();
  });

  it("following a root hub, a refresh that finds it ahead catches up by watching from the hub's head, never by relisting", async () => {
    const { upstream, handler, reflector } = start({ followsHub: true });
    await upstream.watch(1);
    upstream.rv = 20; // the root has moved on: its history is this key's
    reflector.refresh();
    expect((await upstream.watch(2)).from).toBe(10);
    expect(handler.caughtUp).toEqual([20]);
    expect(handler.lists).toHaveLength(1);
    reflector.stop();
  });

  it("following a root hub, a consistent read's catch-up asks the root (a consistent list of one), never a probe, and watches on from the hub's head", async () => {
    const { upstream, handler, reflector } = start({ followsHub: true });
    await upstream.watch(1);
    upstream.rv = 20;
    reflector.catchUp();
    expect((await upstream.watch(2)).from).toBe(10);
    expect(handler.caughtUp).toEqual([20]);
    expect(upstream.requests.filter((r) => r.includes("sendInitialEvents"))).toEqual([]);
    expect(upstream.requests.filter((r) => r.includes("limit=1"))).toEqual(["/api/v1/namespaces/ns/pods?limit=1"]);
    reflector.stop();
  });

  it("following a root hub, each event keeps its object's text as the root wrote it (not so from an API server, whose lines it does not vouch for)", async () => {
    for (const followsHub of [true, false]) {
      const { upstream, handler, reflector } = start({ followsHub });
      const stream = await upstream.watch(1);
      stream.send({ type: "MODIFIED", object: pod("a", 11) });
      await handler.until("the event", () => handler.head === 11);
      const event = handler.batches.flat().at(-1) as UpstreamEvent;
      expect(event.objectJson).toBe(followsHub ? JSON.stringify(pod("a", 11)) : undefined);
      reflector.stop();
    }
  });

  it("relists when the upstream has gone back in time (a restored etcd)", async () => {
    const { upstream, handler, reflector } = start();
    await upstream.watch(1);
    reflector.stop();
    await handler.until("the stop", () => handler.states.at(-1)?.[0] === "stopped");
    upstream.rv = 4;
    reflector.start();
    await upstream.watch(2);
    expect(handler.lists.map((l) => l.resourceVersion)).toEqual([10, 4]);
    reflector.stop();
  });

  const tooLarge = (rv: number, current: number) => ({
    kind: "Status",
    code: 504,
    reason: "Timeout",
    message: `Timeout: Too large resource version: ${rv}, current: ${current}`,
    details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
  });

  it("relists when a re-watch is too large for an upstream gone back in time while it watched, as an ERROR or as the answer", async () => {
    const { upstream, handler, reflector, clock } = start();
    const first = await upstream.watch(1);
    upstream.rv = 4;
    first.send({ type: "ERROR", object: tooLarge(10, 4) });
    const second = await upstream.watch(2);
    expect(second.from).toBe(4);
    // A stream that ran a while ends; its re-watch is answered 504 by an upstream now at 2.
    second.send({ type: "MODIFIED", object: pod("a", 5) });
    await handler.until("the event", () => handler.head === 5);
    clock.advance(1000);
    upstream.rv = 2;
    upstream.failures.push(Response.json(tooLarge(5, 2), { status: 504 }));
    second.end();
    expect((await upstream.watch(3)).from).toBe(2);
    expect(handler.lists.map((l) => l.resourceVersion)).toEqual([10, 4, 2]);
    expect(handler.states.map(([state]) => state)).not.toContain("backoff");
    reflector.stop();
  });

  it("backs off, keeping its history, when a watch is too large for an upstream that lists where the hub is (a lagging cache)", async () => {
    const { upstream, handler, reflector, clock } = start();
    const first = await upstream.watch(1);
    first.send({ type: "ERROR", object: tooLarge(10, 9) });
    await handler.backoffs(1);
    expect(handler.states.at(-1)?.[1]).toContain("though it lists at 10");
    clock.advance(MAX_BACKOFF_MS);
    expect((await upstream.watch(2)).from).toBe(10);
    expect(handler.lists).toHaveLength(1);
    reflector.stop();
  });

  it("hands a page over in batches of about BATCH_CHARS as it reads it, and asks for fewer objects a page once they are big", async () => {
    const { upstream, handler, reflector } = start({ noList: true });
    const chars = Math.ceil(BATCH_CHARS / 2.5);
    upstream.items = ["a", "b", "c", "d", "e", "f"].map((name, i) => bigPod(name, i + 1, chars));
    upstream.pageSize = 5;
    handler.log = [];
    reflector.start();
    await upstream.watch(1);
    // A third item would pass BATCH_CHARS: batches of two, then the page's last; the next page alone.
    expect(handler.log).toEqual(["took 2", "took 2", "took 1", "took 1"]);
    const limits = upstream.requests.filter((r) => !r.includes("watch=1")).map((r) => new URL(r, "http://x").searchParams.get("limit"));
    const perItem = JSON.stringify(upstream.items[0]).length;
    expect(limits).toEqual(["500", String(Math.floor(PAGE_CHARS / perItem))]);
    reflector.stop();
  });

  it("fails a list with an object too big to store as ObjectTooLarge (413), naming the limit, without reading the object whole", async () => {
    const { upstream, handler, reflector } = start({ noList: true });
    upstream.items = [pod("a", 5), bigPod("b", 6, 4_100_000)];
    reflector.start();
    await handler.backoffs(1);
    const error = handler.states.find(([state]) => state === "backoff")?.[2];
    expect(error).toBeInstanceOf(ObjectTooLarge);
    expect([error?.status, error?.message]).toEqual([413, expect.stringMatching(/an object of the upstream's list .* is [\d,]+ bytes or more as JSON, over the 1,995,904 bytes .*2 MB a row/)]);
    expect(handler.lists).toEqual([]);
    reflector.stop();
  });

  it("fails a watch whose event is too big to store as ObjectTooLarge, and lists again (the watch would bring it again)", async () => {
    const { upstream, handler, reflector, clock } = start();
    const first = await upstream.watch(1);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    first.send({ type: "MODIFIED", object: bigPod("a", 12, 4_100_000) });
    await handler.backoffs(1);
    expect(handler.states.find(([state]) => state === "backoff")?.[2]).toBeInstanceOf(ObjectTooLarge);
    clock.advance(MAX_BACKOFF_MS);
    expect((await upstream.watch(2)).from).toBe(10);
    expect(handler.lists).toHaveLength(2);
    reflector.stop();
  });

  it("a watch the hub cannot take (`fail`) ends with that error, and is followed by a list", async () => {
    const { upstream, handler, reflector, seen, clock } = start();
    const first = await upstream.watch(1);
    first.send({ type: "MODIFIED", object: pod("a", 11) });
    await handler.until("the event", () => handler.head === 11);
    reflector.fail(new ObjectTooLarge("too big"));
    await handler.backoffs(1);
    expect(handler.states.at(-1)?.[2]?.message).toBe("too big");
    clock.advance(MAX_BACKOFF_MS);
    await upstream.watch(2);
    expect(handler.lists).toHaveLength(2);
    expect(seen).toContain("failed 413");
    reflector.stop();
  });
});
