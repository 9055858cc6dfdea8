import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { exposition } from "./exposition.ts";
import { MetricSet } from "./metric-set.ts";

describe("the Prometheus text format", () => {
  it("escapes label values a parser reads back exactly, and exposes known outcomes at 0 per cluster", () => {
    const set = new MetricSet();
    const cluster = 'a "quoted"\\back\nslashed';
    set.add("events", { cluster }, 5);
    set.add("resumes", { cluster, outcome: "window" }, 2);
    const families = parsePrometheusTextFormat(exposition(set.toJSON()));
    const events = families.find((f) => f.name === "kube_watch_relay_events_total");
    expect(events).toMatchObject({ type: "COUNTER", metrics: [{ labels: { cluster }, value: "5" }] });
    const resumes = families.find((f) => f.name === "kube_watch_relay_resumes_total")!.metrics;
    expect(resumes.map((m) => [m.labels?.outcome, m.value]).sort()).toEqual([
      ["compacted", "0"],
      ["expired", "0"],
      ["too_large", "0"],
      ["window", "2"],
    ]);
  });

  it("writes histograms as cumulative buckets with +Inf, _sum and _count", () => {
    const set = new MetricSet();
    for (const v of [0.05, 0.7, 400]) set.observe("lagSeconds", { cluster: "c", transport: "http" }, v);
    const text = exposition(set.toJSON());
    expect(text).toContain('kube_watch_relay_subscriber_lag_seconds_bucket{cluster="c",transport="http",le="0.1"} 1');
    expect(text).toContain('kube_watch_relay_subscriber_lag_seconds_bucket{cluster="c",transport="http",le="1"} 2');
    expect(text).toContain('kube_watch_relay_subscriber_lag_seconds_bucket{cluster="c",transport="http",le="300"} 2');
    expect(text).toContain('kube_watch_relay_subscriber_lag_seconds_bucket{cluster="c",transport="http",le="+Inf"} 3');
    expect(text).toContain('kube_watch_relay_subscriber_lag_seconds_count{cluster="c",transport="http"} 3');
    expect(parsePrometheusTextFormat(text)[0]).toMatchObject({ type: "HISTOGRAM" });
  });
});
