/**
 * @module
 * A read without `resourceVersion` is a consistent read: it sees every write made before it
 * (the API server serves it at etcd's current revision). The check writes, then at once lists
 * and gets, ten times over, through a server that has been serving the collection since the
 * first round (a relay's hub is live from then on, the case where it could be behind).
 */
import { configMaps, itemPath } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect } from "../outcome.ts";
import { describe, list, nameOf, version, versionOf } from "../reads.ts";

const ROUNDS = 10;

export const consistentReadCheck: Check = {
  id: "consistent-read",
  title: "a list or get without resourceVersion sees a write made just before it",
  async run(ctx) {
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const query = { labelSelector: objects.selector };
    const name = nameOf(await objects.create("x"));
    await list(ctx.api, collection, query);
    const misses: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const written = versionOf(await objects.update("x"), "the write");
      const listed = await list(ctx.api, collection, query);
      const item = listed.items.find((o) => nameOf(o) === name);
      const listedRv = version(listed.metadata.resourceVersion, "the list");
      if (listedRv < written || !item || versionOf(item) !== written) {
        misses.push(`a list at resourceVersion ${listedRv} (the object at ${item?.metadata?.resourceVersion ?? "none"}) after a write at ${written}`);
      }
      const got = await ctx.api.get(itemPath(collection, ctx.namespace, name));
      expect(got.status === 200, () => `GET of ${name} answered ${describe(got)}`);
      const gotRv = version((got.json as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion, "the get");
      if (gotRv !== written) misses.push(`a get at resourceVersion ${gotRv} after a write at ${written}`);
    }
    expect(misses.length === 0, () => `${misses.length} of ${ROUNDS * 2} reads without resourceVersion missed the write made just before them; the first: ${misses[0]}`);
    return `${ROUNDS} lists and ${ROUNDS} gets without resourceVersion each saw the write made just before it`;
  },
};
