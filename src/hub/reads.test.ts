import fc from "fast-check";
import { encodeBase64Url } from "../k8s/base64url.ts";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { watchKey } from "../k8s/key.ts";
import type { ListOptions } from "../k8s/options.ts";
import { parseShardSelector } from "../k8s/shard.ts";
import { shardSelector } from "../../test/kit/shards.ts";
import { Collection } from "./collection.ts";
import { listPlan, serveList, type Reader } from "./reads.ts";
import { decodeContinue, encodeContinue, LATEST, SnapshotRegistry } from "./snapshots.ts";
import { HubStorage } from "./storage.ts";

const key = watchKey({ cluster: "c", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });

/** A hub's reader over a collection of `names` at `head`, whose waits reach up to `reachable`. */
function reader(head: number, names: string[], reachable = head) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const collection = new Collection(() => storage.sql);
  let at = head;
  const write = (name: string, type: "ADDED" | "MODIFIED" | "DELETED", rv: number) => {
    storage.transaction(() => {
      const replaced = collection.peek(`ns/${name}`);
      collection.committed(
        collection.write(
          type,
          { key: `ns/${name}`, uid: name, rv, json: JSON.stringify({ metadata: { uid: `uid-${name}` }, name, rv }) },
          rv,
          replaced,
          replaced !== undefined && snapshots.sees(replaced.rv),
        ),
      );
    });
    at = rv;
  };
  const snapshots = new SnapshotRegistry({ kept: 4, ttlMs: 60_000 }, () => 0);
  snapshots.onChange = (oldest) => collection.prune(oldest);
  for (const name of names) write(name, "ADDED", 1);
  at = head;
  const waited: number[] = [];
  const r: Reader & { waited: number[]; write: typeof write } = {
    hub: "the-hub",
    listKind: "PodList",
    apiVersion: "v1",
    head: () => at,
    waitFor: async (rv) => {
      waited.push(rv);
      return rv <= reachable;
    },
    collection,
    snapshots,
    waited,
    write,
  };
  return r;
}

const options = (o: Partial<ListOptions>): ListOptions => ({ resourceVersion: { kind: "unset" }, resourceVersionMatch: undefined, limit: undefined, continue: undefined, ...o });

type ListMeta = { resourceVersion: string; continue?: string; remainingItemCount?: number; shardInfo?: { selector: string } };

async function list(r: Reader, o: Partial<ListOptions>): Promise<ListMeta & { names: string[] }> {
  const response = await serveList(r, key, options(o));
  const body = (await response.json()) as { metadata: ListMeta; items: Array<{ name: string }> };
  return { ...body.metadata, names: body.items.map((i) => i.name) };
}

async function status(r: Reader, o: Partial<ListOptions>) {
  const plan = await listPlan(r, options(o));
  if (plan.ok) throw new Error("expected a Status");
  return [plan.status.code, plan.status.reason];
}

describe("continue tokens", () => {
  it("round-trip in the API server's shape, with the count already sent, and reject anything else", () => {
    const token = encodeContinue({ rv: 42, start: "ns/pod-ü", sent: 500 });
    expect(JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(token.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))))).toEqual({
      v: "meta.k8s.io/v1",
      rv: 42,
      start: "ns/pod-ü\u0000",
      n: 500,
    });
    expect(decodeContinue(token)).toEqual({ rv: 42, start: "ns/pod-ü", sent: 500 });
    // The hub that holds its snapshot, where a hot key's tree has several.
    expect(decodeContinue(encodeContinue({ rv: 42, start: "a", sent: 1, hub: "key#local-2" }))).toEqual({ rv: 42, start: "a", sent: 1, hub: "key#local-2" });
    expect(decodeContinue("not-a-token")).toBeUndefined();
    expect(decodeContinue(btoa(JSON.stringify({ v: "other", rv: 1, start: "" })))).toBeUndefined();
  });

  it("read a negative resourceVersion as the latest state and 0 as no token, as the API server's decoder does", () => {
    const token = (rv: unknown) => encodeBase64Url(JSON.stringify({ v: "meta.k8s.io/v1", rv, start: "ns/b\u0000" }));
    expect(decodeContinue(token(-1))).toEqual({ rv: LATEST, start: "ns/b", sent: 0 });
    expect(decodeContinue(token(-7))).toEqual({ rv: LATEST, start: "ns/b", sent: 0 });
    expect(decodeContinue(token(0))).toBeUndefined();
    expect(decodeContinue(token(1.5))).toBeUndefined();
  });
});

describe("lists", () => {
  it("unset and 0 give the current state", async () => {
    expect(await list(reader(9, ["a"]), {})).toMatchObject({ resourceVersion: "9", names: ["a"] });
    expect(await list(reader(9, ["a"]), { resourceVersion: { kind: "zero" } })).toMatchObject({ resourceVersion: "9" });
  });

  it("N not older than: current once reached, 504 if it is not within the wait", async () => {
    const r = reader(9, ["a"], 12);
    expect(await list(r, { resourceVersion: { kind: "exact", rv: 12 } })).toMatchObject({ resourceVersion: "9" });
    expect(r.waited).toEqual([12]);
    expect(await status(reader(9, ["a"]), { resourceVersion: { kind: "exact", rv: 20 } })).toEqual([504, "Timeout"]);
  });

  it("Exact N (or N with a limit): the current state if it is at N, else 410", async () => {
    expect(await list(reader(9, ["a"]), { resourceVersion: { kind: "exact", rv: 9 }, resourceVersionMatch: "Exact" })).toMatchObject({ resourceVersion: "9" });
    expect(await status(reader(9, ["a"]), { resourceVersion: { kind: "exact", rv: 5 }, limit: 10 })).toEqual([410, "Expired"]);
  });

  it("pages in key order with a token and the count left; the next pages read the token's snapshot while the collection changes", async () => {
    const r = reader(9, ["a", "b", "c", "d", "e"]);
    const first = await list(r, { limit: 2 });
    expect([first.names, first.remainingItemCount, decodeContinue(first.continue ?? "")?.hub]).toEqual([["a", "b"], 3, "the-hub"]);
    r.write("c", "MODIFIED", 10);
    r.write("d", "DELETED", 11);
    r.write("f", "ADDED", 12);
    const second = await list(r, { continue: first.continue, limit: 2 });
    expect([second.resourceVersion, second.names, second.remainingItemCount]).toEqual(["9", ["c", "d"], 1]);
    const last = await list(r, { continue: second.continue, limit: 2 });
    expect([last.names, last.continue, last.remainingItemCount]).toEqual([["e"], undefined, undefined]);
    expect((await list(r, {})).names).toEqual(["a", "b", "c", "e", "f"]);
  });

  it("a list longer than a read of storage streams its snapshot whole and in order while the collection changes", async () => {
    // More than one pull of the body: its later items are read after the changes.
    const names = Array.from({ length: 6000 }, (_, i) => `p${String(i).padStart(4, "0")}`);
    const r = reader(1, names);
    const response = await serveList(r, key, options({}));
    r.write("p5001", "MODIFIED", 2);
    r.write("p5600", "DELETED", 3);
    const body = (await response.json()) as { items: Array<{ name: string; rv: number }> };
    expect(body.items.map((i) => i.name)).toEqual(names);
    expect(body.items.every((i) => i.rv === 1)).toBe(true);
  });

  it("a token whose snapshot is gone is 410 with one for the latest state, which pages on through the current state from the same key", async () => {
    const r = reader(9, ["a", "b", "c", "d", "e"]);
    const first = await list(r, { limit: 2 });
    r.write("c", "MODIFIED", 10);
    r.write("d", "DELETED", 11);
    r.write("f", "ADDED", 12);
    // Four newer paged lists: the first's snapshot is no longer kept.
    for (const rv of [10, 11, 12, 13]) r.snapshots.keep(rv);
    const plan = await listPlan(r, options({ continue: first.continue, limit: 2 }));
    if (plan.ok) throw new Error("expected a Status");
    expect(plan.status).toMatchObject({ kind: "Status", code: 410, reason: "Expired", message: expect.stringContaining("use the continue token in this response") });
    const latest = plan.status.metadata?.continue as string;
    expect(decodeContinue(latest)).toMatchObject({ rv: LATEST, start: "ns/b", sent: 2 });
    const second = await list(r, { continue: latest, limit: 2 });
    expect([second.resourceVersion, second.names, second.remainingItemCount]).toEqual(["12", ["c", "e"], 1]);
    const last = await list(r, { continue: second.continue, limit: 2 });
    expect([last.resourceVersion, last.names, last.continue]).toEqual(["12", ["f"], undefined]);
  });

  it("a lost or foreign token is 410 or 400", async () => {
    const r = reader(9, ["a", "b", "c"]);
    const first = await list(r, { limit: 2 });
    expect(await status(reader(11, ["a"]), { continue: first.continue })).toEqual([410, "Expired"]);
    expect(await status(r, { continue: "garbage" })).toEqual([400, "BadRequest"]);
  });

  it("property: following the tokens yields the whole snapshot once, in order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,6}$/), { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), async (names, limit) => {
        const r = reader(1, names);
        const seen: string[] = [];
        for (let token: string | undefined; ; ) {
          const page = await list(r, { limit, continue: token });
          seen.push(...page.names);
          if (!page.continue) break;
          token = page.continue;
        }
        expect(seen).toEqual([...names].sort());
      }),
      { seed: 11, numRuns: 100 },
    );
  });
});

describe("shards (shardSelector)", () => {
  it("property: N shards' lists, paged or whole, hold the snapshot once between them, each echoing its selector and no remaining count", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,6}$/), { maxLength: 60 }), fc.integer({ min: 1, max: 5 }), fc.option(fc.integer({ min: 1, max: 7 })), async (names, n, limit) => {
        const r = reader(1, names);
        const seen: string[] = [];
        for (let i = 0; i < n; i++) {
          const shard = parseShardSelector(shardSelector(i, n));
          for (let token: string | undefined; ; ) {
            const page = await list(r, { limit: limit ?? undefined, continue: token, shardSelector: shard });
            expect(page.shardInfo).toEqual({ selector: shard.selector });
            expect(page.remainingItemCount).toBeUndefined();
            if (limit !== null) expect(page.names.length).toBeLessThanOrEqual(limit);
            seen.push(...page.names);
            if (!page.continue) break;
            expect(page.names.length).toBe(limit);
            token = page.continue;
          }
        }
        expect(seen.sort()).toEqual([...names].sort());
      }),
      { seed: 27, numRuns: 100 },
    );
  });
});
