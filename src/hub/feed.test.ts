import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { eventually } from "../../test/kit/wait.ts";
import { watchKey } from "../k8s/key.ts";
import { INITIAL_EVENTS_END, type WatchEvent } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import { FakeClock, settled } from "./clock.fake.ts";
import { Feed, type FeedSettings } from "./feed.ts";
import { BURST_BASES, Gather } from "./gather.ts";
import { PROGRESS_TIMEOUT_SECONDS } from "./reflector.ts";
import { LineMemory } from "./memory.ts";
import { OBJECT_BYTES, READ_BYTES } from "./row-limit.ts";
import { HubStorage } from "./storage.ts";
import { ObjectTooLarge } from "./upstream-error.ts";

const key = watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });
const pod = (name: string, rv: number) => ({ metadata: { name, namespace: "ns", uid: `u-${name}`, resourceVersion: String(rv) } });

/** Long enough to tell from every other timer the feed sets. */
const GATHER_MS = 1234;

const settings = (): FeedSettings => ({
  windowEvents: 100,
  windowBytes: 1 << 20,
  tombstones: { max: 100, maxAgeMs: 60_000 },
  upstreamStallMs: 60_000,
  stripManagedFields: true,
  gather: new Gather(() => GATHER_MS),
  wantDeltas: () => false,
  wantRows: () => false,
  viewScanObjects: 0,
  observer: { watch: () => undefined, relisted: () => undefined, expired: () => undefined, stalled: () => undefined, renewed: () => undefined, failed: () => undefined },
});

/** The line an API server ends a watch-list's initial events with, at `rv`. */
const initialEventsEnd = (rv: number) =>
  JSON.stringify({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END]: "true" } } } });

/**
 * An API server holding pod `a` at 10 (and, at an exact resourceVersion asked for, at that one):
 * a list answers at once (at `rv`, for a `limit=1` one), a watch is a stream the test writes to,
 * a watch-list (the hub's probe) is answered with `probeAnswer` at once, or, while that is
 * `undefined`, when the test says. `lists`: the lists it was asked for.
 */
class OneWatch implements Upstream {
  readonly cluster = "c";
  readonly lists: string[] = [];
  /** Where a `limit=1` list finds the upstream (changes elsewhere in the cluster move it). */
  rv = 10;
  /** The `timeoutSeconds` of each watch asked for, in order. */
  readonly watches: string[] = [];
  /** Open watches the reflector ended (as it does, at once, to ask how far the upstream has got). */
  aborted = 0;
  /** Every probe asked for, in order, and the answers not yet given (`answer`). */
  probes = 0;
  readonly #unanswered: Array<(line: string) => void> = [];
  /** The first line of each probe's answer, or `undefined` to hold it for `answer`; a function answers the request itself. */
  probeAnswer: string | (() => Response) | undefined = initialEventsEnd(10);
  /** While set, a watch asked for is answered once it resolves. */
  gate: Promise<void> | undefined;
  #send: ((line: string) => void) | undefined;
  #end: (() => void) | undefined;

  async fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
    const query = new URL(pathAndQuery, "http://x").searchParams;
    if (query.get("sendInitialEvents") === "true") return this.#probe(init?.signal ?? undefined);
    if (query.get("watch") !== "1") {
      this.lists.push(query.toString());
      const rv = query.get("resourceVersionMatch") === "Exact" ? Number(query.get("resourceVersion")) : query.get("limit") === "1" ? this.rv : 10;
      return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: String(rv) }, items: [pod("a", rv)] });
    }
    this.watches.push(query.get("timeoutSeconds") ?? "");
    await this.gate;
    // As fetch does, a request whose signal was aborted before it was answered fails.
    init?.signal?.throwIfAborted();
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let open = true;
        this.#send = (line) => controller.enqueue(new TextEncoder().encode(line));
        this.#end = () => {
          open = false;
          controller.close();
        };
        init?.signal?.addEventListener("abort", () => {
          if (open) this.aborted++;
          open = false;
          controller.error(init.signal?.reason);
        });
      },
    });
    return new Response(body);
  }

  #probe(signal: AbortSignal | undefined): Response {
    this.probes++;
    const answer = this.probeAnswer;
    if (typeof answer === "function") return answer();
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const send = (line: string) => controller.enqueue(new TextEncoder().encode(`${line}\n`));
        if (answer !== undefined) send(answer);
        else this.#unanswered.push(send);
        signal?.addEventListener("abort", () => controller.error(signal.reason));
      },
    });
    return new Response(body);
  }

  /** Answer the oldest probe not yet answered with `line` (the end of its initial events by default). */
  answer(line = initialEventsEnd(this.rv)): void {
    const send = this.#unanswered.shift();
    if (!send) throw new Error("no probe waits for an answer");
    send(line);
  }

  /** The open stream ends, as at its timeoutSeconds. */
  end(): void {
    this.#end?.();
  }

  get watching(): boolean {
    return this.#send !== undefined;
  }

  send(event: WatchEvent): void {
    this.line(JSON.stringify(event));
  }

  line(line: string): void {
    this.#send?.(`${line}\n`);
  }
}

/**
 * An API server whose list of pods `a` and `b` at 10 is two pages, the second held until
 * `release`, the first counting the rest (`remainingItemCount`); a watch stays open, silent.
 */
class SlowSecondPage implements Upstream {
  readonly cluster = "c";
  readonly lists: string[] = [];
  watching = false;
  #release: () => void = () => undefined;
  readonly #released = new Promise<void>((resolve) => (this.#release = resolve));

  async fetch(pathAndQuery: string): Promise<Response> {
    const query = new URL(pathAndQuery, "http://x").searchParams;
    if (query.get("watch") === "1") {
      this.watching = true;
      return new Response(new ReadableStream());
    }
    this.lists.push(query.toString());
    if (!query.has("continue")) return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "10", continue: "c1", remainingItemCount: 1 }, items: [pod("a", 5)] });
    await this.#released;
    return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "10" }, items: [pod("b", 6)] });
  }

  release(): void {
    this.#release();
  }
}

/**
 * A feed with `settings` over its own storage, synced and watching its upstream (first listed at
 * `firstAt`, when given), on a clock that stands still; `commits`: the events of each commit.
 */
async function watching(settings: FeedSettings, firstAt?: number) {
  const clock = new FakeClock();
  const upstream = new OneWatch();
  const commits: number[][] = [];
  const feed = new Feed(
    key,
    new HubStorage(durableStorage(database())),
    upstream,
    settings,
    { published: (events) => void commits.push(events.map((e) => e.rv)), reset: () => undefined, upstreamChanged: () => undefined },
    () => undefined,
    clock,
    new LineMemory(1 << 20).tail(),
  );
  if (firstAt !== undefined) feed.listFirstAt(firstAt);
  await feed.synced("live");
  await eventually(() => upstream.watching, "the upstream watch");
  return { clock, upstream, feed, commits };
}

describe("Feed", () => {
  it("a consistent read of a hub in step with its upstream: a probe beside the watch, then what the watch has brought, not only what the gather has committed; no list", async () => {
    const { clock, upstream, feed } = await watching(settings());
    upstream.send({ type: "MODIFIED", object: pod("a", 11) });
    // Read, and gathered for a commit that the clock, standing still, never makes.
    await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the change");
    expect(feed.window.head).toBe(10);

    await feed.synced("current");
    expect(feed.window.head).toBe(11);
    expect([upstream.probes, upstream.aborted, upstream.lists]).toEqual([1, 0, ["limit=500"]]);
    // resourceVersion=0 asks nothing.
    await feed.synced("live");
    expect(upstream.probes).toBe(1);
    feed.stop();
  });

  it("a consistent read is served only by a probe sent after it came: one probe at a time, and the reads that come while one is under way share the next", async () => {
    const { upstream, feed } = await watching(settings());
    upstream.probeAnswer = undefined;
    const served: string[] = [];
    const read = (name: string) => void feed.synced("current").then(() => served.push(name));
    read("a");
    await eventually(() => upstream.probes === 1, "the first probe");
    read("b");
    read("c");
    await settled();
    expect(upstream.probes).toBe(1);
    upstream.answer();
    await eventually(() => upstream.probes === 2, "one probe for the reads that came during the first");
    expect(served).toEqual(["a"]);
    read("d");
    await settled();
    expect(upstream.probes).toBe(2);
    upstream.answer();
    await eventually(() => upstream.probes === 3, "the probe for the read that came during the second");
    expect(served).toEqual(["a", "b", "c"]);
    upstream.answer();
    await eventually(() => served.length === 4, "the last read");
    expect([upstream.probes, upstream.aborted, upstream.lists]).toEqual([3, 0, ["limit=500"]]);
    feed.stop();
  });

  it("a probe answered while no watch stream is open serves nothing: the next, once one is, does", async () => {
    const { upstream, feed } = await watching(settings());
    upstream.probeAnswer = undefined;
    let served = false;
    void feed.synced("current").then(() => (served = true));
    await eventually(() => upstream.probes === 1, "the probe");
    let open = () => {};
    upstream.gate = new Promise((resolve) => (open = resolve));
    upstream.send({ type: "MODIFIED", object: pod("a", 11) });
    upstream.end();
    await eventually(() => upstream.watches.length === 2, "the next watch asked for");
    upstream.answer();
    await settled();
    expect([served, upstream.probes]).toEqual([false, 1]);
    open();
    await eventually(() => upstream.probes === 2, "a probe once the next stream is open");
    upstream.answer();
    await eventually(() => served, "the read");
    expect(feed.window.head).toBe(11);
    feed.stop();
  });

  it("a probe that fails answers the reads it was for with its failure; the reads after it get the next", async () => {
    const { upstream, feed } = await watching(settings());
    upstream.probeAnswer = undefined;
    const first = feed.synced("current");
    await eventually(() => upstream.probes === 1, "the probe");
    const second = feed.synced("current");
    upstream.answer(
      JSON.stringify({
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          message: "Timeout: Too large resource version: 12, current: 10",
          reason: "Timeout",
          code: 504,
          details: { causes: [{ reason: "ResourceVersionTooLarge" }] },
        },
      }),
    );
    await expect(first).rejects.toMatchObject({ status: 504 });
    await eventually(() => upstream.probes === 2, "the next probe");
    upstream.answer();
    await second;
    feed.stop();
  });

  it("against an upstream without watch-lists, a consistent read takes a check and the watch's bookmark: no list while the watch brings the hub where the check found the upstream", async () => {
    const { clock, upstream, feed } = await watching(settings());
    const refused = () =>
      Response.json(
        { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Invalid", code: 422, message: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled" },
        { status: 422 },
      );
    upstream.probeAnswer = refused;
    upstream.rv = 12; // changes elsewhere in the cluster
    let served = false;
    void feed.synced("current").then(() => (served = true));
    await eventually(() => upstream.watches.length === 2, "the watch that asks how far the upstream has got");
    expect(upstream.watches[1]).toBe(String(PROGRESS_TIMEOUT_SECONDS));
    expect(upstream.lists).toEqual(["limit=500", "limit=1"]);
    expect(served).toBe(false);
    upstream.send({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: "12" } } });
    await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the bookmark");
    clock.advance(GATHER_MS);
    await eventually(() => served, "the read, once the hub is where the check found the upstream");
    expect(feed.window.head).toBe(12);

    // The next read asks no probe; the upstream has not moved since: current at once.
    await feed.synced("current");
    expect(upstream.probes).toBe(1);
    expect(upstream.lists).toEqual(["limit=500", "limit=1", "limit=1"]);

    // Nothing says the hub is where the check found the upstream: a list does.
    upstream.rv = 14;
    served = false;
    void feed.synced("current").then(() => (served = true));
    await eventually(() => upstream.watches.at(-1) === String(PROGRESS_TIMEOUT_SECONDS) && upstream.lists.length === 4, "the watch that asks again");
    upstream.end();
    await eventually(() => served, "the read, after a list");
    expect(upstream.lists).toEqual(["limit=500", "limit=1", "limit=1", "limit=1", "limit=500"]);
    feed.stop();
  });

  it("asks the upstream how far it has got only for a subscriber that began after the hub last heard it (a list, its watch's events and bookmarks, the last answer)", async () => {
    const { clock, upstream, feed } = await watching(settings());
    const listed = clock.now();
    clock.advance(5_000);
    feed.progress(listed); // heard when it began: nothing to ask
    expect(upstream.aborted).toBe(0);
    feed.progress(listed + 1);
    expect(upstream.aborted).toBe(1);
    await eventually(() => upstream.watches.length === 2, "a watch that asks");
    expect(upstream.watches[1]).toBe(String(PROGRESS_TIMEOUT_SECONDS));
    upstream.send({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: "15" } } });
    await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the bookmark");
    clock.advance(GATHER_MS);
    expect(feed.window.head).toBe(15);
    const answered = clock.now();
    upstream.end();
    await eventually(() => upstream.watches.length === 3, "the watch going on as before");
    expect(upstream.watches[2]).not.toBe(String(PROGRESS_TIMEOUT_SECONDS));
    feed.progress(answered);
    expect(upstream.aborted).toBe(1);
    feed.progress(clock.now() + 1);
    expect(upstream.aborted).toBe(2);
    feed.stop();
  });

  it("a replica stores an object as its root's line has it; a hub of an API server, as it serialises it", async () => {
    // Spaced as no JSON.stringify writes it, so the stored text tells which it was.
    const object = '{"kind":"Pod", "apiVersion":"v1", "metadata":{"name":"a", "namespace":"ns", "uid":"u-a", "resourceVersion":"11"}}';
    for (const replica of [{ name: "root#local-1", region: "local" }, undefined]) {
      const { clock, upstream, feed } = await watching({ ...settings(), replica });
      upstream.line(`{"type":"MODIFIED","object":${object}}`);
      await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the change");
      clock.advance(GATHER_MS);
      expect(feed.collection.get("ns/a")?.json).toBe(replica ? object : JSON.stringify(JSON.parse(object)));
      feed.stop();
    }
  });

  it("a first list at a past resourceVersion is held for what is live, not as current: a consistent read checks the upstream, and relists as it has moved", async () => {
    const { clock, upstream, feed } = await watching(settings(), 7);
    expect(upstream.lists).toEqual(["limit=500&resourceVersion=7&resourceVersionMatch=Exact"]);
    expect(feed.window.head).toBe(7);
    expect([feed.holds(7), feed.holds(8)]).toEqual([true, false]);

    let current = false;
    void feed.synced("current").then(() => (current = true));
    // A relist gives the hub's other work a turn between its steps, on the clock.
    for (let i = 0; i < 100 && !current; i++) {
      clock.advance(1);
      await settled();
    }
    expect(current).toBe(true);
    expect(upstream.lists).toEqual(["limit=500&resourceVersion=7&resourceVersionMatch=Exact", "limit=1", "limit=500"]);
    expect(upstream.probes).toBe(0);
    expect(feed.window.head).toBe(10);
    feed.stop();
    expect(feed.holds(0)).toBe(false);
  });

  it("serves lists from its first list as that is staged, from the upstream's first page on, asking the upstream nothing else for them", async () => {
    const upstream = new SlowSecondPage();
    const feed = new Feed(
      key,
      new HubStorage(durableStorage(database())),
      upstream,
      settings(),
      { published: () => undefined, reset: () => undefined, upstreamChanged: () => undefined },
      () => undefined,
      new FakeClock(),
      new LineMemory(1 << 20).tail(),
    );
    // The request that makes the hub, a consistent read: served by the list it starts.
    const first = await feed.listable("current");
    expect([first?.rv, first?.open, first?.sizeAt(10)]).toEqual([10, true, 501]);
    await eventually(() => first?.keyAfter(10, "", 1) === "ns/a", "the first page to be staged");
    // One that comes meanwhile, of any freshness, is served by the same list.
    expect(await feed.listable("live")).toBe(first);
    upstream.release();
    await eventually(() => upstream.watching, "the hub's watch");
    expect([first?.open, feed.collection.size, feed.window.head]).toEqual([false, 2, 10]);
    // Two pages, then the watch: no check of the upstream's resourceVersion, nor a relist, for them.
    expect(upstream.lists).toEqual(["limit=500", "limit=500&continue=c1"]);
    // Once the hub holds the collection, lists are served from it.
    expect(await feed.listable("live")).toBeUndefined();
    feed.stop();
  });

  it("commits a burst of big objects as it comes, not after the gather time: what it holds uncommitted stays about READ_BYTES", async () => {
    const { clock, upstream, feed } = await watching(settings());
    const big = (rv: number) => ({ ...pod("a", rv), data: { blob: "x".repeat(READ_BYTES / 2) } });
    upstream.send({ type: "MODIFIED", object: big(11) });
    await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the first change");
    expect(feed.window.head).toBe(10);
    upstream.send({ type: "MODIFIED", object: big(12) });
    // The clock stands still: only the bytes held can have made the commit.
    await eventually(() => feed.window.head === 12, "the feed to commit the burst");
    feed.stop();
  });

  describe("gathers a burst that comes a chunk at a time into one commit, and a lone event within the gather time", () => {
    /** A hub of 500 subscribers' gather (25 ms). */
    const gathering = () => ({ ...settings(), gather: new Gather(() => 25) });
    /** The change to pod `a` at `rv`, read by the feed (in a chunk of its own) once the clock has moved `afterMs`. */
    const change = async (clock: FakeClock, upstream: OneWatch, rv: number, afterMs = 0) => {
      clock.advance(afterMs);
      upstream.send({ type: "MODIFIED", object: pod("a", rv) });
      await settled();
    };

    it("a lone event is committed at the gather time, no later", async () => {
      const { clock, upstream, feed, commits } = await watching(gathering());
      await change(clock, upstream, 11);
      clock.advance(24);
      expect(commits).toEqual([]);
      clock.advance(1);
      expect(commits).toEqual([[11]]);
      // Another, a pause later: the same.
      await change(clock, upstream, 12, 100);
      clock.advance(25);
      expect(commits).toEqual([[11], [12]]);
      feed.stop();
    });

    it("a burst whose chunks come 3 ms apart for longer than the gather time is one commit, made once they pause", async () => {
      const { clock, upstream, feed, commits } = await watching(gathering());
      // 20 chunks over 57 ms: past the 25 ms gather, within what a burst may add (4 × 25 ms).
      for (let rv = 11; rv <= 30; rv++) await change(clock, upstream, rv, rv === 11 ? 0 : 3);
      expect(commits).toEqual([]);
      clock.advance(10);
      expect(commits).toEqual([Array.from({ length: 20 }, (_, i) => 11 + i)]);
      expect(feed.window.head).toBe(30);
      feed.stop();
    });

    it("a burst that goes on is committed at what a burst may add, and its rest after", async () => {
      const { clock, upstream, feed, commits } = await watching(gathering());
      // A chunk every 2 ms for 200 ms.
      for (let rv = 11; rv <= 110; rv++) await change(clock, upstream, rv, rv === 11 ? 0 : 2);
      clock.advance(100);
      // The first gather lasts BURST_BASES × 25 ms (the chunks read before then), the next as long: a few commits.
      expect(commits.length).toBeLessThanOrEqual(3);
      expect(commits[0]?.length).toBe((BURST_BASES * 25) / 2);
      expect(commits.flat()).toEqual(Array.from({ length: 100 }, (_, i) => 11 + i));
      feed.stop();
    });
  });

  it("an object too big to store: the changes before it are committed, the hub stays before it, and its watch fails as ObjectTooLarge", async () => {
    const { upstream, feed } = await watching(settings());
    upstream.send({ type: "MODIFIED", object: pod("a", 11) });
    upstream.send({ type: "MODIFIED", object: { ...pod("a", 12), data: { blob: "x".repeat(OBJECT_BYTES) } } });
    await eventually(() => feed.upstreamState === "backoff", "the watch to fail");
    expect(feed.window.head).toBe(11);
    await expect(feed.synced("current")).rejects.toBeInstanceOf(ObjectTooLarge);
    feed.stop();
  });
});
