/**
 * @module
 * An object that leaves a watch's selector is DELETED for that watcher (with its last state in
 * the selector, at the change's resourceVersion), and one that comes back is ADDED, as the API
 * server's cacher tells it (`convertToWatchEvent`).
 */
import { configMaps } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect } from "../outcome.ts";
import { changes, eventsText, gather, list, nameOf, watch } from "../reads.ts";

export const selectorTransitionsCheck: Check = {
  id: "selector-transitions",
  title: "an object leaving a watch's selector is DELETED for it, and ADDED when it comes back",
  async run(ctx) {
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const query = { labelSelector: `${objects.selector},phase=in` };
    const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    const stream = await watch(ctx.api, collection, { ...query, resourceVersion: start }, ctx.defer);
    const entered = await objects.create("x", { phase: "in" });
    const left = await objects.update("x", { phase: "out" });
    await objects.update("x", { phase: "out", note: "unseen" });
    const back = await objects.update("x", { phase: "in" });
    const last = await objects.create("y", { phase: "in" });
    const got = changes((await gather(stream, 15_000, (e) => e.type === "ERROR" || nameOf(e.object) === nameOf(last))).events);
    const x = nameOf(entered);
    const expected = [
      `ADDED ${x}@${entered.metadata?.resourceVersion}`,
      `DELETED ${x}@${left.metadata?.resourceVersion}`,
      `ADDED ${x}@${back.metadata?.resourceVersion}`,
      `ADDED ${nameOf(last)}@${last.metadata?.resourceVersion}`,
    ];
    expect(
      JSON.stringify(got.map((e) => `${e.type} ${nameOf(e.object)}@${e.object.metadata?.resourceVersion}`)) === JSON.stringify(expected),
      () => `the watch got ${eventsText(got)}, not ${expected.join(", ")}`,
    );
    const deleted = got[1]!.object;
    expect(
      deleted.metadata?.labels?.phase === "in",
      `the DELETED of an object leaving the selector carries phase=${deleted.metadata?.labels?.phase}, not its last state in the selector (phase=in), as the API server sends it`,
    );
    return "leaving the selector: DELETED with its last state in it, at the change's resourceVersion; a change outside it: nothing; coming back: ADDED";
  },
};
