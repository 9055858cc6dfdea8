/**
 * One watch across clusters (DESIGN.md, "One watch across clusters"): `/clusters/a,b/…` and
 * `/clusters/*`/… are one collection with one integer resourceVersion, served by a merge hub
 * that reads each member's own hub; a member down blocks nobody.
 */
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import { CLUSTER_ANNOTATION, MEMBERS_BEHIND_ANNOTATION, MEMBERS_BEHIND_HEADER, NAME_ANNOTATION } from "../../src/k8s/members.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, httpWatch, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { relaySocket } from "./socket-helpers.ts";

const a = new Sim("fleet-a");
const b = new Sim("fleet-b");
const merged = (set: string, ns: string, query = "") => `/clusters/${set}${podsPath(ns)}${query ? `?${query}` : ""}`;

interface List {
  metadata: { resourceVersion: string };
  items: KubeObject[];
}

async function list(path: string): Promise<{ response: Response; list: List }> {
  const response = await relay(path);
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, list: (await response.json()) as List };
}

/** The hub of a namespace's pods in `cluster` (a merged key's: its canonical set); every namespace's without one. */
function hubOf(cluster: string, namespace: string | undefined, labelSelector: string | null = null) {
  return env.WATCH_HUB.getByName(hubName(watchKey({ cluster, group: "", version: "v1", resource: "pods", namespace, namespaced: true, labelSelector, fieldSelector: null })));
}

/** The names a watch-list of `path` (no resourceVersion) starts with, up to its initial-events-end bookmark, sorted. */
async function watchListNames(path: string): Promise<Array<string | undefined>> {
  const watch = await httpWatch(`${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
  const initial = await watch.events.until((e) => e.type === "BOOKMARK" && e.object.metadata?.annotations?.["k8s.io/initial-events-end"] === "true", "the initial-events-end bookmark");
  watch.close();
  return initial
    .filter((e) => e.type === "ADDED")
    .map((e) => e.object.metadata?.name)
    .sort();
}

const described = (e: WatchEvent) => [e.type, e.object.metadata?.name, e.object.metadata?.annotations?.[CLUSTER_ANNOTATION]];

describe("a merged key", () => {
  it("lists every member's objects under names that never collide, each saying its cluster, at one integer resourceVersion, whatever the set's spelling", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "web");
    await b.createPod(ns, "web");
    const { list: one } = await list(merged("fleet-b,fleet-a", ns));
    expect(one.metadata.resourceVersion).toMatch(/^[0-9]+$/);
    expect(one.items.map((o) => [o.metadata?.name, o.metadata?.annotations?.[CLUSTER_ANNOTATION], o.metadata?.annotations?.[NAME_ANNOTATION]]).sort()).toEqual([
      ["fleet-a:web", "fleet-a", "web"],
      ["fleet-b:web", "fleet-b", "web"],
    ]);
    for (const item of one.items) expect(rvOf(item)).toBeLessThanOrEqual(Number(one.metadata.resourceVersion));
    // Another spelling of the same set is the same merge hub: the same objects at the same resourceVersions.
    const { list: again } = await list(merged("fleet-a,fleet-b,fleet-a", ns));
    expect(again.items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]).sort()).toEqual(one.items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]).sort());
  });

  it("watches every member in one sequence of integers, resumes exactly from any of them, and answers 410 before its window", async () => {
    const ns = uniqueNamespace("fleet");
    const { list: start } = await list(merged("fleet-a,fleet-b", ns));
    const from = Number(start.metadata.resourceVersion);
    const watch = await httpWatch(merged("fleet-a,fleet-b", ns, `watch=1&resourceVersion=${from}`));
    // Each change awaited before the next: members' hubs commit on their own timers, so changes
    // made in two clusters a moment apart may reach the merged watch in either order.
    const events = [];
    await a.createPod(ns, "one");
    events.push(await watch.events.next("the creation in fleet-a"));
    await b.createPod(ns, "two");
    events.push(await watch.events.next("the creation in fleet-b"));
    await a.patchPod(ns, "one", { metadata: { labels: { changed: "yes" } } });
    events.push(await watch.events.next("the change in fleet-a"));
    await b.deletePod(ns, "two");
    events.push(await watch.events.next("the deletion in fleet-b"));
    watch.close();
    expect(events.map(described)).toEqual([
      ["ADDED", "fleet-a:one", "fleet-a"],
      ["ADDED", "fleet-b:two", "fleet-b"],
      ["MODIFIED", "fleet-a:one", "fleet-a"],
      ["DELETED", "fleet-b:two", "fleet-b"],
    ]);
    const rvs = events.map(rvOf);
    expect(rvs[0]).toBeGreaterThan(from);
    for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1]!);
    // From each of them: exactly what followed it, no gap, no duplicate.
    for (let i = 0; i < events.length - 1; i++) {
      const resumed = await httpWatch(merged("fleet-a,fleet-b", ns, `watch=1&resourceVersion=${rvs[i]}`));
      const rest = await resumed.events.until((e) => e.type === "DELETED", "the deletion, again");
      resumed.close();
      expect(rest.map((e) => [...described(e), rvOf(e)])).toEqual(events.slice(i + 1).map((e) => [...described(e), rvOf(e)]));
    }
    // As the API server does: the watch opens, and its one event is the 410.
    const before = await httpWatch(merged("fleet-a,fleet-b", ns, `watch=1&resourceVersion=${from - 1}`));
    const gone = await before.events.next("the 410");
    expect([gone.type, (gone.object as { code?: number }).code]).toEqual(["ERROR", 410]);
    before.close();
  });

  it("starts a watch-list with every member's objects and the initial-events-end bookmark", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "x");
    await b.createPod(ns, "y");
    expect(await watchListNames(merged("fleet-a,fleet-b", ns))).toEqual(["fleet-a:x", "fleet-b:y"]);
  });

  it("refuses clusters it does not know (404) and a malformed set", async () => {
    const unknown = await relay(merged("fleet-a,nowhere", "x"));
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { message: string }).message).toContain("nowhere");
    const malformed = await relay(merged("fleet-a,,Bad_Name", "x"));
    expect(malformed.status).toBe(404);
    expect(((await malformed.json()) as { message: string }).message).toContain("cluster set");
  });

  it("gets a member's object as its own cluster's get, renamed and annotated as its lists have it, in JSON, YAML and a Table; a name of no member is a 404", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "web");
    await b.createPod(ns, "web");
    const { list: listed } = await list(merged("fleet-a,fleet-b", ns));
    const own = listed.items.find((o) => o.metadata?.name === "fleet-b:web")!;
    for (const path of [merged("fleet-a,fleet-b", ns), merged("*", ns)]) {
      const response = await relay(`${path}/fleet-b:web`);
      expect(response.status, path).toBe(200);
      const got = (await response.json()) as KubeObject;
      // No number of the merged key's sequence: 0, older than any; its cluster's own is in its annotation, as in the list.
      expect(got.metadata).toEqual({ ...own.metadata, resourceVersion: "0" });
    }
    // A resourceVersion the merged key gave out is not the member's: the member is read as current.
    for (const rv of [listed.metadata.resourceVersion, "0"]) expect((await relay(`${merged("fleet-a,fleet-b", ns)}/fleet-a:web?resourceVersion=${rv}`)).status, rv).toBe(200);
    const yaml = await relay(`${merged("fleet-a,fleet-b", ns)}/fleet-b:web`, { headers: { accept: "application/yaml" } });
    expect(yaml.status).toBe(200);
    const text = await yaml.text();
    for (const line of ["  name: fleet-b:web\n", "    kube-watch-relay.dev/cluster: fleet-b\n"]) expect(text).toContain(line);
    const table = (await (await relay(`${merged("fleet-a,fleet-b", ns)}/fleet-a:web`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })).json()) as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    };
    expect(table.columnDefinitions.slice(0, 2).map((c) => c.name)).toEqual(["Name", "Cluster"]);
    expect(table.rows.map((r) => r.cells.slice(0, 2))).toEqual([["fleet-a:web", "fleet-a"]]);
    // No cluster in the name, a cluster not in the set, an object its cluster does not have: the API server's 404, naming the object as asked.
    for (const name of ["web", "nowhere:web", "fleet-a:gone"]) {
      const missing = await relay(`${merged("fleet-a,fleet-b", ns)}/${name}`);
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toMatchObject({ kind: "Status", code: 404, reason: "NotFound", message: `pods "${name}" not found`, details: { name, kind: "pods" } });
    }
  });

  it("goes on without a member that never answers, and names it on lists and bookmarks", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "here");
    const started = Date.now();
    const { response, list: listed } = await list(merged("down,fleet-a", ns));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBe("down");
    expect(listed.items.map((o) => o.metadata?.name)).toEqual(["fleet-a:here"]);
    const watch = await httpWatch(merged("down,fleet-a", ns, `watch=1&resourceVersion=${listed.metadata.resourceVersion}&allowWatchBookmarks=true`));
    await a.createPod(ns, "later");
    const events = await watch.events.until((e) => e.type === "ADDED", "fleet-a's change");
    expect(events.filter((e) => e.type !== "BOOKMARK").map(described)).toEqual([["ADDED", "fleet-a:later", "fleet-a"]]);
    // Its bookmarks (the resume's, first) say which member is behind.
    expect(events[0]!.type).toBe("BOOKMARK");
    expect(events[0]!.object.metadata?.annotations?.[MEMBERS_BEHIND_ANNOTATION]).toBe("down");
    watch.close();
  });

  it("goes on with the others while a member's cluster is unreachable, says so on its bookmarks, and brings what changed there meanwhile once, in order", async () => {
    const ns = uniqueNamespace("fleet");
    const { list: start } = await list(merged("fleet-a,fleet-b", ns));
    const watch = await httpWatch(merged("fleet-a,fleet-b", ns, `watch=1&resourceVersion=${start.metadata.resourceVersion}&allowWatchBookmarks=true`));
    await b.createPod(ns, "before");
    await watch.events.until((e) => e.type === "ADDED", "fleet-b's first pod");
    // fleet-b's hub loses its watch and cannot get another for several seconds (its backoff); its cluster still takes writes.
    await b.faults({ dropWatches: true, failRequests: { count: 3, status: 503, verbs: ["watch", "list"], path: podsPath(ns) } });
    await b.createPod(ns, "meanwhile-1");
    await b.patchPod(ns, "meanwhile-1", { metadata: { labels: { step: "2" } } });
    await a.createPod(ns, "other");
    const events = await watch.events.until((e) => e.type === "MODIFIED", "fleet-b's changes, once it is back");
    const behind = (e: WatchEvent) => e.object.metadata?.annotations?.[MEMBERS_BEHIND_ANNOTATION];
    const changes = events.filter((e) => e.type !== "BOOKMARK");
    expect(changes.map(described)).toEqual([
      ["ADDED", "fleet-a:other", "fleet-a"],
      ["ADDED", "fleet-b:meanwhile-1", "fleet-b"],
      ["MODIFIED", "fleet-b:meanwhile-1", "fleet-b"],
    ]);
    expect(rvOf(changes[1]!)).toBeGreaterThan(rvOf(changes[0]!));
    // While fleet-b's hub could not read its cluster, the merged watch's bookmarks named it; once back, they do not.
    expect(events.slice(0, events.indexOf(changes[1]!)).some((e) => e.type === "BOOKMARK" && behind(e) === "fleet-b")).toBe(true);
    await watch.events.until((e) => e.type === "BOOKMARK" && behind(e) === undefined, "a bookmark that names no member behind");
    watch.close();
  });

  it("answers a consistent list with every change each member's cluster had made when it arrived, though a member's watch brings it later, and starts a watch-list from such a state", async () => {
    const ns = uniqueNamespace("fleet");
    const set = "fleet-a,fleet-b";
    await list(merged(set, ns));
    // fleet-a's watch cache, and so its hub's watch and the merged one, takes each change 300 ms after it is made.
    await a.configure({ watchDelayMs: 300 });
    try {
      await a.createPod(ns, "fresh");
      await b.createPod(ns, "also");
      const { response, list: current } = await list(merged(set, ns));
      expect(current.items.map((o) => o.metadata?.name).sort()).toEqual(["fleet-a:fresh", "fleet-b:also"]);
      expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBeNull();
      // Every item is at or before the list's resourceVersion, from which a watch gets what follows.
      for (const item of current.items) expect(rvOf(item)).toBeLessThanOrEqual(Number(current.metadata.resourceVersion));
      // A watch-list without resourceVersion starts from such a state too.
      await a.createPod(ns, "fresher");
      expect(await watchListNames(merged(set, ns))).toEqual(["fleet-a:fresh", "fleet-a:fresher", "fleet-b:also"]);
    } finally {
      await a.configure({ watchDelayMs: 0 });
    }
  });

  it("does not hold a consistent list longer than a second for a member whose cluster does not say how far it has got: it names it behind", async () => {
    const ns = uniqueNamespace("fleet");
    const set = "fleet-a,fleet-b";
    await list(merged(set, ns));
    // fleet-b's next watch of the namespace's pods, the one its hub asks how far its cluster has got with, is answered only after 5 s.
    await b.faults({ delayRequests: { ms: 5000, count: 1, verbs: ["watch"], path: podsPath(ns) } });
    await a.createPod(ns, "fresh");
    const started = Date.now();
    const { response, list: current } = await list(merged(set, ns));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBe("fleet-b");
    expect(current.items.map((o) => o.metadata?.name)).toEqual(["fleet-a:fresh"]);
  });

  it("/clusters/* is every configured cluster", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "p");
    await b.createPod(ns, "q");
    // Their hubs warm (a member's first list is its own cluster's, and a member that takes more than a second is left out of this list).
    for (const cluster of ["fleet-a", "fleet-b"]) await (await relay(`/clusters/${cluster}${podsPath(ns)}`)).body?.cancel();
    const { response, list: all } = await list(merged("*", ns));
    expect(all.items.map((o) => o.metadata?.name).sort()).toEqual(["fleet-a:p", "fleet-b:q"]);
    // Among the others, some may be behind too (a cluster another test left slow or at its quota of hubs): never the two that answer.
    const behind = response.headers.get(MEMBERS_BEHIND_HEADER)?.split(",") ?? [];
    expect(behind).toContain("down");
    expect(behind).not.toContain("fleet-a");
    expect(behind).not.toContain("fleet-b");
  });

  it("resumes exactly across a restart of the merge hub, of a member's hub, and of both", async () => {
    const ns = uniqueNamespace("fleet");
    const set = "fleet-a,fleet-b";
    const { list: start } = await list(merged(set, ns));
    const watch = await httpWatch(merged(set, ns, `watch=1&resourceVersion=${start.metadata.resourceVersion}`));
    await a.createPod(ns, "a0");
    await b.createPod(ns, "b0");
    const seen = await watch.events.take(2);
    watch.close();
    const history: WatchEvent[] = [...seen];
    /** Changes made while `restart` restarts hubs, then a resume from the last seen: exactly them, after exactly what was seen. */
    const across = async (restart: () => Promise<void>, step: string) => {
      await restart();
      await a.patchPod(ns, "a0", { metadata: { labels: { step } } });
      await b.createPod(ns, `b-${step}`);
      const resumed = await httpWatch(merged(set, ns, `watch=1&resourceVersion=${rvOf(history.at(-1)!)}`));
      const events = await resumed.events.take(2);
      resumed.close();
      // Two clusters' changes come in the order they reach the merge hub (a member's hub restarting comes later).
      expect(events.map(described).sort()).toEqual([
        ["ADDED", `fleet-b:b-${step}`, "fleet-b"],
        ["MODIFIED", "fleet-a:a0", "fleet-a"],
      ]);
      expect(rvOf(events[0]!)).toBeGreaterThan(rvOf(history.at(-1)!));
      expect(rvOf(events[1]!)).toBeGreaterThan(rvOf(events[0]!));
      history.push(...events);
    };
    await across(() => evictDurableObject(hubOf(set, ns)), "merge");
    await across(() => evictDurableObject(hubOf("fleet-a", ns)), "member");
    await across(() => abortAllDurableObjects(), "all");
    // And a resume from the first number still replays the whole history, once.
    const replay = await httpWatch(merged(set, ns, `watch=1&resourceVersion=${start.metadata.resourceVersion}`));
    const again = await replay.events.take(history.length);
    replay.close();
    expect(again.map((e) => [...described(e), rvOf(e)])).toEqual(history.map((e) => [...described(e), rvOf(e)]));
  });

  it("is watched over WebSocket and the relay socket, read as YAML, listed as kubectl's Table with a Cluster column, and viewed sorted by cluster", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "web");
    await b.createPod(ns, "web");
    const { list: start } = await list(merged("fleet-a,fleet-b", ns));
    const socket = await wsWatch(merged("fleet-a,fleet-b", ns, `watch=1&resourceVersion=${start.metadata.resourceVersion}`));
    await b.createPod(ns, "api");
    expect(described(await socket.events.next("fleet-b's pod"))).toEqual(["ADDED", "fleet-b:api", "fleet-b"]);
    // One upstream watch per cluster and key, however many merged keys and direct subscribers read it.
    const direct = await httpWatch(`/clusters/fleet-b${podsPath(ns)}?watch=1`);
    const alone = await httpWatch(merged("fleet-b,", ns, "watch=1"));
    expect((await alone.events.until((e) => e.type === "ADDED" && e.object.metadata?.name === "fleet-b:api", "fleet-b's pod, alone")).length).toBeGreaterThan(0);
    expect(await b.watchesOn(podsPath(ns))).toHaveLength(1);
    expect(await a.watchesOn(podsPath(ns))).toHaveLength(1);
    for (const s of [socket, direct, alone]) s.close();
    // On the relay socket, beside one cluster's watch.
    const mux = await relaySocket();
    mux.send({ op: "watch", id: "fleet", path: merged("fleet-a,fleet-b", ns) });
    const initial = await mux.lines("fleet").take(3);
    mux.close();
    expect(
      initial
        .filter((l) => l.type === "ADDED")
        .map((l) => l.object?.metadata?.name)
        .sort(),
    ).toEqual(["fleet-a:web", "fleet-b:api", "fleet-b:web"]);
    const yaml = await relay(merged("fleet-a,fleet-b", ns), { headers: { accept: "application/yaml" } });
    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toContain("name: fleet-b:api");
    const table = (await (await relay(merged("fleet-a,fleet-b", ns), { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })).json()) as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    };
    expect(table.columnDefinitions.slice(0, 3).map((c) => c.name)).toEqual(["Name", "Cluster", "Ready"]);
    expect(table.rows.map((r) => r.cells.slice(0, 2)).sort()).toEqual([
      ["fleet-a:web", "fleet-a"],
      ["fleet-b:api", "fleet-b"],
      ["fleet-b:web", "fleet-b"],
    ]);
    const view = (await (await relay(merged("fleet-a,fleet-b", ns, "view=1&sort=-Cluster,Name&limit=10"))).json()) as { count: number; rows: Array<{ cells?: unknown[] }> };
    expect(view.count).toBe(3);
    expect(view.rows.map((r) => r.cells?.slice(0, 2))).toEqual([
      ["fleet-b:api", "fleet-b"],
      ["fleet-b:web", "fleet-b"],
      ["fleet-a:web", "fleet-a"],
    ]);
  });

  it("keeps a member's objects through a relist that member does not answer, at the resourceVersions they had, and brings its changes meanwhile once, in order", async () => {
    const ns = uniqueNamespace("fleet");
    const set = "fleet-a,fleet-b";
    await a.createPod(ns, "a0");
    for (const name of ["b0", "b1"]) await b.createPod(ns, name);
    const { list: before } = await list(merged(set, ns));
    expect(before.items.map((o) => o.metadata?.name).sort()).toEqual(["fleet-a:a0", "fleet-b:b0", "fleet-b:b1"]);
    // fleet-b's cluster stops answering, and its hub restarts: not watching its cluster, it answers no list of it.
    await b.faults({ failRequests: { count: 1000, status: 503, verbs: ["watch", "list"], path: podsPath(ns) } });
    await evictDurableObject(hubOf("fleet-b", ns));
    // The merge hub restarts to find fleet-a's hub no longer holds fleet-a's position (as after compacting it): a 410, and a relist.
    const hub = hubOf(set, ns);
    await runInDurableObject(hub, (_instance, state) => void state.storage.sql.exec(`UPDATE merge_points SET positions = json_set(positions, '$."fleet-a"', 1)`));
    await evictDurableObject(hub);
    await b.createPod(ns, "b2");
    await b.patchPod(ns, "b0", { metadata: { labels: { step: "meanwhile" } } });
    await b.deletePod(ns, "b1");
    const watch = await httpWatch(merged(set, ns, `watch=1&resourceVersion=${before.metadata.resourceVersion}&allowWatchBookmarks=true`));
    await eventually(
      () =>
        runInDurableObject(hub, (_instance, state) =>
          state.storage.sql
            .exec<{ positions: string }>("SELECT positions FROM merge_points")
            .toArray()
            .every((r) => (JSON.parse(r.positions) as Record<string, number>)["fleet-a"] !== 1),
        ),
      "the merge hub to have relisted",
    );
    // fleet-b is behind (its hub cannot read its cluster), and its objects are as they were, at the resourceVersions they had.
    const relisted = await eventually(async () => {
      const { response, list: current } = await list(merged(set, ns, "resourceVersion=0"));
      return response.headers.get(MEMBERS_BEHIND_HEADER) === "fleet-b" && current;
    }, "a list that names fleet-b behind");
    const versions = (items: KubeObject[]) => items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]).sort();
    expect(versions(relisted.items)).toEqual(versions(before.items));
    expect(Number(relisted.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
    await b.faults({ failRequests: { count: 0, status: 503 } });
    const events = await watch.events.until((e) => e.type === "DELETED", "fleet-b's deletion, once it is back");
    watch.close();
    const changes = events.filter((e) => e.type !== "BOOKMARK");
    expect(changes.map(described)).toEqual([
      ["ADDED", "fleet-b:b2", "fleet-b"],
      ["MODIFIED", "fleet-b:b0", "fleet-b"],
      ["DELETED", "fleet-b:b1", "fleet-b"],
    ]);
    for (let i = 1; i < changes.length; i++) expect(rvOf(changes[i]!)).toBeGreaterThan(rvOf(changes[i - 1]!));
  });

  it("relists as any hub does when it cannot resume (its positions gone): only what changed is sent, an unchanged object keeps its resourceVersion", async () => {
    const run = uniqueNamespace("run");
    const [ns1, ns2] = [uniqueNamespace("fleet"), uniqueNamespace("fleet")];
    // Every namespace's pods of one label: merged keys out of key order across members (ns1/fleet-b:… before ns2/fleet-a:…).
    const path = `/clusters/fleet-a,fleet-b/api/v1/pods?labelSelector=run%3D${run}`;
    for (const sim of [a, b]) for (const ns of [ns1, ns2]) await sim.createPod(ns, "p", { run });
    const { list: before } = await list(path);
    expect(before.items).toHaveLength(4);
    const hub = hubOf("fleet-a,fleet-b", undefined, `run=${run}`);
    await runInDurableObject(hub, (_instance, state) => void state.storage.sql.exec("DELETE FROM merge_points"));
    await evictDurableObject(hub);
    await a.patchPod(ns2, "p", { metadata: { labels: { run, changed: "yes" } } });
    await b.deletePod(ns1, "p");
    const resumed = await httpWatch(`${path}&watch=1&resourceVersion=${before.metadata.resourceVersion}`);
    const events = await resumed.events.take(2);
    resumed.close();
    expect(events.map((e) => [e.type, e.object.metadata?.namespace, e.object.metadata?.name]).sort()).toEqual([
      ["DELETED", ns1, "fleet-b:p"],
      ["MODIFIED", ns2, "fleet-a:p"],
    ]);
    const { list: after } = await list(path);
    const rv = (items: KubeObject[], ns: string, name: string) => items.find((o) => o.metadata?.namespace === ns && o.metadata?.name === name)?.metadata?.resourceVersion;
    expect(after.items).toHaveLength(3);
    for (const [ns, name] of [
      [ns1, "fleet-a:p"],
      [ns2, "fleet-b:p"],
    ] as const)
      expect(rv(after.items, ns, name)).toBe(rv(before.items, ns, name));
    expect(Number(rv(after.items, ns2, "fleet-a:p"))).toBeGreaterThan(Number(before.metadata.resourceVersion));
  });
});

describe("the clusters' names", () => {
  it("are every configured cluster's, default first, names only", async () => {
    const response = await relay("/_relay/clusters");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const answer = (await response.json()) as { kind: string; names: string[] };
    expect(Object.keys(answer).sort()).toEqual(["apiVersion", "kind", "metadata", "names"]);
    expect(answer).toMatchObject({ kind: "ClusterNames", apiVersion: "relay.kube-watch-relay.dev/v1" });
    expect(answer.names[0]).toBe("default");
    expect(answer.names).toEqual(expect.arrayContaining(["fleet-a", "fleet-b"]));
    expect(answer.names).toEqual(["default", ...Object.keys(JSON.parse(env.CLUSTERS as string) as object)]);
  });
});
