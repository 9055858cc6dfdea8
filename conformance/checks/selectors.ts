/**
 * @module
 * Label and field selectors select exactly what they say, on lists and watches: `=`, `!=`,
 * `in`, `notin`, exists and `!` on labels, `metadata.name` `=` and `!=`, and
 * `metadata.namespace` across all namespaces. With writes, against objects the check labels;
 * without, against what the observed collection holds.
 */
import type { KubeObject } from "../../src/k8s/types.ts";
import { allNamespaces, configMaps, type Collection } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, eventsText, gather, keyOf, list, nameOf, queryText, versionOf, watch } from "../reads.ts";

export const selectorsCheck: Check = {
  id: "selectors",
  title: "label and field selectors select exactly their objects, on lists and watches",
  async run(ctx) {
    if (!ctx.writer) return observed(ctx);
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const base = objects.selector;
    const made = [await objects.create("1", { tier: "a", idx: "1" }), await objects.create("2", { tier: "b", idx: "2" }), await objects.create("3", { tier: "c" })];
    const [one, two, three] = made as [KubeObject, KubeObject, KubeObject];
    const cases: Array<[Query, KubeObject[]]> = [
      [{ labelSelector: `${base},tier in (a,b),idx` }, [one, two]],
      [{ labelSelector: `${base},tier notin (a),!idx` }, [three]],
      [{ labelSelector: `${base},tier!=b`, fieldSelector: `metadata.name!=${nameOf(one)}` }, [three]],
      [{ labelSelector: base, fieldSelector: `metadata.name=${nameOf(two)}` }, [two]],
    ];
    for (const [query, expected] of cases) await selects(ctx, collection, query, expected);
    await selects(ctx, allNamespaces(collection), { labelSelector: base, fieldSelector: `metadata.namespace=${ctx.namespace}` }, [one, two, three]);

    // A watch with the metadata.name selector: another object's change is not its.
    const [query] = cases[3]!;
    const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    const stream = await watch(ctx.api, collection, { ...query, resourceVersion: start }, ctx.defer);
    await objects.update("1");
    const changed = await objects.update("2");
    const got = changes((await gather(stream, 15_000, (e) => e.type === "ERROR" || nameOf(e.object) === nameOf(two))).events);
    expect(
      got.length === 1 && got[0]?.type === "MODIFIED" && got[0].object.metadata?.resourceVersion === changed.metadata?.resourceVersion,
      () => `a watch${queryText(query)} got ${eventsText(got)}, not only MODIFIED ${nameOf(two)}@${changed.metadata?.resourceVersion}`,
    );
    return `${cases.length + 1} lists (=, !=, in, notin, exists, !; metadata.name = and !=; metadata.namespace across namespaces) and a watch selected exactly their objects`;
  },
};

/**
 * A list of `query` selects `expected`: not older than the last of them (on a relay each selector
 * is a key of its own, each as far as its own watch has got, and one whose watch has not carried
 * a write outside it may not know of that write's resourceVersion yet).
 */
async function selects(ctx: Context, collection: Collection, query: Query, expected: KubeObject[]): Promise<void> {
  // Made in this order: the last is the newest.
  const written = versionOf(expected.at(-1) as KubeObject, "the write");
  const names = (await list(ctx.api, collection, { ...query, resourceVersion: String(written), resourceVersionMatch: "NotOlderThan" })).items.map(nameOf).sort();
  const wanted = expected.map(nameOf).sort();
  expect(JSON.stringify(names) === JSON.stringify(wanted), `a list${queryText(query)} selected ${names.join(", ") || "nothing"}, not ${wanted.join(", ")}`);
}

/** Without writes: selectors made from what the observed collection holds. */
async function observed(ctx: Context): Promise<string> {
  const collection = ctx.observed;
  const items = (await list(ctx.api, collection)).items;
  const item = items[0];
  if (!item) notApplicable(`${collection.name} is empty: nothing to select (or --allow-writes)`);
  const fields = collection.namespaced && item.metadata?.namespace ? `metadata.name=${nameOf(item)},metadata.namespace=${item.metadata.namespace}` : `metadata.name=${nameOf(item)}`;
  const byName = (await list(ctx.api, collection, { fieldSelector: fields })).items;
  expect(byName.length <= 1 && byName.every((o) => keyOf(o) === keyOf(item)), `a list?fieldSelector=${fields} selected ${byName.map(keyOf).join(", ")}`);
  const labelled = items.find((o) => Object.keys(o.metadata?.labels ?? {}).length > 0);
  if (!labelled) return `fieldSelector=${fields} selected ${byName.length} object; no object has labels to select by`;
  const [key, value] = Object.entries(labelled.metadata?.labels ?? {})[0]!;
  const withLabel = (await list(ctx.api, collection, { labelSelector: `${key}=${value}` })).items;
  expect(withLabel.length > 0 && withLabel.every((o) => o.metadata?.labels?.[key] === value), `a list?labelSelector=${key}=${value} selected an object without that label, or nothing`);
  const without = (await list(ctx.api, collection, { labelSelector: `!${key}` })).items;
  expect(
    without.every((o) => o.metadata?.labels?.[key] === undefined),
    `a list?labelSelector=!${key} selected an object labelled ${key}`,
  );
  return `fieldSelector=${fields}, labelSelector=${key}=${value} (${withLabel.length}) and !${key} (${without.length}) selected only matching objects`;
}
