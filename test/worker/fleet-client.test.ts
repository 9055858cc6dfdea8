/**
 * The client library (`src/client`) on a merged key (DESIGN.md, "One watch across clusters"):
 * `watch()`, `informer()`, `view()`, `relaySocket()` and `watchMany()` take `/clusters/a,b/…`
 * and `/clusters/*`/… (as typed, or percent-encoded) as any collection URL; the informer holds
 * every cluster's objects by their merged names, and resumes the merged key's one sequence.
 */
import { describe, expect, it } from "vitest";
import { clusterOf, informer, relaySocket, statsUrl, view, watch, watchMany, type NamedUpdate } from "../../src/client/index.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { Inbox } from "../kit/inbox.ts";
import { podsPath } from "../kit/paths.ts";
import { relay, Sim, uniqueNamespace } from "./helpers.ts";
import { collect, TestNetwork } from "./network.ts";

const a = new Sim("fleet-a");
const b = new Sim("fleet-b");
const FAST = { initialMs: 20, maxMs: 200, random: () => 0.5 };
const url = (set: string, ns: string) => `http://relay.test/clusters/${set}${podsPath(ns)}`;

/** Both clusters with a pod `web` in a new namespace. */
async function namespaceOfTwo(): Promise<string> {
  const ns = uniqueNamespace("fleet-client");
  await a.createPod(ns, "web");
  await b.createPod(ns, "web");
  return ns;
}

describe("the client on a merged key", () => {
  it("informer(): every cluster's objects keyed by their merged names, each change once across a dropped socket, without a relist", async () => {
    const ns = await namespaceOfTwo();
    const network = new TestNetwork();
    const changes = new Inbox<string>();
    const pods = informer(url("fleet-b,fleet-a", ns), {
      transport: network,
      backoff: FAST,
      onAdd: (o) => changes.push(`add ${o.metadata?.name}`),
      onUpdate: (o) => changes.push(`update ${o.metadata?.name}`),
      onDelete: (o) => changes.push(`delete ${o.metadata?.name}`),
    });
    await pods.synced;
    expect([...pods.objects.keys()].sort()).toEqual([`${ns}/fleet-a:web`, `${ns}/fleet-b:web`]);
    expect([...pods.objects.values()].map(clusterOf).sort((x, y) => x!.cluster.localeCompare(y!.cluster))).toEqual([
      { cluster: "fleet-a", name: "web" },
      { cluster: "fleet-b", name: "web" },
    ]);
    // statsUrl(): the merge hub of the set, however spelled.
    const stats = new URL(statsUrl(url("fleet-b,fleet-a", ns)));
    expect(await (await relay(stats.pathname)).json()).toMatchObject({ key: `fleet-a,fleet-b:${podsPath(ns)}` });
    changes.drain();
    const release = network.hold();
    network.drop();
    await a.patchPod(ns, "web", { metadata: { labels: { touched: "yes" } } });
    await b.deletePod(ns, "web");
    await b.createPod(ns, "api");
    release();
    expect((await changes.take(3, "the changes made while away")).sort()).toEqual(["add fleet-b:api", "delete fleet-b:web", "update fleet-a:web"]);
    expect([...pods.objects.keys()].sort()).toEqual([`${ns}/fleet-a:web`, `${ns}/fleet-b:api`]);
    expect(pods.objects.get(`${ns}/fleet-a:web`)?.metadata?.labels).toEqual({ touched: "yes" });
    expect(network.lists).toBe(1);
    // It listed and watched the set as written.
    expect(network.urls.every((u) => u.includes("/clusters/fleet-b,fleet-a/"))).toBe(true);
    pods.stop();
    await pods.done;
  });

  it("watch(): /clusters/* as typed or percent-encoded, one integer resourceVersion", async () => {
    const ns = await namespaceOfTwo();
    // Their hubs warm (a member that takes more than a second is left out of a list, and /clusters/* has many).
    for (const cluster of ["fleet-a", "fleet-b"]) await (await relay(`/clusters/${cluster}${podsPath(ns)}`)).body?.cancel();
    const names = ["fleet-a:web", "fleet-b:web"];
    for (const [set, pod] of [
      ["*", "star"],
      ["%2A", "encoded"],
    ] as const) {
      const stop = new AbortController();
      const updates = collect(watch(url(set, ns), { transport: new TestNetwork(), backoff: FAST, signal: stop.signal }));
      const listed = await updates.next("the list");
      expect(listed.type === "listed" && listed.items.map((o) => o.metadata?.name).sort()).toEqual(names);
      expect(listed.type === "listed" && listed.resourceVersion).toMatch(/^[0-9]+$/);
      await updates.until((u) => u.type === "connected", "the watch");
      await a.createPod(ns, pod);
      const added = await updates.until((u) => u.type === "ADDED", "the live pod");
      expect(added.flatMap((u) => ("object" in u ? [u.object.metadata?.name] : []))).toEqual([`fleet-a:${pod}`]);
      names.push(`fleet-a:${pod}`);
      names.sort();
      stop.abort();
    }
  });

  it("view(): a window sorted by cluster, opened at a merged name", async () => {
    const ns = await namespaceOfTwo();
    await b.createPod(ns, "api");
    const v = view(url("fleet-a,fleet-b", ns), { transport: new TestNetwork(), backoff: FAST, sort: "-Cluster,Name", limit: 2, anchor: `${ns}/fleet-b:web` });
    await v.ready;
    expect(v.rows.map((r) => r.key)).toEqual([`${ns}/fleet-b:web`, `${ns}/fleet-a:web`]);
    expect(v.window.offset).toBe(1);
    expect(v.count).toBe(3);
    v.close();
    await v.done;
  });

  it("relaySocket() and watchMany(): merged keys beside one cluster's, on one socket", async () => {
    const ns = await namespaceOfTwo();
    const network = new TestNetwork();
    const socket = relaySocket("http://relay.test", { transport: network });
    const all = socket.informer(url("fleet-a%2Cfleet-b", ns), { backoff: FAST });
    const one = socket.informer(url("fleet-a", ns), { backoff: FAST });
    await Promise.all([all.synced, one.synced]);
    expect([...all.objects.keys()].sort()).toEqual([`${ns}/fleet-a:web`, `${ns}/fleet-b:web`]);
    expect([...one.objects.keys()]).toEqual([`${ns}/web`]);
    expect(network.sockets).toHaveLength(1);
    all.stop();
    one.stop();
    await Promise.all([all.done, one.done]);
    socket.close();

    const stop = new AbortController();
    const many = collect<NamedUpdate<KubeObject>>(
      watchMany(
        { merged: `http://relay.test/clusters/fleet-a,fleet-b${podsPath(ns)}`, a: `http://relay.test/clusters/fleet-a${podsPath(ns)}` },
        { transport: new TestNetwork(), backoff: FAST, signal: stop.signal },
      ),
    );
    const listed = new Map<string, string[]>();
    while (listed.size < 2) {
      const u = await many.next("both lists");
      if (u.type === "listed") listed.set(u.name, u.items.map((o) => o.metadata?.name ?? "").sort());
    }
    expect(Object.fromEntries(listed)).toEqual({ a: ["web"], merged: ["fleet-a:web", "fleet-b:web"] });
    await b.createPod(ns, "api");
    const added = await many.until((u) => u.type === "ADDED", "fleet-b's new pod");
    expect(added.at(-1)).toMatchObject({ name: "merged", type: "ADDED", object: { metadata: { name: "fleet-b:api" } } });
    stop.abort();
  });
});
