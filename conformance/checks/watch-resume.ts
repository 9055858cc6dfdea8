/**
 * @module
 * Exact resume: a watch from any resourceVersion it was given gets every change after it once,
 * in order, and nothing before it. With writes, the check makes a known history (an object
 * added, changed twice and deleted, then another added) and watches from its start and from
 * each change in it; without, it watches the observed collection's churn and resumes from its
 * first change.
 */
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { configMaps, type Collection } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, eventsText, eventText, gather, keyOf, list, nameOf, versionOf, watch } from "../reads.ts";

const WAIT_MS = 15_000;

export const watchResumeCheck: Check = {
  id: "watch-resume",
  title: "a watch from resourceVersion N gets exactly the changes after N, in order",
  async run(ctx) {
    if (!ctx.writer) return observed(ctx);
    const objects = ctx.objects();
    const collection = configMaps(ctx.namespace);
    const query = { labelSelector: objects.selector };
    // The list a client starts from (through a relay, the moment its hub starts watching).
    const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    const written = [await objects.create("x"), await objects.update("x"), await objects.update("x")];
    await objects.remove("x");
    const last = await objects.create("y");
    const isLast = (e: WatchEvent<KubeObject>) => e.type === "ADDED" && nameOf(e.object) === nameOf(last);

    const history = await changesFrom(ctx, collection, query, start, isLast);
    const expected = ["ADDED", "MODIFIED", "MODIFIED", "DELETED", "ADDED"].map((type, i) => `${type} ${i < 4 ? objects.name("x") : objects.name("y")}`);
    expect(JSON.stringify(history.map((e) => `${e.type} ${nameOf(e.object)}`)) === JSON.stringify(expected), () => `a watch from ${start} got ${eventsText(history)}, not ${expected.join(", ")}`);
    for (const [i, object] of [...written.entries(), [4, last] as const]) {
      expect(
        history[i]?.object.metadata?.resourceVersion === object.metadata?.resourceVersion,
        () => `a watch from ${start} got ${eventText(history[i]!)}, the write was at ${object.metadata?.resourceVersion}`,
      );
    }
    const rvs = history.map((e) => versionOf(e.object));
    expect(
      rvs.every((rv, i) => i === 0 || rv > (rvs[i - 1] as bigint)),
      () => `a watch's resourceVersions do not increase: ${eventsText(history)}`,
    );

    for (let i = 1; i < history.length; i++) {
      const from = history[i - 1]!.object.metadata!.resourceVersion!;
      const resumed = await changesFrom(ctx, collection, query, from, isLast);
      sameChanges(resumed, history.slice(i), from);
    }
    // From the last change: nothing until the next one.
    const tail = await objects.create("z");
    const resumed = await changesFrom(ctx, collection, query, last.metadata!.resourceVersion!, (e) => nameOf(e.object) === nameOf(tail));
    sameChanges(resumed, [{ type: "ADDED", object: tail }], last.metadata!.resourceVersion!);
    return `watches from ${history.length + 1} resourceVersions (the list's, then each change's) each got exactly the changes after it, in order`;
  },
};

/** Without writes: the collection's own churn, resumed from its first change. */
async function observed(ctx: Context): Promise<string> {
  const collection = ctx.observed;
  const start = (await list(ctx.api, collection)).metadata.resourceVersion;
  const stream = await watch(ctx.api, collection, { resourceVersion: start }, ctx.defer);
  const seen = changes((await gather(stream, ctx.observeSeconds * 1000, () => false)).events);
  stream.close();
  if (seen.length < 2) notApplicable(`saw ${seen.length} change${seen.length === 1 ? "" : "s"} to ${collection.name} in ${ctx.observeSeconds} s: resuming between changes needs 2 (or --allow-writes)`);
  const last = seen.at(-1)!;
  const from = seen[0]!.object.metadata!.resourceVersion!;
  const resumed = await changesFrom(ctx, collection, {}, from, (e) => same(e, last));
  sameChanges(resumed, seen.slice(1), from);
  return `${collection.name}: a watch from the first of ${seen.length} changes seen got the other ${seen.length - 1}, in order`;
}

/** The changes of a watch from `from`, up to the one `until` picks; fails if it does not come. */
async function changesFrom(ctx: Context, collection: Collection, query: Query, from: string, until: (e: WatchEvent<KubeObject>) => boolean): Promise<WatchEvent<KubeObject>[]> {
  const stream = await watch(ctx.api, collection, { ...query, resourceVersion: from }, ctx.defer);
  const gathered = await gather(stream, WAIT_MS, (e) => e.type === "ERROR" || until(e));
  stream.close();
  const got = changes(gathered.events);
  expect(
    gathered.stop === "until" && got.at(-1)?.type !== "ERROR",
    () => `a watch from ${from} got ${eventsText(got)}, then ${gathered.stop === "end" ? "ended" : `nothing for ${WAIT_MS / 1000} s`}, before the change it was waiting for`,
  );
  return got;
}

const same = (a: WatchEvent<KubeObject>, b: WatchEvent<KubeObject>): boolean =>
  a.type === b.type && keyOf(a.object) === keyOf(b.object) && a.object.metadata?.resourceVersion === b.object.metadata?.resourceVersion;

function sameChanges(got: WatchEvent<KubeObject>[], expected: WatchEvent<KubeObject>[], from: string): void {
  const first = expected.findIndex((e, i) => !got[i] || !same(got[i], e));
  expect(first < 0 && got.length === expected.length, () => {
    if (first < 0) return `a watch from ${from} got ${got.length - expected.length} more change(s) than happened after it: ${eventsText(got.slice(expected.length))}`;
    return `a watch from ${from} got ${got[first] ? eventText(got[first]) : "nothing"} where ${eventText(expected[first]!)} happened (${first} change(s) in): ${eventsText(got)}`;
  });
}
