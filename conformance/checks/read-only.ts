/**
 * @module
 * A read-only server (a relay) answers every write with `405 MethodNotAllowed`, as a Status. It
 * is asked with writes that change nothing anywhere: a dry-run DELETE and PATCH of a ConfigMap
 * that does not exist. A server that takes writes answers them 404 (or 403 without the right):
 * not applicable.
 */
import { configMaps, itemPath } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { describe, statusOf } from "../reads.ts";

const ABSENT = "conformance-read-only-absent";

export const readOnlyCheck: Check = {
  id: "read-only",
  title: "writes are refused with 405 MethodNotAllowed (a read-only relay)",
  async run(ctx) {
    const namespace = ctx.namespace ?? "default";
    const path = itemPath(configMaps(namespace), namespace, ABSENT);
    const query = { dryRun: "All" };
    const deleted = await ctx.api.request("DELETE", path, { query });
    const patched = await ctx.api.request("PATCH", path, { query, body: {}, contentType: "application/merge-patch+json" });
    const refused = [deleted, patched].filter((r) => r.status === 405);
    if (refused.length === 0 && [deleted, patched].every((r) => [401, 403, 404].includes(r.status))) {
      notApplicable(`the server takes writes: a DELETE of an absent ConfigMap answered ${describe(deleted)}`);
    }
    for (const [verb, reply] of [
      ["DELETE", deleted],
      ["PATCH", patched],
    ] as const) {
      const status = statusOf(reply);
      expect(reply.status === 405 && status?.code === 405 && status.reason === "MethodNotAllowed", () => `a ${verb} answered ${describe(reply)}, not 405 MethodNotAllowed (as a Status)`);
    }
    return "DELETE and PATCH: 405 MethodNotAllowed, as a Status";
  },
};
