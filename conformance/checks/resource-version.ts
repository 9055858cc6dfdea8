/**
 * @module
 * `resourceVersion` and `resourceVersionMatch` on lists, and a resourceVersion ahead of the
 * server, as the API server's watch cache answers them: `0` is any state; `N` (and
 * `NotOlderThan`) a state at least as new as `N`; `Exact` the state at `N`, here the snapshot a
 * paged list just read; a match without a version, or `Exact` with `0`, is a 422; a version the
 * server has not reached is waited for (3 s), then a 504 `Too large resource version` (a list's
 * HTTP answer; a watch's, or its one ERROR event).
 */
import { isTooLargeResourceVersion } from "../../src/k8s/status.ts";
import type { Status } from "../../src/k8s/types.ts";
import { configMaps, pathOf, type Collection } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect } from "../outcome.ts";
import { describe, errorIn, gather, keyOf, list, queryText, reached, statusOf, version, versionOf } from "../reads.ts";

/** Far beyond any revision a cluster has written while the check runs. */
const AHEAD_BY = 1_000_000_000n;

export const resourceVersionCheck: Check = {
  id: "resource-version",
  title: "resourceVersion and resourceVersionMatch on lists: 0, N, NotOlderThan, Exact, invalid pairs (422), ahead (504)",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query: Query = objects ? { labelSelector: objects.selector } : {};
    if (objects) {
      await objects.create("a");
      await reached(ctx.api, collection, query, versionOf(await objects.create("b"), "the write"));
    }
    const current = version((await list(ctx.api, collection, query)).metadata.resourceVersion, "the list");

    await list(ctx.api, collection, { ...query, resourceVersion: "0" });
    for (const match of [undefined, "NotOlderThan"]) {
      const q = { ...query, resourceVersion: String(current), resourceVersionMatch: match };
      const rv = version((await list(ctx.api, collection, q)).metadata.resourceVersion, "the list");
      expect(rv >= current, `a list${queryText(q)} is at resourceVersion ${rv}, older than ${current}`);
    }

    // Exact, at a snapshot the server has just served and still serves (its continue token is good).
    const page = await list(ctx.api, collection, { ...query, limit: 1 });
    let exact = "Exact not tried: the collection has fewer than 2 objects";
    if (page.metadata.continue) {
      const at = page.metadata.resourceVersion;
      const q = { ...query, resourceVersion: at, resourceVersionMatch: "Exact" };
      const exactList = await list(ctx.api, collection, q);
      expect(exactList.metadata.resourceVersion === at, `a list${queryText(q)} is at resourceVersion ${exactList.metadata.resourceVersion}, not ${at}`);
      const first = exactList.items[0];
      expect(first && keyOf(first) === keyOf(page.items[0] ?? {}), `a list${queryText(q)} does not start with ${keyOf(page.items[0] ?? {})}, as the page of that snapshot did`);
      exact = `Exact at ${at}`;
    }

    for (const q of [{ resourceVersionMatch: "NotOlderThan" }, { resourceVersion: "0", resourceVersionMatch: "Exact" }]) {
      const reply = await ctx.api.get(pathOf(collection), { ...query, ...q });
      expect(reply.status === 422 && statusOf(reply)?.reason === "Invalid", () => `a list${queryText(q)} answered ${describe(reply)}, not 422 Invalid`);
    }

    const ahead = String(current + AHEAD_BY);
    const [listAhead, watchAhead] = await Promise.all([listFrom(ctx, collection, query, ahead), watchFrom(ctx, collection, query, ahead)]);
    return `0, ${current}, NotOlderThan, ${exact}; invalid pairs 422; ahead (${ahead}): a list ${listAhead}, a watch ${watchAhead}`;
  },
};

async function listFrom(ctx: Context, collection: Collection, query: Query, ahead: string): Promise<string> {
  const started = Date.now();
  const reply = await ctx.api.get(pathOf(collection), { ...query, resourceVersion: ahead });
  const status = statusOf(reply);
  expect(reply.status === 504 && isTooLargeResourceVersion(status), () => `a list from resourceVersion ${ahead}, ahead of the server, answered ${describe(reply)}, not 504 Too large resource version`);
  return `504 after ${seconds(started)} s`;
}

async function watchFrom(ctx: Context, collection: Collection, query: Query, ahead: string): Promise<string> {
  const started = Date.now();
  const opened = await ctx.api.watch(pathOf(collection), { ...query, resourceVersion: ahead });
  if (!opened.ok) {
    expect(
      opened.reply.status === 504 && isTooLargeResourceVersion(statusOf(opened.reply)),
      () => `a watch from resourceVersion ${ahead} answered ${describe(opened.reply)}, not 504 Too large resource version`,
    );
    return `504 after ${seconds(started)} s`;
  }
  ctx.defer(() => opened.stream.close());
  const gathered = await gather(opened.stream, 15_000, (e) => e.type === "ERROR");
  const error: Status | undefined = errorIn(gathered.events);
  expect(
    error?.code === 504 && isTooLargeResourceVersion(error),
    () => `a watch from resourceVersion ${ahead} got ${error ? `ERROR ${error.code} ${error.message}` : `no ERROR (${gathered.stop})`}, not 504 Too large resource version`,
  );
  return `ERROR 504 after ${seconds(started)} s`;
}

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
