/**
 * The bookmark before a watch's end, as the API server sends it: 2 s before `timeoutSeconds`
 * ends a watch that asked for bookmarks, at a resourceVersion past what it was sent once the
 * collection has moved; against an upstream that bookmarks once a minute (`quiet`), as an API
 * server does, a hub that has heard nothing since the watch began asks it how far it has got.
 */
import { describe, expect, it } from "vitest";
import { podsPath } from "../kit/paths.ts";
import { httpWatch, relay, rvOf, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim("quiet");
const path = (ns: string, query: string) => `/clusters/quiet${podsPath(ns)}?labelSelector=side%3Dwatched&${query}`;

describe("the bookmark before a watch's end", () => {
  it("comes 2 s before timeoutSeconds, past where the watch began once the collection moved, though the upstream bookmarks once a minute", async () => {
    const ns = uniqueNamespace("bookmark");
    const start = (await (await relay(path(ns, ""))).json()) as { metadata: { resourceVersion: string } };
    const before = await sim.requests(podsPath(ns));
    const watch = await httpWatch(path(ns, `watch=1&resourceVersion=${start.metadata.resourceVersion}&allowWatchBookmarks=true&timeoutSeconds=8`));
    // A change beside the selector: nothing for this watch but a newer resume point.
    const written = rvOf(await sim.createPod(ns, "beside"));
    // Past the resume's own bookmark, at where it began.
    const events = await watch.events.until((e) => e.type === "BOOKMARK" && rvOf(e) > Number(start.metadata.resourceVersion), "a bookmark past the start");
    const bookmarked = Date.now();
    expect(events.map((e) => [e.type, rvOf(e)])).toEqual([
      ["BOOKMARK", Number(start.metadata.resourceVersion)],
      ["BOOKMARK", rvOf(events.at(-1)!)],
    ]);
    expect(rvOf(events.at(-1)!)).toBeGreaterThanOrEqual(written);
    expect((await watch.events.closed()).error).toBeUndefined();
    // Its 2 s before the end (well over a second, on a loaded machine).
    expect(Date.now() - bookmarked).toBeGreaterThanOrEqual(1_000);
    // What the hub asked the upstream: a watch from where it was, short enough for the API server's own bookmark before its end.
    const watches = (await sim.requests(podsPath(ns), before.next)).requests.filter((r) => r.verb === "watch").map((r) => new URLSearchParams(r.query));
    expect(watches.map((q) => q.get("timeoutSeconds"))).toContain("3");
  });
});
