/**
 * @module
 * Resources without watch (metrics.k8s.io, as the simulator serves it like metrics-server):
 * lists and gets from a list shared for LIST_CACHE_SECONDS (2 s in the tests), one upstream
 * list per key per interval however many clients ask, each answer saying where it came from;
 * a watch is the API server's 405; what the cache saved is in /metrics.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject, Status } from "../../src/k8s/types.ts";
import { metricValue, scrape } from "./metrics-helpers.ts";
import { eventually, relay, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();
const METRICS = "/apis/metrics.k8s.io/v1beta1";

/** A label selector every pod matches but no other test uses: a key of this test's own, and what marks its upstream requests. */
function ownKey(): { query: string; marker: string } {
  const marker = uniqueNamespace("own");
  return { query: `labelSelector=${encodeURIComponent(`app!=${marker}`)}`, marker };
}

/** The upstream lists the simulator saw of a path whose query has `marker`, since `since`. */
async function upstreamLists(path: string, marker: string, since: number): Promise<number> {
  return (await sim.requests(path, since)).requests.filter((r) => r.verb === "list" && r.query.includes(marker)).length;
}

type MetricsList = { kind: string; apiVersion: string; items: Array<KubeObject & { containers?: Array<{ name: string; usage: { cpu: string; memory: string } }> }> };

describe("resources without watch (metrics.k8s.io)", () => {
  it("N clients in an interval cost one upstream list; the next interval, one more; each answer says where it came from", async () => {
    const path = `${METRICS}/pods`;
    const { query, marker } = ownKey();
    const { next } = await sim.requests(path);
    const responses = await Promise.all(Array.from({ length: 8 }, () => relay(`${path}?${query}`)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(bodies).size).toBe(1);
    const list = JSON.parse(bodies[0] as string) as MetricsList;
    expect([list.kind, list.apiVersion]).toEqual(["PodMetricsList", "metrics.k8s.io/v1beta1"]);
    expect(list.items.length).toBeGreaterThan(0);
    expect(list.items[0]?.containers?.[0]?.usage.cpu).toMatch(/^\d+n$/);
    const statuses = responses.map((r) => r.headers.get("cache-status") as string);
    expect(statuses.filter((s) => s.startsWith("kube-watch-relay; fwd=miss; stored; ttl="))).toHaveLength(1);
    for (const s of statuses) expect(s).toMatch(/^kube-watch-relay; (hit|fwd=miss; (stored|collapsed)); ttl=[0-2]$/);
    for (const r of responses) expect(r.headers.get("age")).toMatch(/^[0-2]$/);
    expect(await upstreamLists(path, marker, next)).toBe(1);

    // Later in the interval: from the cache, with its age.
    const later = await relay(`${path}?${query}`);
    expect(later.headers.get("cache-status")).toMatch(/^kube-watch-relay; hit; ttl=/);
    expect(await upstreamLists(path, marker, next)).toBe(1);

    // Once the interval is over, the next client's list goes upstream again (once).
    await eventually(async () => (await relay(`${path}?${query}`)).headers.get("cache-status")?.includes("fwd=miss; stored"), "a list after the interval");
    expect(await upstreamLists(path, marker, next)).toBe(2);
  });

  it("a get is answered from its namespace's shared list, as the API server answers it", async () => {
    const pods = (await sim.list("/api/v1/namespaces/team-a/pods")).items.filter((p) => (p.status as { phase?: string }).phase === "Running");
    const name = pods[0]?.metadata?.name as string;
    const path = `${METRICS}/namespaces/team-a/pods`;
    const { next } = await sim.requests(path);
    const [list, one] = await Promise.all([relay(path), relay(`${path}/${name}`)]);
    expect(list.status).toBe(200);
    const object = (await one.json()) as KubeObject;
    expect(object).toMatchObject({ kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", metadata: { name, namespace: "team-a" } });
    const missing = await relay(`${path}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      kind: "Status",
      reason: "NotFound",
      message: 'pods.metrics.k8s.io "nope" not found',
      details: { name: "nope", group: "metrics.k8s.io", kind: "pods" },
    });
    // The list, the get and the miss: at most one upstream list each interval (two if the interval turned meanwhile).
    expect((await sim.requests(path, next)).requests.filter((r) => r.verb === "list").length).toBeLessThanOrEqual(2);
    expect((await sim.requests(`${path}/${name}`, next)).requests).toEqual([]);
  });

  it.each<Record<string, string>>([{}, { upgrade: "websocket" }])("a watch is the API server's 405, and nothing goes upstream (%j)", async (headers) => {
    const path = `${METRICS}/nodes`;
    const { next } = await sim.requests(path);
    const response = await relay(`${path}?watch=1`, { headers });
    expect(response.status).toBe(405);
    expect(await response.json()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'watch is not supported on resources of kind "nodes.metrics.k8s.io"',
      reason: "MethodNotAllowed",
      details: { group: "metrics.k8s.io", kind: "nodes" },
      code: 405,
    } satisfies Status);
    expect((await sim.requests(path, next)).requests).toEqual([]);
  });

  it("YAML and shards of a cached list", async () => {
    const path = `${METRICS}/nodes?${ownKey().query}`;
    const yaml = await relay(path, { headers: { accept: "application/yaml" } });
    expect([yaml.status, yaml.headers.get("content-type")]).toEqual([200, "application/yaml"]);
    expect(await yaml.text()).toMatch(/^apiVersion: metrics.k8s.io\/v1beta1\nitems:\n- metadata:\n/);
    const selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";
    const shard = (await (await relay(`${path}&shardSelector=${encodeURIComponent(selector)}`)).json()) as MetricsList & { metadata: { shardInfo?: unknown } };
    expect(shard.metadata.shardInfo).toEqual({ selector });
    expect(shard.items.length).toBeGreaterThan(0);
  });

  it("counts in /metrics the lists served from the cache and the lists sent upstream, per cluster", async () => {
    const before = await scrape();
    const path = `${METRICS}/pods?${ownKey().query}`;
    await Promise.all(Array.from({ length: 5 }, () => relay(path).then((r) => r.text())));
    await eventually(async () => {
      const after = await scrape();
      const served = metricValue(after, "kube_watch_relay_cached_lists_total", { cluster: "default" }) - metricValue(before, "kube_watch_relay_cached_lists_total", { cluster: "default" });
      const upstream =
        metricValue(after, "kube_watch_relay_cache_upstream_lists_total", { cluster: "default" }) - metricValue(before, "kube_watch_relay_cache_upstream_lists_total", { cluster: "default" });
      return served === 4 && upstream === 1;
    }, "4 served from the cache and 1 sent upstream");
  });
});
