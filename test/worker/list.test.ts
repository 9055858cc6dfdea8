/**
 * List semantics from the hub's cache: consistent paging, and the API server's answers for
 * resourceVersions the hub has not reached.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { httpWatch, relay, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim();
type List = { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: KubeObject[] };

describe("paging", () => {
  it("limit/continue pages one consistent snapshot, even across writes, without asking upstream", async () => {
    const ns = uniqueNamespace("page");
    for (let i = 0; i < 7; i++) await sim.createPod(ns, `p${i}`);
    const first = (await (await relay(`${podsPath(ns)}?limit=3`)).json()) as List;
    expect(first.items.map((o) => o.metadata!.name)).toEqual(["p0", "p1", "p2"]);
    expect(first.metadata.remainingItemCount).toBe(4);
    const before = await sim.requests(podsPath(ns));

    await sim.deletePod(ns, "p4");
    await sim.createPod(ns, "p9");
    const second = (await (await relay(`${podsPath(ns)}?limit=3&continue=${first.metadata.continue}`)).json()) as List;
    const third = (await (await relay(`${podsPath(ns)}?limit=3&continue=${second.metadata.continue}`)).json()) as List;
    expect(second.items.map((o) => o.metadata!.name)).toEqual(["p3", "p4", "p5"]);
    expect(third.items.map((o) => o.metadata!.name)).toEqual(["p6"]);
    expect(third.metadata.continue).toBeUndefined();
    expect(new Set([first, second, third].map((l) => l.metadata.resourceVersion)).size).toBe(1);
    // The next pages read the first's snapshot: no list, nor a consistent read's question of how far the upstream has got.
    const asked = (await sim.requests(podsPath(ns), before.next)).requests;
    expect(asked.filter((r) => r.verb === "list" || new URLSearchParams(r.query).has("sendInitialEvents"))).toEqual([]);

    // A watch from the first page's resourceVersion gets the writes, and a fresh list, a
    // consistent read, sees them (DESIGN.md, invariant 8).
    const watch = await wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${first.metadata.resourceVersion}`);
    try {
      await watch.events.until((event) => event.type === "ADDED" && event.object.metadata?.name === "p9", "p9 at the hub");
    } finally {
      watch.close();
    }
    const fresh = (await (await relay(podsPath(ns))).json()) as List;
    expect(fresh.items.map((o) => o.metadata!.name)).toEqual(["p0", "p1", "p2", "p3", "p5", "p6", "p9"]);
  });

  it("a token whose snapshot is no longer kept is 410 with the API server's token for the latest state, which pages on through the current state from its key", async () => {
    const ns = uniqueNamespace("expire");
    for (let i = 0; i < 4; i++) await sim.createPod(ns, `p${i}`);
    const first = (await (await relay(`${podsPath(ns)}?limit=2`)).json()) as List;
    expect(first.items.map((o) => o.metadata!.name)).toEqual(["p0", "p1"]);
    await sim.deletePod(ns, "p2");
    // Four paged lists of newer states, each once the hub has the write before it: the relay
    // keeps the newest four snapshots for continue tokens, so the first page's goes.
    for (let i = 4; i < 8; i++) {
      const rv = (await sim.createPod(ns, `p${i}`)).metadata!.resourceVersion!;
      expect((await relay(`${podsPath(ns)}?limit=1&resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)).status).toBe(200);
    }
    const expired = await relay(`${podsPath(ns)}?limit=2&continue=${first.metadata.continue}`);
    expect(expired.status).toBe(410);
    const status = (await expired.json()) as { reason: string; message: string; metadata: { continue?: string } };
    expect(status).toMatchObject({ reason: "Expired", message: expect.stringContaining("inconsistent list") });
    const pages: List[] = [];
    for (let token = status.metadata.continue; token; token = pages.at(-1)!.metadata.continue) {
      const page = await relay(`${podsPath(ns)}?limit=2&continue=${token}`);
      expect(page.status).toBe(200);
      pages.push((await page.json()) as List);
    }
    expect(pages.flatMap((p) => p.items.map((o) => o.metadata!.name))).toEqual(["p3", "p4", "p5", "p6", "p7"]);
    // One state, newer than the first page's.
    expect(new Set(pages.map((p) => p.metadata.resourceVersion)).size).toBe(1);
    expect(Number(pages[0]!.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
  });

  it("a continue token the relay did not issue is a 400", async () => {
    const response = await relay(`${podsPath(uniqueNamespace())}?limit=1&continue=bm9wZQ`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "BadRequest" });
  });
});

describe("resourceVersions ahead of the relay", () => {
  it("a list waits, then answers 504 Too large resource version with Retry-After", async () => {
    const ns = uniqueNamespace("ahead");
    await sim.createPod(ns, "p");
    const response = await relay(`${podsPath(ns)}?resourceVersion=999999999`);
    expect(response.status).toBe(504);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({
      reason: "Timeout",
      message: expect.stringMatching(/^Timeout: Too large resource version: 999999999, current: \d+$/),
      details: { causes: [{ reason: "ResourceVersionTooLarge" }], retryAfterSeconds: 1 },
    });
  });

  it("a watch gets one ERROR 504 event and the end of the stream", async () => {
    const ns = uniqueNamespace("ahead");
    await sim.createPod(ns, "p");
    const watch = await httpWatch(`${podsPath(ns)}?watch=1&resourceVersion=999999999`);
    const event: WatchEvent = await watch.events.next();
    expect(event).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 504, reason: "Timeout" } });
    await watch.events.closed();
  });
});
