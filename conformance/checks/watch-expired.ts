/**
 * @module
 * A watch from a resourceVersion older than the server's history gets `410 Expired` (the API
 * server: one ERROR event, then the end), and the client recovers as client-go's reflector
 * does: it lists again and watches from the list's resourceVersion, which works.
 */
import { configMaps, pathOf } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, describe, errorIn, eventsText, gather, list, nameOf, statusOf, watch } from "../reads.ts";

export const watchExpiredCheck: Check = {
  id: "watch-expired",
  title: "a watch from a resourceVersion older than the history: 410 Expired; relist and watch again",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};

    let form: string;
    const opened = await ctx.api.watch(pathOf(collection), { ...query, resourceVersion: "1" });
    if (!opened.ok) {
      const status = statusOf(opened.reply);
      expect(opened.reply.status === 410 && status?.reason === "Expired", () => `a watch from resourceVersion 1 answered ${describe(opened.reply)}, not 410 Expired`);
      form = "HTTP 410 Expired";
    } else {
      ctx.defer(() => opened.stream.close());
      const gathered = await gather(opened.stream, 10_000, (e) => e.type === "ERROR");
      const error = errorIn(gathered.events);
      if (!error && changes(gathered.events).length > 0)
        notApplicable(`the server still holds its history from resourceVersion 1 (a watch from it sent ${eventsText(changes(gathered.events).slice(0, 2))}…)`);
      expect(error, () => `a watch from resourceVersion 1 got ${gathered.stop === "end" ? "no ERROR before it ended" : "nothing in 10 s"}, not 410 Expired`);
      expect(error.code === 410 && error.reason === "Expired", `a watch from resourceVersion 1 got ERROR ${error.code} ${error.reason}: ${error.message}, not 410 Expired`);
      const rest = await gather(opened.stream, 5_000);
      expect(rest.stop === "end" && rest.events.length === 0, () => `after its 410 the watch ${rest.stop === "end" ? `sent ${eventsText(rest.events)}` : "did not end within 5 s"}`);
      form = "ERROR 410 Expired, then the end";
    }

    const relisted = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    if (objects) {
      const stream = await watch(ctx.api, collection, { ...query, resourceVersion: relisted }, ctx.defer);
      const made = await objects.create("after");
      const gathered = await gather(stream, 15_000, (e) => e.type === "ERROR" || nameOf(e.object) === nameOf(made));
      const got = changes(gathered.events);
      expect(
        got.length === 1 && got[0]?.type === "ADDED" && got[0].object.metadata?.resourceVersion === made.metadata?.resourceVersion,
        () => `a watch from the relist (${relisted}) got ${eventsText(got)}, not ADDED ${nameOf(made)}@${made.metadata?.resourceVersion}`,
      );
      return `a watch from resourceVersion 1: ${form}; relisted at ${relisted}, a watch from there got the next change`;
    }
    const stream = await watch(ctx.api, collection, { ...query, resourceVersion: relisted, timeoutSeconds: 2 }, ctx.defer);
    const gathered = await gather(stream, 12_000);
    const error = errorIn(gathered.events);
    expect(!error && gathered.stop === "end", () => `a watch from the relist (${relisted}) ${error ? `failed: ERROR ${error.code} ${error.message}` : "did not end at timeoutSeconds=2"}`);
    return `a watch from resourceVersion 1: ${form}; relisted at ${relisted}, a watch from there ran without error`;
  },
};
