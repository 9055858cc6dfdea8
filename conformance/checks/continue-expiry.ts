/**
 * @module
 * A continue token whose snapshot the server no longer holds is a `410 Expired` (as after etcd
 * compacts past it). Waiting out a real token's expiry takes minutes (etcd compacts every five),
 * so the check provokes it where the token has the API server's own shape (base64url of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":…}`, which the relay's tokens have too): the same
 * token with `rv` 1, a snapshot long gone on any server that has run a while.
 */
import { decodeBase64Url, encodeBase64Url } from "../../src/k8s/base64url.ts";
import { configMaps, pathOf } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { describe, list, statusOf } from "../reads.ts";

export const continueExpiryCheck: Check = {
  id: "continue-expiry",
  title: "a continue token for a snapshot the server no longer holds: 410 Expired",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    if (objects) {
      await objects.create("a");
      await objects.create("b");
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
    const expired = encodeBase64Url(JSON.stringify({ ...parsed, rv: 1 }));
    const reply = await ctx.api.get(pathOf(collection), { ...query, limit: 1, continue: expired });
    if (reply.status === 200) notApplicable("the server still serves a list at resourceVersion 1 (nothing compacted yet), so no continue token can be expired");
    const status = statusOf(reply);
    expect(reply.status === 410 && status?.reason === "Expired" && status.code === 410, () => `a continue token at resourceVersion 1 answered ${describe(reply)}, not 410 Expired`);
    const inconsistent = (status.metadata as { continue?: string } | undefined)?.continue
      ? "with a token to go on from the latest state"
      : "without a token to go on from the latest state (the API server offers one)";
    return `a continue token for resourceVersion 1: 410 Expired, ${inconsistent}`;
  },
};
