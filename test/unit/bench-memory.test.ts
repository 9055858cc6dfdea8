import { describe, expect, it } from "vitest";
import { keysTable, memoryGrowth, memoryGrowthText } from "../../bench/tables.ts";
import type { KeysRow } from "../../bench/rows.ts";

describe("the benchmark's memory growth per subscriber or key", () => {
  it("prints a negative figure as not measurable, never as negative memory", () => {
    expect(memoryGrowthText(-37.2)).toBe("not measurable (noise)");
    expect(memoryGrowth(-0.4)).toBe("not measurable (noise)");
  });

  it("prints zero and positive figures as measured, and leaves an unmeasured one unmeasured", () => {
    expect(memoryGrowthText(257)).toBe("257 KB");
    expect(memoryGrowthText(0)).toBe("0 KB");
    expect(memoryGrowth(36.1)).toBe(36.1);
    expect(memoryGrowth(null)).toBeNull();
  });

  it("the keys table shows the noise in its RSS column", () => {
    const row = { system: "relay", transport: "ws", keys: 100, subscribers: 300, upstreamWatches: 100, memPerKeyKB: -37.2, heapPerKeyKB: 34.4 } as unknown as KeysRow;
    const text = keysTable([row]);
    expect(text).toContain("not measurable (noise)");
    expect(text).toContain("34.4");
    expect(text).not.toContain("-37.2");
  });
});
