/**
 * @module
 * A read without `resourceVersion` is a consistent read: it sees every write made before it
 * (the API server serves it at etcd's current revision). The check writes, then at once lists,
 * gets and watch-lists (`sendInitialEvents` without a resourceVersion, whose initial events end
 * at the current revision too), ten times over, through a server that has been serving the
 * collection since the first round (a relay's hub is live from then on, the case where its watch
 * of the upstream could be behind).
 */
import { INITIAL_EVENTS_END, type KubeObject } from "../../src/k8s/types.ts";
import { configMaps, itemPath } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import { expect } from "../outcome.ts";
import { describe, errorIn, gather, list, nameOf, version, versionOf, watch } from "../reads.ts";

const ROUNDS = 10;

export const consistentReadCheck: Check = {
  id: "consistent-read",
  title: "a list, get or watch-list without resourceVersion sees a write made just before it",
  async run(ctx) {
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const query = { labelSelector: objects.selector };
    const name = nameOf(await objects.create("x"));
    await list(ctx.api, collection, query);
    const misses: string[] = [];
    /** Whether the server serves watch-lists (the watch-list check says more when it does not). */
    let watchLists = true;
    let reads = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const written = versionOf(await objects.update("x"), "the write");
      const listed = await list(ctx.api, collection, query);
      const item = listed.items.find((o) => nameOf(o) === name);
      const listedRv = version(listed.metadata.resourceVersion, "the list");
      if (listedRv < written || !item || versionOf(item) !== written) {
        misses.push(`a list at resourceVersion ${listedRv} (the object at ${item?.metadata?.resourceVersion ?? "none"}) after a write at ${written}`);
      }
      const got = await ctx.api.get(itemPath(collection, ctx.namespace, name));
      // Not found: a read of a state from before its making, the first round's write.
      expect(got.status === 200 || got.status === 404, () => `GET of ${name} answered ${describe(got)}`);
      const gotRv = got.status === 404 ? undefined : version((got.json as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion, "the get");
      if (gotRv !== written) misses.push(`a get ${gotRv === undefined ? "answered 404 NotFound" : `at resourceVersion ${gotRv}`} after a write at ${written}`);
      reads += 2;
      if (!watchLists) continue;
      const initial = await watchList(ctx, query);
      if (!initial) {
        watchLists = false;
        continue;
      }
      reads++;
      const state = initial.objects.find((o) => nameOf(o) === name);
      if (initial.rv < written || !state || versionOf(state) !== written) {
        misses.push(`a watch-list's initial events ending at resourceVersion ${initial.rv} (the object at ${state?.metadata?.resourceVersion ?? "none"}) after a write at ${written}`);
      }
    }
    expect(misses.length === 0, () => `${misses.length} of ${reads} reads without resourceVersion missed the write made just before them; the first: ${misses[0]}`);
    return `${ROUNDS} lists, ${ROUNDS} gets${watchLists ? ` and ${ROUNDS} watch-lists` : " (watch-lists not served)"} without resourceVersion each saw the write made just before it`;
  },
};

/** A watch-list's initial events and the resourceVersion its initial-events-end bookmark gives; `undefined` if the server does not end them so. */
async function watchList(ctx: Context, query: { labelSelector: string }): Promise<{ objects: KubeObject[]; rv: bigint } | undefined> {
  const stream = await watch(ctx.api, configMaps(ctx.namespace), { ...query, sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true }, ctx.defer);
  try {
    const gathered = await gather(stream, 10_000, (e) => e.type === "ERROR" || (e.type === "BOOKMARK" && e.object.metadata?.annotations?.[INITIAL_EVENTS_END] === "true"));
    const end = gathered.events.at(-1);
    if (gathered.stop !== "until" || errorIn(gathered.events) || !end) return undefined;
    return { objects: gathered.events.filter((e) => e.type === "ADDED").map((e) => e.object), rv: versionOf(end.object, "the initial-events-end BOOKMARK") };
  } finally {
    stream.close();
  }
}
