import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { watchKey } from "../k8s/key.ts";
import type { ListOptions } from "../k8s/options.ts";
import type { Status } from "../k8s/types.ts";
import { settled } from "./clock.fake.ts";
import { Collection, type ObjectRecord } from "./collection.ts";
import { FirstList } from "./first-list.ts";
import { serveList, type ListReader } from "./reads.ts";
import { StagedList } from "./relist.ts";
import { type Cursor, decodeContinue, SnapshotRegistry } from "./snapshots.ts";
import { HubStorage } from "./storage.ts";

const key = watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });
const RV = 10;

const pod = (name: string): ObjectRecord => ({ key: `ns/${name}`, uid: `u-${name}`, rv: 5, json: JSON.stringify({ metadata: { name, uid: `u-${name}` } }) });

/** A hub's first list at `RV`, staged as the feed stages it, a batch at a time; `total`: what the upstream's first page counted. */
function staging(total?: number) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const collection = new Collection(() => storage.sql);
  const staged = new StagedList(
    () => storage.sql,
    (w) => storage.transaction(w),
  );
  staged.begin(false);
  const snapshots = new SnapshotRegistry({ kept: 4, ttlMs: 60_000 }, () => 0);
  snapshots.onChange = (oldest) => collection.prune(oldest);
  const first = new FirstList({ resourceVersion: RV, listKind: "PodList", apiVersion: "v1", total }, () => storage.sql, collection);
  const lists = first.reader("the-hub", snapshots, async () => undefined);
  return {
    first,
    snapshots,
    lists,
    /** A batch of the upstream's list, staged. */
    add(...names: string[]) {
      const records = names.map(pod);
      staged.add(records, RV);
      first.staged(records.map((r) => r.key));
    },
    /** The staged list becomes the collection. */
    whole() {
      storage.transaction(() => collection.replaceWithListed());
      staged.end();
      collection.recount();
      first.whole();
    },
    /** The collection as lists read it once the staged list is whole. */
    collectionReader: (): ListReader => ({ hub: "the-hub", listKind: "PodList", apiVersion: "v1", head: () => RV, waitFor: async () => true, collection, snapshots }),
  };
}

const options = (o: Partial<ListOptions> = {}): ListOptions => ({ resourceVersion: { kind: "unset" }, resourceVersionMatch: undefined, limit: undefined, continue: undefined, ...o });

type List = { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: Array<{ metadata: { name: string } }> };

/** A response's body read as it comes: what has arrived, whether it ended, and how. */
function reading(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const state = { text: "", done: false, error: undefined as Error | undefined };
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return void (state.done = true);
        state.text += decoder.decode(value, { stream: true });
      }
    } catch (e) {
      state.error = e as Error;
    }
  })();
  return { state, ended };
}

const itemNames = (text: string) => [...text.matchAll(/"name":"([^"]*)"/g)].map((m) => m[1]);

describe("a first list read while it is staged", () => {
  it("sends its head at once, each batch's objects as they are staged, and its end once whole: the list in key order", async () => {
    const s = staging();
    const body = reading(await serveList(s.lists, key, options()));
    await settled();
    expect(body.state.text).toBe('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[');
    s.add("a", "b");
    await settled();
    expect(itemNames(body.state.text)).toEqual(["a", "b"]);
    s.add("c", "d");
    await settled();
    expect([itemNames(body.state.text), body.state.done]).toEqual([["a", "b", "c", "d"], false]);
    s.add("e");
    s.whole();
    await body.ended;
    expect(body.state.done).toBe(true);
    const list = JSON.parse(body.state.text) as List;
    expect([list.metadata.resourceVersion, list.items.map((i) => i.metadata.name)]).toEqual(["10", ["a", "b", "c", "d", "e"]]);
  });

  it("pages it: a page is answered once it has its limit and the key after it, with the upstream's count, and its token reads on from the collection once whole", async () => {
    const s = staging(5);
    s.add("a", "b", "c");
    const first = (await (await serveList(s.lists, key, options({ limit: 2 }))).json()) as List;
    expect([first.items.map((i) => i.metadata.name), first.metadata.remainingItemCount]).toEqual([["a", "b"], 3]);
    let answered: Response | undefined;
    const second = serveList(s.lists, key, options({ limit: 2, continue: first.metadata.continue })).then((r) => (answered = r));
    await settled();
    // One staged after its start: not yet a page of two, nor a token.
    expect(answered).toBeUndefined();
    s.add("d", "e");
    const page = (await (await second).json()) as List;
    expect(page.items.map((i) => i.metadata.name)).toEqual(["c", "d"]);
    s.whole();
    const last = (await (await serveList(s.collectionReader(), key, options({ limit: 2, continue: page.metadata.continue }))).json()) as List;
    expect([last.items.map((i) => i.metadata.name), last.metadata.continue, last.metadata.resourceVersion]).toEqual([["e"], undefined, "10"]);
  });

  it("ends what streamed part of it with an error when it fails, and answers a page still waiting for its objects 503", async () => {
    const s = staging();
    s.add("a", "b");
    const full = reading(await serveList(s.lists, key, options()));
    const paged = serveList(s.lists, key, options({ limit: 5 }));
    await settled();
    expect(itemNames(full.state.text)).toEqual(["a", "b"]);
    s.first.failed(new Error("upstream 410: the continue token expired"));
    s.snapshots.reset();
    await full.ended;
    expect(full.state.error?.message).toBe("the relay's first list of this collection from the upstream failed midway: upstream 410: the continue token expired");
    const refused = await paged;
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Status).message).toContain("failed midway");
  });

  it("stops the readers past an object the upstream sent out of key order, refuses the continue tokens past it, and serves the rest once whole", async () => {
    const s = staging();
    s.add("b", "d", "f");
    const before = (await (await serveList(s.lists, key, options({ limit: 1 }))).json()) as List;
    const past = (await (await serveList(s.lists, key, options({ limit: 2 }))).json()) as List;
    const full = reading(await serveList(s.lists, key, options()));
    await settled();
    expect(itemNames(full.state.text)).toEqual(["b", "d", "f"]);

    s.add("c");
    await full.ended;
    expect(full.state.error?.message).toContain('was not in key order ("ns/c" came after later keys)');
    const refused = await serveList(s.lists, key, options({ limit: 2, continue: past.metadata.continue }));
    expect(refused.status).toBe(410);
    // Not past it: read on once the list is whole (nothing is read from it before then).
    let answered: Response | undefined;
    const on = serveList(s.lists, key, options({ limit: 1, continue: before.metadata.continue })).then((r) => (answered = r));
    const fresh = reading(await serveList(s.lists, key, options()));
    await settled();
    expect([answered, itemNames(fresh.state.text)]).toEqual([undefined, []]);
    s.add("g");
    s.whole();
    expect(((await (await on).json()) as List).items.map((i) => i.metadata.name)).toEqual(["c"]);
    await fresh.ended;
    expect(itemNames(fresh.state.text)).toEqual(["b", "c", "d", "f", "g"]);
    // The tokens it gave out past the late object stay refused once it is the collection; not those given out since.
    const collection = s.collectionReader();
    const refusedLater = await serveList({ ...collection, refuses: (cursor) => s.first.refuses(cursor) }, key, options({ limit: 2, continue: past.metadata.continue }));
    expect(refusedLater.status).toBe(410);
    const since = (await (await serveList(collection, key, options({ limit: 3 }))).json()) as List;
    expect(since.items.map((i) => i.metadata.name)).toEqual(["b", "c", "d"]);
    expect(s.first.refuses(decodeContinue(since.metadata.continue as string) as Cursor)).toBe(false);
  });
});
