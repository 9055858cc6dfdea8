/**
 * @module
 * `timeoutSeconds` ends a watch cleanly when it is reached: the stream ends (no ERROR, no
 * broken connection), not before and not long after.
 */
import { configMaps } from "../collection.ts";
import type { Check } from "../context.ts";
import { expect } from "../outcome.ts";
import { errorIn, gather, list, watch } from "../reads.ts";

const SECONDS = 2;
/** How late an end may be: a loaded server's timers, the round trip. */
const SLACK_MS = 5000;

export const timeoutSecondsCheck: Check = {
  id: "timeout-seconds",
  title: `a watch with timeoutSeconds=${SECONDS} ends cleanly after ${SECONDS} s`,
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    const started = Date.now();
    const stream = await watch(ctx.api, collection, { ...query, resourceVersion: start, timeoutSeconds: SECONDS }, ctx.defer);
    const gathered = await gather(stream, SECONDS * 1000 + SLACK_MS);
    const elapsed = Date.now() - started;
    const error = errorIn(gathered.events);
    expect(!error, () => `the watch failed: ERROR ${error?.code} ${error?.message}`);
    expect(gathered.stop === "end", `the watch was still open ${(elapsed / 1000).toFixed(1)} s after it started with timeoutSeconds=${SECONDS}`);
    expect(!gathered.end?.error, () => `the watch's connection broke instead of ending: ${gathered.end?.error}`);
    expect(elapsed >= SECONDS * 1000 - 500, `the watch ended after ${(elapsed / 1000).toFixed(1)} s, before timeoutSeconds=${SECONDS}`);
    return `ended cleanly after ${(elapsed / 1000).toFixed(1)} s`;
  },
};
