/**
 * A cold key: the first requests of a collection whose hub is still making its first list from
 * the upstream, which takes longer than a request waits for a hub (`SYNC_WAIT_SECONDS`, 5 s in
 * the tests: the upstream holds each page of the list 2 s). Lists are answered from the list
 * as the hub stages it, at once and whole; a watch waits for it; a list cut short by the
 * upstream fails as a broken body.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PAGE_SIZE } from "../../src/hub/reflector.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { httpWatch, relay, Sim, uniqueNamespace } from "./helpers.ts";

const cluster = "cold";
const sim = new Sim(cluster);
/** Three pages of the hub's list. */
const PODS = 2 * PAGE_SIZE + 1;
/** How long the upstream holds each page: three of them outlast the tests' 5 s wait. */
const PAGE_MS = 2000;

type List = { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: KubeObject[] };
type Table = { metadata: { resourceVersion: string }; rows: Array<{ cells: unknown[] }> };

const ns = uniqueNamespace("cold");
const upstreamPath = podsPath(ns);
/** Each test's own key, cold: the namespace's pods with a selector that selects them all. */
const keyPath = (selector: string, query = "") => `/clusters/${cluster}${podsPath(ns)}?labelSelector=${encodeURIComponent(selector)}${query ? `&${query}` : ""}`;
const stats = async (selector: string) => (await (await relay(`/_relay/stats${keyPath(selector)}`)).json()) as { upstream: string; objects: number; watching: boolean };
const slowPages = (pages = 3) => sim.faults({ delayRequests: { count: pages, ms: PAGE_MS, verbs: ["list"], path: upstreamPath } });
const names = (items: readonly KubeObject[]) => items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`);

/** The first chunk of `response`'s body, and the rest as text (its reader released). */
async function firstChunk(response: Response): Promise<{ first: string; rest: () => Promise<string> }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const { value } = await reader.read();
  const first = decoder.decode(value, { stream: true });
  return {
    first,
    rest: async () => {
      let text = first;
      for (;;) {
        const { done, value: chunk } = await reader.read();
        if (done) return text + decoder.decode();
        text += decoder.decode(chunk, { stream: true });
      }
    },
  };
}

describe("a cold key", () => {
  let upstream: List;
  beforeAll(async () => {
    for (let i = 0; i < PODS; i += 50) await Promise.all(Array.from({ length: Math.min(50, PODS - i) }, (_, j) => sim.createPod(ns, `p-${String(i + j).padStart(4, "0")}`, { app: "cold" })));
    upstream = (await sim.list(upstreamPath)) as List;
    expect(upstream.items).toHaveLength(PODS);
  }, 60_000);

  it("answers its first lists as the hub lists it: the first byte before the hub has listed, then the API server's list, whole, paged and as a Table", async () => {
    const selector = "app=cold";
    await slowPages();
    const started = Date.now();
    const [full, paged, table] = await Promise.all([
      relay(keyPath(selector)),
      relay(keyPath(selector, "limit=400")),
      relay(keyPath(selector), { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } }),
    ]);
    expect([full.status, paged.status, table.status]).toEqual([200, 200, 200]);
    const body = await firstChunk(full);
    // The list's head went out while the hub was still listing (a 503 after the wait, before).
    expect(body.first).toMatch(/^\{"kind":"PodList","apiVersion":"v1","metadata":\{"resourceVersion":"\d+"\},"items":\[/);
    expect(await stats(selector)).toMatchObject({ upstream: "listing", objects: 0 });

    const list = JSON.parse(await body.rest()) as List;
    expect(Date.now() - started).toBeGreaterThan(3 * PAGE_MS);
    expect(list.metadata.resourceVersion).toBe(upstream.metadata.resourceVersion);
    expect(names(list.items)).toEqual(names(upstream.items));
    // As the hub serves every list: kind and apiVersion on each item.
    expect(list.items.every((o) => o.kind === "Pod" && o.apiVersion === "v1")).toBe(true);

    // Paged as kubectl pages, its first page read from the list as it was staged, the rest followed through its tokens.
    const pages = [(await paged.json()) as List];
    expect(pages[0]?.metadata.resourceVersion).toBe(upstream.metadata.resourceVersion);
    for (let token = pages[0]?.metadata.continue; token; token = pages.at(-1)?.metadata.continue) {
      const next = await relay(keyPath(selector, `limit=400&continue=${encodeURIComponent(token)}`));
      expect(next.status).toBe(200);
      pages.push((await next.json()) as List);
    }
    expect(pages.map((p) => p.items.length)).toEqual([400, 400, PODS - 800]);
    expect(names(pages.flatMap((p) => p.items))).toEqual(names(upstream.items));

    const rows = (await table.json()) as Table;
    expect(rows.metadata.resourceVersion).toBe(upstream.metadata.resourceVersion);
    expect(rows.rows.map((r) => r.cells[0])).toEqual(upstream.items.map((o) => o.metadata?.name));
  });

  it("has a watch wait for the first list as long as it goes on, then sends it whole", async () => {
    const selector = "app";
    await slowPages();
    const started = Date.now();
    const watch = await httpWatch(keyPath(selector, "watch=1"));
    expect(watch.response.status).toBe(200);
    // Answered once the list was whole: longer than a request waits (SYNC_WAIT_SECONDS, 5 s in the tests).
    expect(Date.now() - started).toBeGreaterThan(3 * PAGE_MS);
    const added = await watch.events.take(PODS);
    expect(added.every((e: WatchEvent) => e.type === "ADDED")).toBe(true);
    expect(names(added.map((e) => e.object))).toEqual(names(upstream.items));
    watch.close();
  });

  it("ends a list that streamed part of a first list which then failed upstream with an error, and serves the next once the hub has listed again", async () => {
    const selector = "app!=warm";
    await slowPages();
    const cut = await relay(keyPath(selector));
    expect(cut.status).toBe(200);
    const body = await firstChunk(cut);
    // The upstream's snapshot expires under the list: the next page it is asked for is 410.
    await sim.faults({ failRequests: { count: 1, status: 410, verbs: ["list"], path: upstreamPath } });
    await expect(body.rest()).rejects.toThrow();
    // A client's next try: served whole from the hub's next list.
    const again = await relay(keyPath(selector));
    expect(again.status).toBe(200);
    const list = (await again.json()) as List;
    expect(names(list.items)).toEqual(names(upstream.items));
    const pages = (await sim.requests(upstreamPath)).requests.filter((r) => r.verb === "list" && new URLSearchParams(r.query).get("labelSelector") === selector);
    expect(pages.some((r) => r.status === 410)).toBe(true);
  });
});
