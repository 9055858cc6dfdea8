import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { eventually } from "../../test/kit/wait.ts";
import { watchKey } from "../k8s/key.ts";
import type { WatchEvent } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import { FakeClock, settled } from "./clock.fake.ts";
import { Feed, type FeedSettings } from "./feed.ts";
import { Gather } from "./gather.ts";
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

/**
 * An API server holding pod `a` at 10 (and, at an exact resourceVersion asked for, at that one):
 * a list answers at once, a watch is a stream the test writes to. `lists`: the lists it was asked for.
 */
class OneWatch implements Upstream {
  readonly cluster = "c";
  readonly lists: string[] = [];
  /** The `timeoutSeconds` of each watch asked for, in order. */
  readonly watches: string[] = [];
  /** Open watches the reflector ended (as it does, at once, to ask how far the upstream has got). */
  aborted = 0;
  #send: ((line: string) => void) | undefined;
  #end: (() => void) | undefined;

  async fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
    const query = new URL(pathAndQuery, "http://x").searchParams;
    if (query.get("watch") !== "1") {
      this.lists.push(query.toString());
      const rv = query.get("resourceVersionMatch") === "Exact" ? Number(query.get("resourceVersion")) : 10;
      return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: String(rv) }, items: [pod("a", rv)] });
    }
    this.watches.push(query.get("timeoutSeconds") ?? "");
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

/** A feed with `settings` over its own storage, synced and watching its upstream (first listed at `firstAt`, when given), on a clock that stands still. */
async function watching(settings: FeedSettings, firstAt?: number) {
  const clock = new FakeClock();
  const upstream = new OneWatch();
  const feed = new Feed(
    key,
    new HubStorage(durableStorage(database())),
    upstream,
    settings,
    { published: () => undefined, reset: () => undefined, upstreamChanged: () => undefined },
    () => undefined,
    clock,
    new LineMemory(1 << 20).tail(),
  );
  if (firstAt !== undefined) feed.listFirstAt(firstAt);
  await feed.synced("live");
  await eventually(() => upstream.watching, "the upstream watch");
  return { clock, upstream, feed };
}

describe("Feed", () => {
  it("a read that must be current sees what the upstream has sent, not only what the gather has committed", async () => {
    const { clock, upstream, feed } = await watching(settings());
    upstream.send({ type: "MODIFIED", object: pod("a", 11) });
    // Read, and gathered for a commit that the clock, standing still, never makes.
    await eventually(() => clock.pending.some((t) => t.ms === GATHER_MS), "the feed to gather the change");
    expect(feed.window.head).toBe(10);

    await feed.synced("current");
    expect(feed.window.head).toBe(11);
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
    expect([feed.holds("live", 7), feed.holds("live", 8), feed.holds("current", 0)]).toEqual([true, false, false]);

    let current = false;
    void feed.synced("current").then(() => (current = true));
    // A relist gives the hub's other work a turn between its steps, on the clock.
    for (let i = 0; i < 100 && !current; i++) {
      clock.advance(1);
      await settled();
    }
    expect(current).toBe(true);
    expect(upstream.lists).toEqual(["limit=500&resourceVersion=7&resourceVersionMatch=Exact", "limit=1", "limit=500"]);
    expect([feed.window.head, feed.holds("current", 0)]).toEqual([10, true]);
    feed.stop();
    expect(feed.holds("live", 0)).toBe(false);
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
