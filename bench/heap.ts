/**
 * @module
 * What the `big` and `hubs` scenarios say: the relay's JS heap against the platform's 128 MB and
 * the 64 MB a hub is held to, how fast lists stream from storage, what a hub stores per object.
 */
import { HEAP_LIMIT_MB } from "../scripts/heap-limit.ts";
import { heapPeak, type BigRow, type HubsRow, type Results } from "./rows.ts";
import { fmt, num, rowsOf } from "./tables.ts";
import { HEAP_TARGET_MB, ofLimit } from "./targets.ts";

const seconds = (ms: number) => (ms >= 10_000 ? `${fmt(ms / 1000).replace(/\.\d$/, "")} s` : ms >= 1000 ? `${fmt(Math.round(ms / 100) / 10)} s` : `${fmt(ms)} ms`);

export function heapSummary(results: Results): string[] {
  const out: string[] = [];
  const big = rowsOf<BigRow>(results, "big");
  const relay = big.filter((r) => r.system === "relay");
  const step = (prefix: string) => relay.find((r) => r.step.startsWith(prefix));
  const [ownFull, ownPaged] = ["full list", "paged list"].map((prefix) => big.find((r) => r.system === "direct" && r.step.startsWith(prefix)));
  const [first, coldFull, coldPaged] = ["first list", "cold full list", "cold paged list"].map(step);
  const top = heapPeak(relay);
  if (first && top) {
    const objects = first.objects;
    const fulls = relay.filter((r) => r.step.startsWith("full list") && r.MBps);
    const perObject = first.storageMB === null ? undefined : (first.storageMB * 2 ** 20) / objects;
    const against = (own: BigRow | undefined) => (own?.ms ? ` (the API server's own: ${seconds(own.ms)})` : "");
    const lists = [
      ...fulls.map(
        (r) =>
          `${r.step.replace("full list, ", "a full list (")}) ${seconds(r.ms ?? 0)}, ${num((r.bytes ?? 0) / 2 ** 20)} MB, first byte in ${fmt(r.firstByteMs ?? 0)} ms, ${num(r.MBps ?? 0)} MB/s${against(ownFull)}`,
      ),
      ...relay
        .filter((r) => r.step.startsWith("paged list"))
        .map((r) => `${r.step.replace(/^paged list \(limit=(\d+)\)$/, "in pages of $1")}: ${r.ms === null ? "–" : seconds(r.ms)}${against(ownPaged)}`),
    ];
    const cold = (r: BigRow | undefined, what: string) =>
      r === undefined ? "" : r.ms === null ? `; ${what} was ${r.note ?? "not answered"}` : `; ${what} had its first byte in ${fmt(r.firstByteMs ?? 0)} ms and its last in ${seconds(r.ms)}`;
    const ownFirst = ownFull?.ms ? ` (the API server's own full list: ${fmt(ownFull.firstByteMs ?? 0)} ms and ${seconds(ownFull.ms)})` : "";
    out.push(
      `**A collection of ${num(objects)} pods** (${ownFull?.bytes ? `${num(ownFull.bytes / 2 ** 20)} MB as the API server lists them, ` : ""}${fulls[0]?.bytes ? `${num(fulls[0].bytes / 2 ** 20)} MB as the relay serves them` : ""}) through one hub: ` +
        `its first list took ${first.ms === null ? "longer than the bench waited" : seconds(first.ms)}${ownPaged?.ms && first.ms ? ` against ${seconds(ownPaged.ms)} for the API server's own paged list (${(first.ms / ownPaged.ms).toFixed(2)}×), which sets its pace` : ""}` +
        `${cold(coldFull, "the full list that started it, answered as the hub listed,")}${coldFull?.ms ? ownFirst : ""}${cold(coldPaged, "a list paged as kubectl pages it, asked while the hub listed,")}; ` +
        `then ${lists.join("; ")}. ` +
        `The JS heap's high-water mark over every step was ${fmt(top.mb)} MB (${top.row.step}): ${ofLimit(top.mb)}, ${top.mb <= HEAP_TARGET_MB ? "within" : "**over**"} the ${HEAP_TARGET_MB} MB a hub is held to. ` +
        (perObject ? `The hub stored ${fmt(perObject / 1024)} KB per object and wrote ${fmt((first.rowsWritten ?? 0) / objects)} SQLite rows per object for its first list.` : ""),
    );
  }
  const hubs = rowsOf<HubsRow>(results, "hubs");
  const opening = hubs[0];
  const hubsTop = heapPeak(hubs);
  if (opening && hubsTop) {
    out.push(
      `**${num(opening.keys)} hubs in one isolate**, each of ${num(opening.objects)} pods (${num(opening.keys * opening.objects)} objects in all, ${num(opening.storageMB ?? 0)} MB of storage), a subscriber on each: ` +
        `every first list and initial state ${opening.ms === null ? "not done within the bench's wait" : `done in ${seconds(opening.ms)}`}; JS heap at most ${fmt(hubsTop.mb)} MB (${hubsTop.row.step}), ${ofLimit(hubsTop.mb)}: ${fmt((hubsTop.mb * 1024) / opening.keys)} KB per hub.`,
    );
  }
  return out;
}

export function bigReading(results: Results): string {
  const relay = rowsOf<BigRow>(results, "big").filter((r) => r.system === "relay" && r.heapMaxMB !== null);
  if (relay.length === 0) return "";
  const over = relay.filter((r) => (r.heapMaxMB ?? 0) > HEAP_TARGET_MB);
  const top = heapPeak(relay);
  return (
    `The JS heap is the relay's isolate's live heap after a full collection (\`HeapProfiler.collectGarbage\`, then \`Runtime.getHeapUsage\`, through the inspector), sampled every ${results.sizes.big.sampleMs / 1000} s while each step ran and once after it: ` +
    `\`JS heap max\` is the high-water mark of those samples. The platform resets an isolate over ${HEAP_LIMIT_MB} MB (the relay's runtime here is held to it, so a step over it would have failed); ` +
    `a hub is held to ${HEAP_TARGET_MB} MB so that objects sharing an isolate leave each other room. ` +
    (over.length === 0
      ? `Every step stayed within ${HEAP_TARGET_MB} MB: at most ${fmt(top?.mb ?? 0)} MB (${top?.row.step}).`
      : `**Over ${HEAP_TARGET_MB} MB:** ${over.map((r) => `${r.step} (${fmt(r.heapMaxMB ?? 0)} MB)`).join(", ")}.`) +
    " `lines in memory` is the window's newest lines the hub held (`LINE_MEMORY_BYTES` bounds them per isolate); `rows written` is the hub's own count of SQLite rows written during the step (`/_relay/stats`), which a restart starts again from 0."
  );
}
