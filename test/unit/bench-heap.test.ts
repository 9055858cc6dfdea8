/**
 * The heap targets of a big collection's hub and of many hubs in one isolate: judged on every
 * step's high-water mark, and missed by a step over the limit or one that never finished.
 */
import { describe, expect, it } from "vitest";
import type { BigRow, HubsRow } from "../../bench/rows.ts";
import { checkTargets } from "../../bench/targets.ts";

const step = (name: string, heapMaxMB: number, fields: Partial<BigRow> = {}): BigRow => ({
  scenario: "big",
  system: "relay",
  transport: "http",
  step: name,
  objects: 200_000,
  ms: 1000,
  heapMaxMB,
  heapAfterMB: heapMaxMB / 2,
  rssMaxMB: 200,
  rowsWritten: 0,
  storageMB: 900,
  linesMB: 0,
  ...fields,
});
const target = (rows: Array<BigRow | HubsRow>, starts: string) => checkTargets(rows).find((t) => t.target.startsWith(starts));

describe("the heap targets", () => {
  it("holds a big collection's hub to 64 MB at its highest step, and names that step", () => {
    const within = target([step("first list", 40), step("relist after a 410", 63.9)], "big, 200k pods: JS heap");
    expect(within?.met).toBe(true);
    expect(within?.measured).toMatch(/^at most 63\.9 MB \(relist after a 410\), 49\.9% of the platform's 128 MB$/);
    const over = target([step("first list", 40), step("storm", 70)], "big, 200k pods: JS heap");
    expect(over?.met).toBe(false);
    expect(over?.measured).toContain("(storm)");
  });

  it("misses the heap target when a step did not finish, whatever its heap", () => {
    const unfinished = target([step("first list", 10, { ms: null })], "big, 200k pods: JS heap");
    expect(unfinished?.met).toBe(false);
    expect(unfinished?.measured).toContain("unfinished: first list");
  });

  it("wants the first bytes of both full lists within 100 ms", () => {
    const rows = [step("full list, resourceVersion=0", 5, { firstByteMs: 12 }), step("full list, consistent read", 5, { firstByteMs: 140 })];
    const first = target(rows, "big, 200k pods: the first bytes");
    expect(first?.met).toBe(false);
    expect(first?.measured).toBe("resourceVersion=0: 12 ms; consistent read: 140 ms");
  });

  it("holds many hubs in one isolate to the platform's 128 MB", () => {
    const hubs: HubsRow = {
      scenario: "hubs",
      system: "relay",
      transport: "ws",
      step: "opening",
      keys: 1000,
      objects: 1000,
      subscribers: 1000,
      ms: 5000,
      upstreamWatches: 1000,
      heapMaxMB: 90,
      heapAfterMB: 80,
      rssMaxMB: 900,
      rowsWritten: 3e6,
      storageMB: 4000,
      linesMB: 16,
    };
    expect(target([hubs], "hubs, 1,000 keys × 1,000 pods")?.met).toBe(true);
    expect(target([{ ...hubs, heapMaxMB: 129 }], "hubs, 1,000 keys × 1,000 pods")?.met).toBe(false);
  });
});
