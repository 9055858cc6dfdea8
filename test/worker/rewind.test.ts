/**
 * An upstream that goes back in time: etcd restored from a backup, or a relay in front of
 * another relay that restarted. A watch from the hub's resourceVersion is then "too large" for
 * the upstream; the hub must not retry it forever but relist, as client-go's reflector does,
 * start a new history, and tell subscribers that hold versions of the old one to relist.
 * Its own cluster: a restore takes the whole simulated cluster back.
 */
import { describe, expect, it } from "vitest";
import type { Status } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, httpWatch, nameOf, relay, rvOf, Sim, uniqueNamespace } from "./helpers.ts";

const cluster = "rewind";
const sim = new Sim(cluster);
const path = (ns: string, query = "") => `/clusters/${cluster}${podsPath(ns)}${query ? `?${query}` : ""}`;

describe("an upstream that goes back in time", () => {
  it("a watching hub relists and starts a new history; subscribers ahead of it are told their version is too large", async () => {
    /** A live view's page of the namespace's pods, by name backwards: the hub's view rows, through an index made for that order. */
    const viewed = async (ns: string) => {
      const page = (await (await relay(path(ns, "view=1&sort=-name&limit=10"))).json()) as { count: number; rows: Array<{ key: string }> };
      return { count: page.count, keys: page.rows.map((r) => r.key) };
    };
    const backup = Number((await sim.stats()).resourceVersion);
    const ns = uniqueNamespace("r");
    await sim.createPod(ns, "old");
    for (let i = 0; i < 5; i++) await sim.patchPod(ns, "old", { metadata: { labels: { step: String(i) } } });
    await sim.createPod(ns, "zed");
    const sub = await httpWatch(path(ns, "watch=1&allowWatchBookmarks=true"));
    expect(nameOf(await sub.events.next())).toBe("old");
    expect(nameOf(await sub.events.next())).toBe("zed");
    expect(await viewed(ns)).toEqual({ count: 2, keys: [`${ns}/zed`, `${ns}/old`] });
    const held = rvOf((await (await relay(path(ns, "resourceVersion=0"))).json()) as { metadata: { resourceVersion: string } });

    // Restored from a backup taken before the namespace's pods: revisions start again after `backup`.
    await sim.reset(backup);
    const created = await sim.createPod(ns, "new");
    expect(rvOf(created)).toBeLessThan(held);

    // Bookmarks may come first (the tests' interval is a second); then the ERROR.
    const error = (await sub.events.until((e) => e.type === "ERROR", "the subscriber to hear that its history is gone")).at(-1)!;
    const status = error.object as unknown as Status;
    expect(status).toMatchObject({ code: 504, reason: "Timeout", details: { causes: [{ reason: "ResourceVersionTooLarge" }] } });
    expect(status.message).toContain(`Too large resource version: ${held}`);
    await sub.events.closed();

    // The hub serves the new history: a list, and a watch from it.
    const list = (await (await relay(path(ns))).json()) as { metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string } }> };
    expect(list.items.map((p) => p.metadata.name)).toEqual(["new"]);
    expect(await viewed(ns)).toEqual({ count: 1, keys: [`${ns}/new`] });
    expect(Number(list.metadata.resourceVersion)).toBeLessThan(held);
    const resumed = await httpWatch(path(ns, `watch=1&resourceVersion=${list.metadata.resourceVersion}`));
    const next = await sim.patchPod(ns, "new", { metadata: { labels: { after: "restore" } } });
    expect(rvOf(await resumed.events.next())).toBe(rvOf(next));
    resumed.close();
    const stats = await eventually(async () => {
      const s = (await (await relay(`/_relay/stats${path(ns)}`)).json()) as { upstream: string; resourceVersion: number };
      return s.upstream === "watching" ? s : undefined;
    }, "the hub to watch the new history");
    expect(stats.resourceVersion).toBeLessThan(held);
  });
});
