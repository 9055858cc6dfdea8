/**
 * @module
 * `limit` and `continue`: the pages of a list are one snapshot, in key order, each at the first
 * page's resourceVersion, whatever changes meanwhile; the last has no continue token; a
 * `remainingItemCount`, when given, counts what is left. With writes, an object made between the
 * pages is not in them; without, the pages are compared with a list at exactly their version.
 */
import type { KubeList, KubeObject } from "../../src/k8s/types.ts";
import { configMaps, pathOf, type Collection } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect, notApplicable } from "../outcome.ts";
import { describe, keyOf, list, nameOf, queryText, reached, versionOf } from "../reads.ts";

const PAGE = 2;

export const pagingCheck: Check = {
  id: "paging",
  title: "limit/continue pages are one snapshot, in key order, at one resourceVersion",
  async run(ctx) {
    if (!ctx.writer) return observed(ctx);
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const query = { labelSelector: objects.selector };
    const made: KubeObject[] = [];
    for (const n of ["1", "2", "3", "4", "5"]) made.push(await objects.create(n));
    const expected = made.map(nameOf);
    await reached(ctx.api, collection, query, versionOf(made[4] as KubeObject, "the write"));
    const pages = await pagesOf(ctx, collection, query, PAGE, async () => {
      await objects.create("6");
    });
    const names = pages.flatMap((p) => p.items.map(nameOf));
    expect(JSON.stringify(names) === JSON.stringify(expected), `the pages held ${names.join(", ")}, not the ${expected.length} objects of their snapshot (${expected.join(", ")}), in order`);
    return `${pages.length} pages of at most ${PAGE} at resourceVersion ${pages[0]?.metadata.resourceVersion} held the ${expected.length} objects of that snapshot in order, not the one made between pages`;
  },
};

/** Without writes: the observed collection's pages against a list at exactly their version. */
async function observed(ctx: Context): Promise<string> {
  const collection = ctx.observed;
  const all = await list(ctx.api, collection);
  if (all.items.length < 2) notApplicable(`${collection.name} has ${all.items.length} object${all.items.length === 1 ? "" : "s"}: paging needs 2 (or --allow-writes)`);
  const limit = Math.max(1, Math.floor(all.items.length / 3));
  const pages = await pagesOf(ctx, collection, {}, limit);
  const keys = pages.flatMap((p) => p.items.map(keyOf));
  expect(new Set(keys).size === keys.length, "an object came twice in the pages of one list");
  const at = pages[0]?.metadata.resourceVersion ?? "";
  const reply = await ctx.api.get(pathOf(collection), { resourceVersion: at, resourceVersionMatch: "Exact" });
  if (reply.status !== 200)
    return `${pages.length} pages of at most ${limit} at resourceVersion ${at}, ${keys.length} objects, none twice (not compared with a list at exactly ${at}: ${describe(reply)})`;
  const exact = ((reply.json as KubeList<KubeObject>).items ?? []).map(keyOf);
  expect(JSON.stringify(keys) === JSON.stringify(exact), `the pages at resourceVersion ${at} held ${keys.length} objects, a list at exactly ${at} ${exact.length}, or in another order`);
  return `${pages.length} pages of at most ${limit} at resourceVersion ${at} held what a list at exactly ${at} holds, in its order`;
}

/** Every page of a list, checked page by page; `between` runs after the first. */
async function pagesOf(ctx: Context, collection: Collection, query: Query, limit: number, between?: () => Promise<void>): Promise<KubeList<KubeObject>[]> {
  const pages: KubeList<KubeObject>[] = [];
  let token: string | undefined;
  do {
    const q = { ...query, limit, continue: token };
    const page = await list(ctx.api, collection, q);
    const first = pages[0];
    expect(page.items.length <= limit, `a page of a list${queryText(q)} holds ${page.items.length} items, more than its limit`);
    if (first)
      expect(
        page.metadata.resourceVersion === first.metadata.resourceVersion,
        `page ${pages.length + 1} is at resourceVersion ${page.metadata.resourceVersion}, the first at ${first.metadata.resourceVersion}`,
      );
    pages.push(page);
    token = page.metadata.continue || undefined;
    if (pages.length === 1) await between?.();
    expect(pages.length <= 1000, "the list did not end after 1000 pages");
  } while (token);
  pages.forEach((page, i) => {
    const remaining = page.metadata.remainingItemCount;
    const left = pages.slice(i + 1).reduce((n, p) => n + p.items.length, 0);
    if (remaining !== undefined && remaining !== null) expect(remaining === left, `page ${i + 1} says ${remaining} items remain, and ${left} followed`);
  });
  const keys = pages.flatMap((p) => p.items.map(keyOf));
  const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  expect(JSON.stringify(keys) === JSON.stringify(sorted), `the pages are not in key order: ${keys.slice(0, 6).join(", ")}…`);
  return pages;
}
