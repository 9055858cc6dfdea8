/**
 * @module
 * A watch-list request as client-go ≥ 1.35 informers send it
 * (`sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`): the
 * current state as ADDED events, exactly one BOOKMARK marking their end, then live events on the
 * same stream. Without that bookmark an informer re-issues the request forever and never syncs.
 */
import { describe, expect, it } from "vitest";
import { INITIAL_EVENTS_END, type WatchEvent } from "../../src/k8s/types.ts";
import { httpWatch, nameOf, rvOf, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();
const WATCH_LIST = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
const endsInitialEvents = (e: WatchEvent) => e.type === "BOOKMARK" && e.object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true";

describe("watch-list", () => {
  it("sends the initial ADDED events, then one initial-events-end bookmark, then live events", async () => {
    const ns = uniqueNamespace("wl");
    const pods = [];
    for (const name of ["c", "a", "b"]) pods.push(await sim.createPod(ns, name));
    const watch = await httpWatch(`/api/v1/namespaces/${ns}/pods?${WATCH_LIST}`);

    const initial = await watch.events.take(3, "the initial events");
    expect(initial.map((e) => [e.type, nameOf(e)])).toEqual([
      ["ADDED", "a"],
      ["ADDED", "b"],
      ["ADDED", "c"],
    ]);
    const end = await watch.events.next("the initial-events-end bookmark");
    expect(endsInitialEvents(end)).toBe(true);
    expect(end.object).toMatchObject({ kind: "Pod", apiVersion: "v1" });
    expect(rvOf(end)).toBeGreaterThanOrEqual(Math.max(...pods.map(rvOf)));

    // Live events follow on the same stream; periodic bookmarks may come between, never another end marker.
    const created = await sim.createPod(ns, "d");
    const deleted = await sim.deletePod(ns, "a");
    const live: WatchEvent[] = [];
    while (live.filter((e) => e.type !== "BOOKMARK").length < 2) live.push(await watch.events.next("the live events"));
    expect(live.filter((e) => e.type !== "BOOKMARK").map((e) => [e.type, nameOf(e), rvOf(e)])).toEqual([
      ["ADDED", "d", rvOf(created)],
      ["DELETED", "a", rvOf(deleted)],
    ]);
    expect(live.filter(endsInitialEvents)).toEqual([]);
    watch.close();
  });
});
