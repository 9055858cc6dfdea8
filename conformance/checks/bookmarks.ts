/**
 * @module
 * Bookmarks: a watch that asked for them (`allowWatchBookmarks=true`) and has had no change is
 * sent a BOOKMARK once the collection has moved past where it started, before timeoutSeconds
 * ends it: the API server sends one 2 s before the end (and about once a minute), so a client
 * whose own timeout is the watch's (client-go's is) has it before the connection goes. It
 * carries only the kind, the apiVersion and a resourceVersion, and a watch from that
 * resourceVersion gets exactly the changes after it. With writes, the watch's selector stays
 * quiet while the check writes beside it, so a bookmark is owed; without, a bookmark that comes
 * is checked, and none coming proves nothing (none is owed until the collection moves past what
 * the watch was sent).
 */
import { INITIAL_EVENTS_END, type KubeObject, type WatchEvent } from "../../src/k8s/types.ts";
import { apiVersion, configMaps } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, errorIn, eventsText, gather, list, nameOf, version, versionOf, watch } from "../reads.ts";

/**
 * How long before the end the bookmark must come: the API server's is due 2 s before, and its
 * cacher finds it due on a tick of about a second, so it may come up to 1.25 s later than that.
 */
const BEFORE_END_MS = 500;

export const bookmarksCheck: Check = {
  id: "bookmarks",
  title: "a watch with allowWatchBookmarks gets a BOOKMARK before timeoutSeconds ends it, and resumes from it",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    // The watched selector holds nothing: only objects marked `side=watched` would be in it.
    const query = objects ? { labelSelector: `${objects.selector},side=watched` } : {};
    const seconds = ctx.bookmarkSeconds;
    const start = version((await list(ctx.api, collection, query)).metadata.resourceVersion, "the list");
    const started = Date.now();
    const stream = await watch(ctx.api, collection, { ...query, resourceVersion: String(start), allowWatchBookmarks: true, timeoutSeconds: seconds }, ctx.defer);
    const beside = objects ? versionOf(await objects.create("beside"), "the write") : undefined;
    const gathered = await gather(stream, (seconds + 10) * 1000, (e) => e.type === "ERROR");
    const error = errorIn(gathered.events);
    expect(!error, () => `the watch failed: ERROR ${error?.code} ${error?.message}`);
    expect(gathered.end !== undefined, `a watch with timeoutSeconds=${seconds} was still open ${seconds + 10} s after it began`);
    // A bookmark at the very version the watch started from tells it nothing new (the API server sends none such); the one owed is past it.
    const past = gathered.events.flatMap((e, i) => (e.type === "BOOKMARK" && versionOf(e.object, "the BOOKMARK") > start ? [{ event: e, arrived: gathered.arrived[i] as number }] : []));
    if (past.length === 0) {
      // Owed only once the collection moves past what the watch was sent, which only a write beside it makes sure of.
      if (beside === undefined) notApplicable(`no BOOKMARK in ${seconds} s of ${collection.name}: without writes the check cannot tell whether one was owed (--allow-writes)`);
      expect(
        false,
        `no BOOKMARK before timeoutSeconds=${seconds} ended a watch with allowWatchBookmarks=true, though the collection moved from resourceVersion ${start} to ${beside} (the API server sends one 2 s before the end, and about once a minute)`,
      );
    }
    const first = past[0] as { event: WatchEvent<KubeObject>; arrived: number };
    const lead = gathered.end.at - first.arrived;
    expect(
      lead >= BEFORE_END_MS,
      () =>
        `the first BOOKMARK past where the watch began came ${(lead / 1000).toFixed(1)} s before timeoutSeconds=${seconds} ended it: the API server sends one 2 s before the end, so a client whose own timeout is the watch's (client-go's) has it`,
    );
    for (const event of gathered.events.filter((e) => e.type === "BOOKMARK")) {
      const rv = checkBookmark(event, collection.kind, apiVersion(collection));
      expect(rv >= start, `a BOOKMARK at ${rv}, before where the watch started (${start})`);
    }
    // The latest, to resume from.
    const at = versionOf((past.at(-1) ?? first).event.object, "the BOOKMARK");
    const seen = changes(gathered.events);
    if (objects) expect(seen.length === 0, () => `the watch of a selector nothing matched got ${eventsText(seen)}`);
    for (const change of seen) expect(versionOf(change.object) <= at, `the BOOKMARK at ${at} came after a change at ${change.object.metadata?.resourceVersion}`);
    const inSeconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const after = `a BOOKMARK at ${first.event.object.metadata?.resourceVersion}, ${inSeconds(first.arrived - started)} into a watch with timeoutSeconds=${seconds}, ${inSeconds(lead)} before its end`;

    if (objects) {
      const resumed = await watch(ctx.api, collection, { ...query, resourceVersion: String(at) }, ctx.defer);
      const made = await objects.create("watched", { side: "watched" });
      const got = changes((await gather(resumed, 15_000, (e) => e.type === "ERROR" || nameOf(e.object) === nameOf(made))).events);
      expect(
        got.length === 1 && got[0]?.type === "ADDED" && got[0].object.metadata?.resourceVersion === made.metadata?.resourceVersion,
        () => `a watch from the BOOKMARK's ${at} got ${eventsText(got)}, not ADDED ${nameOf(made)}@${made.metadata?.resourceVersion}`,
      );
      return `${after}; a watch from it got exactly the next change`;
    }
    const resumed = await watch(ctx.api, collection, { resourceVersion: String(at), timeoutSeconds: 2 }, ctx.defer);
    const ended = await gather(resumed, 12_000, (e) => e.type === "ERROR");
    const failed = errorIn(ended.events);
    expect(!failed, () => `a watch from the BOOKMARK's ${at} failed: ERROR ${failed?.code} ${failed?.message}`);
    return `${after}; a watch from it ran without error`;
  },
};

/** A BOOKMARK carries the watched kind and a resourceVersion, and is not the end of initial events. */
function checkBookmark(event: WatchEvent<KubeObject>, kind: string, apiVersionOf: string): bigint {
  const object = event.object;
  expect(event.type === "BOOKMARK", `a ${event.type} where a BOOKMARK was expected`);
  expect(object.kind === kind && object.apiVersion === apiVersionOf, `the BOOKMARK's object is ${object.apiVersion}/${object.kind}, not ${apiVersionOf}/${kind}`);
  expect(object.metadata?.annotations?.[INITIAL_EVENTS_END] === undefined, `a BOOKMARK of a watch that did not ask for initial events is annotated ${INITIAL_EVENTS_END}`);
  return versionOf(object, "the BOOKMARK");
}
