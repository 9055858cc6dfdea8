/**
 * @module
 * A collection's list has the API server's shape: `{kind: <Kind>List, apiVersion, metadata:
 * {resourceVersion}, items}`, each item named (and in its namespace); with writes, exactly the
 * check's own objects.
 */
import type { KubeObject } from "../../src/k8s/types.ts";
import { apiVersion, configMaps, pathOf } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect } from "../outcome.ts";
import { describe, keyOf, nameOf, reached, version, versionOf } from "../reads.ts";

export const listCheck: Check = {
  id: "list",
  title: "a list is {kind: <Kind>List, apiVersion, metadata.resourceVersion, items}",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    const made = objects ? [await objects.create("a"), await objects.create("b")] : undefined;
    const expected = made?.map(nameOf);
    if (made) await reached(ctx.api, collection, query, versionOf(made[1] as KubeObject, "the write"));

    const reply = await ctx.api.get(pathOf(collection), query);
    expect(reply.status === 200, () => `GET ${pathOf(collection)} answered ${describe(reply)}`);
    const body = reply.json as { kind?: unknown; apiVersion?: unknown; metadata?: { resourceVersion?: string }; items?: unknown } | undefined;
    expect(body?.kind === `${collection.kind}List`, `the list's kind is ${JSON.stringify(body?.kind)}, not ${collection.kind}List`);
    expect(body.apiVersion === apiVersion(collection), `the list's apiVersion is ${JSON.stringify(body.apiVersion)}, not ${apiVersion(collection)}`);
    const rv = version(body.metadata?.resourceVersion, "the list");
    expect(Array.isArray(body.items), "the list has no items array");
    const items = body.items as Array<{ metadata?: { name?: string; namespace?: string } }>;
    for (const item of items) {
      expect(typeof item.metadata?.name === "string", "an item has no metadata.name");
      expect(!collection.namespaced || typeof item.metadata.namespace === "string", () => `item ${item.metadata?.name} of a namespaced collection has no metadata.namespace`);
    }
    if (expected) {
      const names = items.map(nameOf).sort();
      expect(JSON.stringify(names) === JSON.stringify(expected), `the list of the check's objects holds ${names.join(", ") || "nothing"}, not ${expected.join(", ")}`);
    }
    return `${body.kind} at resourceVersion ${rv}, ${items.length} item${items.length === 1 ? "" : "s"}${items.length > 0 ? ` (${keyOf(items[0] ?? {})}, …)` : ""}`;
  },
};
