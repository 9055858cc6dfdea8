/**
 * Sharded list and watch (KEP-5866) through the relay: N informers, each with a shardSelector
 * covering 1/N of the hash space, hold a collection exactly once between them through churn
 * and resumes, from the key's one hub and its one upstream watch.
 */
import { describe, expect, it } from "vitest";
import { fnv1a64, hexLess, parseShardSelector } from "../../src/k8s/shard.ts";
import type { KubeObject, Status } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { shardSelector } from "../kit/shards.ts";
import { eventually, httpWatch, relay, rvOf, Sim, type Subscription, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();

/** One sharded informer: its objects by name, where it is, and whatever it was sent outside its shard. */
class ShardInformer {
  readonly path: string;
  readonly selector: string;
  readonly objects = new Map<string, KubeObject>();
  readonly strays: string[] = [];
  rv = "";
  #watch: Subscription | undefined;
  #pump: Promise<void> | undefined;

  constructor(path: string, i: number, n: number) {
    this.path = path;
    this.selector = shardSelector(i, n);
  }

  #mine(object: KubeObject): boolean {
    const shard = parseShardSelector(this.selector);
    const hash = `0x${fnv1a64(object.metadata?.uid ?? "")}`;
    return shard.ranges.some((r) => !hexLess(hash, r.start) && hexLess(hash, r.end));
  }

  /** A list, then a watch from its resourceVersion. */
  async start(): Promise<void> {
    const response = await relay(`${this.path}?shardSelector=${encodeURIComponent(this.selector)}`);
    const list = (await response.json()) as { metadata: { resourceVersion: string; shardInfo?: { selector: string } }; items: KubeObject[] };
    expect(list.metadata.shardInfo).toEqual({ selector: this.selector });
    for (const item of list.items) this.#apply("ADDED", item);
    this.rv = list.metadata.resourceVersion;
    await this.resume();
  }

  /** A watch from where it is: exactly the events after it. */
  async resume(): Promise<void> {
    const watch = await httpWatch(`${this.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${this.rv}&shardSelector=${encodeURIComponent(this.selector)}`);
    this.#watch = watch;
    this.#pump = (async () => {
      for (;;) {
        const event = await watch.events.next("an event", 60_000).catch(() => undefined);
        if (!event) return;
        if (event.type === "ERROR") throw new Error(`watch failed: ${(event.object as unknown as Status).message}`);
        if (event.type !== "BOOKMARK") this.#apply(event.type, event.object);
        this.rv = String(rvOf(event));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#watch?.close();
    await this.#pump;
  }

  #apply(type: string, object: KubeObject): void {
    const name = object.metadata?.name ?? "";
    if (!this.#mine(object)) this.strays.push(`${type} ${name}`);
    if (type === "DELETED") this.objects.delete(name);
    else this.objects.set(name, object);
  }
}

describe("sharded informers (shardSelector)", () => {
  it("N informers hold the collection exactly once between them through churn and a resume, from one upstream watch", async () => {
    const ns = uniqueNamespace("shards");
    const path = podsPath(ns);
    for (let i = 0; i < 24; i++) await sim.createPod(ns, `p${i}`);
    const n = 4;
    const informers = Array.from({ length: n }, (_, i) => new ShardInformer(path, i, n));
    await Promise.all(informers.map((informer) => informer.start()));

    const churn = async (from: number) => {
      for (let i = from; i < from + 8; i++) await sim.createPod(ns, `p${i}`);
      for (let i = from - 10; i < from - 4; i++) await sim.patchPod(ns, `p${i}`, { metadata: { labels: { round: String(from) } } });
      for (let i = from - 24; i < from - 20; i++) await sim.deletePod(ns, `p${i}`);
    };
    await churn(24);
    // One informer goes away mid-churn and resumes from where it was.
    const away = informers[1] as ShardInformer;
    await away.stop();
    await churn(32);
    await away.resume();
    await churn(40);

    const upstream = new Set((await sim.list(path)).items.map((p) => p.metadata?.name ?? ""));
    const held = () => informers.flatMap((informer) => [...informer.objects.keys()]);
    await eventually(
      () => held().length === upstream.size && new Set(held()).size === upstream.size && [...upstream].every((name) => held().includes(name)),
      "the shards to hold the collection once between them",
    );
    for (const informer of informers) {
      expect(informer.strays).toEqual([]);
      expect(informer.objects.size).toBeGreaterThan(0);
      await informer.stop();
    }
    // The informers' key is one hub, and so one upstream watch, however many shards.
    expect(await sim.watchesOn(path)).toHaveLength(1);
  });

  it("a watch-list (sendInitialEvents) sends the shard's initial state only, then its events", async () => {
    const ns = uniqueNamespace("shards");
    const path = podsPath(ns);
    for (let i = 0; i < 12; i++) await sim.createPod(ns, `p${i}`);
    const selector = shardSelector(0, 2);
    const watch = await httpWatch(`${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&shardSelector=${encodeURIComponent(selector)}`);
    const initial = await watch.events.until((e) => e.type === "BOOKMARK" && e.object.metadata?.annotations?.["k8s.io/initial-events-end"] === "true", "the initial-events-end bookmark");
    const all = (await sim.list(path)).items;
    const shard = parseShardSelector(selector);
    const inShard = (o: KubeObject) => shard.ranges.some((r) => !hexLess(`0x${fnv1a64(o.metadata?.uid ?? "")}`, r.start) && hexLess(`0x${fnv1a64(o.metadata?.uid ?? "")}`, r.end));
    expect(
      initial
        .filter((e) => e.type === "ADDED")
        .map((e) => e.object.metadata?.name)
        .sort(),
    ).toEqual(
      all
        .filter(inShard)
        .map((o) => o.metadata?.name)
        .sort(),
    );
    watch.close();
  });

  it.each([
    ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", 'unsupported field path "object.metadata.name"'],
    ["shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", 'did you mean "0x0000000000000000"?'],
    ["shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')", "must be less than end"],
  ])("refuses %s with a 400 before anything reaches the upstream, on lists and watches", async (selector, message) => {
    const ns = uniqueNamespace("shards");
    const path = podsPath(ns);
    const { next } = await sim.requests(path);
    for (const query of ["", "watch=1&"]) {
      const response = await relay(`${path}?${query}shardSelector=${encodeURIComponent(selector)}`);
      expect(response.status).toBe(400);
      const status = (await response.json()) as Status;
      expect(status).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
      expect(status.message).toContain(`invalid shardSelector: `);
      expect(status.message).toContain(message);
    }
    expect((await sim.requests(path, next)).requests).toEqual([]);
  });
});
