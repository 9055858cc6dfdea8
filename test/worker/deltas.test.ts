/**
 * Deltas: a subscriber that offers `delta.watch.kube-watch-relay.dev` gets a MODIFIED of an
 * object it already has as a merge patch against the version it has — full objects on its
 * initial state, on a resume's replay, and whenever the patch would not be smaller.
 */
import { describe, expect, it } from "vitest";
import { applyDelta, parseDelta } from "../../src/k8s/delta.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { DELTA_PROTOCOL } from "../../src/k8s/websocket.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim();
/** A delta subscriber's view: its objects by name, from every line it was sent (a delta's object is the one at its base version). */
function applyLines(state: Map<string, KubeObject>, lines: string[]): { deltas: number; full: number } {
  let deltas = 0;
  let full = 0;
  for (const line of lines) {
    const delta = parseDelta(line);
    if (delta) {
      const current = [...state.values()].find((object) => object.metadata?.resourceVersion === delta.base);
      expect(current).toBeDefined();
      state.set(current!.metadata!.name!, applyDelta(current!, delta));
      deltas++;
      continue;
    }
    const event = JSON.parse(line) as WatchEvent;
    if (event.type === "DELETED") state.delete(event.object.metadata!.name!);
    else if (event.type === "ADDED" || event.type === "MODIFIED") state.set(event.object.metadata!.name!, event.object);
    if (event.type === "MODIFIED") full++;
  }
  return { deltas, full };
}

describe("deltas for subscribers that ask for them", () => {
  it("MODIFIED as merge patches after the initial state; applied, they give the upstream's objects", async () => {
    const ns = uniqueNamespace("d");
    await sim.createPod(ns, "a", { app: "web" });
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`, { "sec-websocket-protocol": DELTA_PROTOCOL });
    await sub.events.next();
    for (let i = 0; i < 5; i++) await sim.patchPod(ns, "a", { metadata: { labels: { step: String(i) } } });
    // A delta parses as a line without an object: it still counts as one received.
    await sub.events.take(5);
    const raw = sub.raw.flatMap((message) => message.split("\n").filter((l) => l));
    const state = new Map<string, KubeObject>();
    const counts = applyLines(state, raw);
    expect(counts).toEqual({ deltas: 5, full: 0 });
    const upstream = (await sim.list(podsPath(ns))).items[0]!;
    expect(state.get("a")).toEqual({ kind: "Pod", apiVersion: "v1", ...upstream });
    // Each is smaller than the object it stands for (the benchmark measures by how much, on real pods).
    for (const line of raw.slice(1)) expect(line.length).toBeLessThan(raw[0]!.length);
    sub.close();
  });

  it("a resume's replay goes whole; deltas follow once it has caught up", async () => {
    const ns = uniqueNamespace("d");
    await sim.createPod(ns, "a");
    const first = await wsWatch(`${podsPath(ns)}?watch=1`);
    const from = (await first.events.next()).object.metadata!.resourceVersion!;
    first.close();
    let away = 0;
    for (let i = 0; i < 3; i++) away = rvOf(await sim.patchPod(ns, "a", { metadata: { labels: { away: String(i) } } }));
    // All three in the hub before the resume: else the last would come live, as a delta.
    await eventually(async () => ((await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as { resourceVersion: number }).resourceVersion >= away, "the hub to have the changes");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1&resourceVersion=${from}&allowWatchBookmarks=true`, { "sec-websocket-protocol": DELTA_PROTOCOL });
    // The replay and the bookmark that says it is done.
    const replay = await sub.events.take(4);
    expect(replay.map((e) => e.type)).toEqual(["MODIFIED", "MODIFIED", "MODIFIED", "BOOKMARK"]);
    expect(replay.every((e) => e.type === "BOOKMARK" || e.object !== undefined)).toBe(true);
    await sim.patchPod(ns, "a", { metadata: { labels: { live: "yes" } } });
    await sub.events.next();
    const last = sub.raw.at(-1)!.trim();
    expect(parseDelta(last)?.base).toBe(replay[2]!.object.metadata!.resourceVersion);
    sub.close();
  });
});
