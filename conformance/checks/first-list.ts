/**
 * @module
 * The first list of a selector nobody has asked the server for before (for a relay, a key it
 * holds nothing for: its first list comes from the upstream while the client waits) sees every
 * write made before it, whole or paged, each page at one resourceVersion. The selector is new on
 * every run: the objects carry a label whose value is the run's own.
 */
import type { KubeList, KubeObject } from "../../src/k8s/types.ts";
import { configMaps } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect } from "../outcome.ts";
import { list, nameOf, version, versionOf } from "../reads.ts";

const PAGE = 2;

export const firstListCheck: Check = {
  id: "first-list",
  title: "the first list of a selector never asked for before sees the writes made just before it, whole and paged",
  async run(ctx) {
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    // Two labels with this run's value: a selector for the whole list and one for the pages, neither asked for before.
    const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
    const labels = { whole: run, paged: run };
    const made: KubeObject[] = [];
    for (const suffix of ["a", "b", "c"]) made.push(await objects.create(suffix, labels));
    const expected = made.map(nameOf);
    const written = versionOf(made.at(-1) as KubeObject, "the last write");

    const whole = await list(ctx.api, collection, { labelSelector: `${objects.selector},whole=${run}` });
    expect(
      JSON.stringify(whole.items.map(nameOf)) === JSON.stringify(expected),
      () => `the first list of a new selector held ${whole.items.map(nameOf).join(", ") || "nothing"}, not the ${expected.length} objects written just before it (${expected.join(", ")})`,
    );
    expect(
      version(whole.metadata.resourceVersion, "the list") >= written,
      `the first list of a new selector was at resourceVersion ${whole.metadata.resourceVersion}, before the last write at ${written}`,
    );

    const pages: KubeList<KubeObject>[] = [];
    for (let token: string | undefined; pages.length === 0 || token; token = pages.at(-1)?.metadata.continue) {
      expect(pages.length <= expected.length, "the pages of a new selector's first list did not end");
      pages.push(await list(ctx.api, collection, { labelSelector: `${objects.selector},paged=${run}`, limit: PAGE, continue: token }));
    }
    const names = pages.flatMap((p) => p.items.map(nameOf));
    expect(JSON.stringify(names) === JSON.stringify(expected), `the pages of a new selector's first list held ${names.join(", ") || "nothing"}, not ${expected.join(", ")}`);
    const versions = new Set(pages.map((p) => p.metadata.resourceVersion));
    expect(versions.size === 1, () => `the pages of a new selector's first list were at ${versions.size} resourceVersions (${[...versions].join(", ")}), not one`);
    expect(
      version(pages[0]?.metadata.resourceVersion, "the first page") >= written,
      `the first page of a new selector was at resourceVersion ${pages[0]?.metadata.resourceVersion}, before the last write at ${written}`,
    );
    return `the first lists of two new selectors, one whole and one in ${pages.length} pages of at most ${PAGE}, each held the ${expected.length} objects written just before them`;
  },
};
