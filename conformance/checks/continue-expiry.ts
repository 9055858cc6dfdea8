/**
 * @module
 * A continue token whose snapshot the server no longer holds is a `410 Expired` (as after etcd
 * compacts past it) carrying, in `metadata.continue`, a token that goes on from the same key at
 * the latest state (apiserver `storage/etcd3/errors.go` `handleCompactedErrorForPaging`), and
 * following it lists the rest as it is now, its pages at one resourceVersion newer than the
 * first's: the Kubernetes conformance test "should support continue listing from the last key
 * if the original version has been compacted away, though the list is inconsistent". Waiting
 * out a real token's expiry takes minutes (etcd compacts every five), so the check provokes it
 * where the token has the API server's own shape (base64url of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":…}`, which the relay's tokens have too): the same token
 * with `rv` 1, a snapshot long gone on any server that has run a while. With writes, an object
 * made after the first page must be in the rest.
 */
import { decodeBase64Url, encodeBase64Url } from "../../src/k8s/base64url.ts";
import type { KubeList, KubeObject } from "../../src/k8s/types.ts";
import { configMaps, pathOf } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { describe, keyOf, list, nameOf, reached, statusOf, version, versionOf } from "../reads.ts";

export const continueExpiryCheck: Check = {
  id: "continue-expiry",
  title: "a continue token for a snapshot the server no longer holds: 410 Expired, with a token to list the rest as it is now",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    if (objects) {
      await objects.create("a");
      await reached(ctx.api, collection, query, versionOf(await objects.create("b"), "the write"));
    }
    const page = await list(ctx.api, collection, { ...query, limit: 1 });
    const token = page.metadata.continue;
    if (!token) notApplicable(`${collection.name} has fewer than 2 objects: no continue token to expire (or --allow-writes)`);
    let parsed: { v?: unknown; rv?: unknown; start?: unknown } | undefined;
    try {
      parsed = JSON.parse(decodeBase64Url(token) ?? "");
    } catch {
      parsed = undefined;
    }
    if (parsed?.v !== "meta.k8s.io/v1" || typeof parsed.rv !== "number" || typeof parsed.start !== "string") {
      notApplicable("the server's continue tokens are not the API server's encoding, so one cannot be made for a snapshot it no longer holds; their own expiry takes minutes to wait out");
    }
    const later = objects ? await objects.create("c") : undefined;
    if (later) await reached(ctx.api, collection, query, versionOf(later, "the write"));
    const expired = encodeBase64Url(JSON.stringify({ ...parsed, rv: 1 }));
    const reply = await ctx.api.get(pathOf(collection), { ...query, limit: 1, continue: expired });
    if (reply.status === 200) notApplicable("the server still serves a list at resourceVersion 1 (nothing compacted yet), so no continue token can be expired");
    const status = statusOf(reply);
    expect(reply.status === 410 && status?.reason === "Expired" && status.code === 410, () => `a continue token at resourceVersion 1 answered ${describe(reply)}, not 410 Expired`);
    const latest = (status.metadata as { continue?: string } | undefined)?.continue;
    expect(
      typeof latest === "string" && latest !== "",
      "a continue token at resourceVersion 1 answered 410 Expired without a token in metadata.continue to list the rest at the latest state, which the API server gives",
    );

    // The rest, as it is now, a page at a time.
    const pages: KubeList<KubeObject>[] = [];
    for (let next: string | undefined = latest; next; next = pages.at(-1)?.metadata.continue) {
      expect(pages.length < 1000, "the pages from the token for the latest state did not end within 1,000 pages");
      pages.push(await list(ctx.api, collection, { ...query, limit: 1, continue: next }));
    }
    const versions = new Set(pages.map((p) => p.metadata.resourceVersion));
    expect(versions.size === 1, () => `the pages from the token for the latest state were at ${versions.size} resourceVersions (${[...versions].join(", ")}), not one`);
    const at = version(pages[0]?.metadata.resourceVersion, "the page from the token for the latest state");
    const from = version(page.metadata.resourceVersion, "the first page");
    expect(at >= from, `the token for the latest state listed at resourceVersion ${at}, before the first page's ${from}`);
    const rest = pages.flatMap((p) => p.items.map(keyOf));
    const first = page.items.map(keyOf);
    expect(!rest.some((key) => first.includes(key)), () => `the rest from the token for the latest state repeated the first page's ${first.join(", ")}`);
    expect(new Set(rest).size === rest.length, () => `the rest from the token for the latest state held an object twice: ${rest.join(", ")}`);
    if (objects && later) {
      const names = pages.flatMap((p) => p.items.map(nameOf));
      const expected = [objects.name("b"), objects.name("c")];
      expect(
        JSON.stringify(names) === JSON.stringify(expected),
        `the token for the latest state listed ${names.join(", ") || "nothing"} after ${page.items.map(nameOf).join(", ")}, not ${expected.join(", ")} (the last made after the first page)`,
      );
      expect(at >= versionOf(later), `the token for the latest state listed at resourceVersion ${at}, before the write at ${versionOf(later)} it had to see`);
    }
    return `a continue token for resourceVersion 1: 410 Expired with a token for the latest state, which listed the ${rest.length} object${rest.length === 1 ? "" : "s"} after the first page at resourceVersion ${at}${objects ? ", the one made after that page included" : ""}`;
  },
};
