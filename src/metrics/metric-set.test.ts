import { describe, expect, it } from "vitest";
import { inCatalog, MetricSet, type MetricValues } from "./metric-set.ts";

describe("counts saved by an earlier version", () => {
  it("keep the series the catalog still has, as it has them, and drop the others", () => {
    const set = new MetricSet();
    set.add("events", { cluster: "c" }, 5);
    set.observe("lagSeconds", { cluster: "c", transport: "http" }, 0.5);
    const current = set.toJSON();
    const saved: MetricValues = {
      values: {
        ...current.values,
        '["renamedAway",0]': 1,
        '["events","c","a label since removed"]': 2,
        '["lagSeconds","c","http"]': 3,
        "not a series": 4,
      },
      histograms: {
        ...current.histograms,
        '["lagSeconds","d","http"]': { buckets: [1, 2], sum: 1, count: 3 },
        '["events","c"]': { buckets: [1], sum: 1, count: 1 },
      },
    };
    expect(inCatalog(saved)).toEqual(current);
  });
});
