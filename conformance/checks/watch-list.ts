/**
 * @module
 * Watch-list (`sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`):
 * the collection's state as ADDED events, each object once, then one BOOKMARK annotated
 * `k8s.io/initial-events-end` at the version that state is at, then live changes. A server
 * without the WatchList feature refuses the parameters (422): not applicable.
 */
import { INITIAL_EVENTS_END } from "../../src/k8s/types.ts";
import { configMaps, pathOf } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, describe, errorIn, eventsText, gather, keyOf, nameOf, reached, versionOf } from "../reads.ts";

const WAIT_MS = 15_000;

export const watchListCheck: Check = {
  id: "watch-list",
  title: "sendInitialEvents: the state as ADDED, a BOOKMARK annotated k8s.io/initial-events-end, then live changes",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    const made = objects ? [await objects.create("a"), await objects.create("b"), await objects.create("c")] : [];
    if (made[2]) await reached(ctx.api, collection, query, versionOf(made[2], "the write"));

    const opened = await ctx.api.watch(pathOf(collection), { ...query, sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true });
    if (!opened.ok) {
      if (opened.reply.status === 422 || opened.reply.status === 400) notApplicable(`the server does not serve watch-list: ${describe(opened.reply)}`);
      expect(false, `a watch-list answered ${describe(opened.reply)}`);
    }
    ctx.defer(() => opened.stream.close());
    const gathered = await gather(opened.stream, WAIT_MS, (e) => e.type === "ERROR" || e.type === "BOOKMARK");
    const error = errorIn(gathered.events);
    expect(!error, () => `the watch-list failed: ERROR ${error?.code} ${error?.message}`);
    const end = gathered.events.at(-1);
    expect(end?.type === "BOOKMARK", () => `the watch-list sent ${gathered.events.length} events and ${gathered.stop === "end" ? "ended" : `nothing more for ${WAIT_MS / 1000} s`} without a BOOKMARK`);
    expect(end.object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true", `the first BOOKMARK of a watch-list is not annotated ${INITIAL_EVENTS_END}: "true"`);
    const at = versionOf(end.object, "the initial-events-end BOOKMARK");
    const initial = gathered.events.slice(0, -1);
    const notAdded = initial.find((e) => e.type !== "ADDED");
    expect(!notAdded, () => `the initial state holds a ${notAdded?.type}, not only ADDED`);
    const keys = initial.map((e) => keyOf(e.object));
    expect(new Set(keys).size === keys.length, "an object came twice in the initial state");
    for (const e of initial) expect(versionOf(e.object) <= at, `the initial state holds ${keyOf(e.object)} at ${e.object.metadata?.resourceVersion}, after its BOOKMARK's ${at}`);

    if (objects) {
      const expected = made.map(nameOf).sort();
      expect(JSON.stringify(keys.map((k) => k.split("/").at(-1)).sort()) === JSON.stringify(expected), `the initial state holds ${eventsText(initial)}, not ADDED ${expected.join(", ")}`);
      const last = versionOf(made.at(-1)!, "the last write");
      expect(at >= last, `the initial-events-end BOOKMARK is at ${at}, before the last write (${last})`);
      const next = await objects.create("d");
      const live = changes((await gather(opened.stream, WAIT_MS, (e) => e.type === "ERROR" || nameOf(e.object) === nameOf(next))).events);
      expect(
        live.length === 1 && live[0]?.type === "ADDED" && live[0].object.metadata?.resourceVersion === next.metadata?.resourceVersion,
        () => `after the initial state the watch-list got ${eventsText(live)}, not ADDED ${nameOf(next)}@${next.metadata?.resourceVersion}`,
      );
      return `${initial.length} ADDED, a BOOKMARK annotated ${INITIAL_EVENTS_END} at ${at}, then the next change`;
    }
    const exact = await ctx.api.get(pathOf(collection), { resourceVersion: String(at), resourceVersionMatch: "Exact" });
    if (exact.status !== 200) return `${initial.length} ADDED, a BOOKMARK annotated ${INITIAL_EVENTS_END} at ${at} (not compared with a list at exactly ${at}: ${describe(exact)})`;
    const listed = ((exact.json as { items?: Array<{ metadata?: { name?: string; namespace?: string } }> }).items ?? []).map(keyOf).sort();
    expect(JSON.stringify([...keys].sort()) === JSON.stringify(listed), `the initial state holds ${keys.length} objects, a list at exactly ${at} ${listed.length}`);
    return `${initial.length} ADDED (what a list at exactly ${at} holds), then a BOOKMARK annotated ${INITIAL_EVENTS_END} at ${at}`;
  },
};
