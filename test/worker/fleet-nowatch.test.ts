/**
 * A merged key's list of a resource without watch (metrics.k8s.io, which `kubectl top` reads;
 * DESIGN.md, "One watch across clusters"): each member's list from its list cache, renamed and
 * annotated as the merged key's other answers, one List in the members' order; a member that
 * fails or is slow is named behind and the others answered.
 */
import { describe, expect, it } from "vitest";
import { CLUSTER_ANNOTATION, CLUSTER_VERSION_ANNOTATION, MEMBERS_BEHIND_HEADER, MEMBERS_LEFT_OUT_HEADER, NAME_ANNOTATION } from "../../src/k8s/members.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { relay, Sim, uniqueNamespace } from "./helpers.ts";

const a = new Sim("fleet-a");
const b = new Sim("fleet-b");
const metricsPath = (ns: string) => `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods`;
const merged = (set: string, ns: string, query = "") => `/clusters/${set}${metricsPath(ns)}${query ? `?${query}` : ""}`;

type PodMetrics = KubeObject & { containers?: Array<{ name: string; usage: { cpu: string; memory: string } }> };
interface MetricsList {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: PodMetrics[];
}

/** A running pod (metrics-server has metrics only of running pods), created as a kubelet would leave it. */
function runningPod(sim: Sim, ns: string, name: string): Promise<KubeObject> {
  return sim.create(podsPath(ns), { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: ns }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] }, status: { phase: "Running" } });
}

async function list(path: string): Promise<{ response: Response; list: MetricsList }> {
  const response = await relay(path);
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, list: (await response.json()) as MetricsList };
}

const names = (l: MetricsList) => l.items.map((o) => o.metadata?.name);

describe("a merged key's list of a resource without watch", () => {
  it("is every member's list from its list cache, renamed and annotated, in the members' order, without a resourceVersion, and whole whatever its limit", async () => {
    const ns = uniqueNamespace("fleet-top");
    await runningPod(a, ns, "web");
    await runningPod(b, ns, "web");
    await runningPod(b, ns, "api");
    // Pods that are not running have no metrics, in any member.
    await a.createPod(ns, "pending");
    const { next } = await b.requests(metricsPath(ns));
    const { response, list: all } = await list(merged("fleet-b,fleet-a", ns));
    expect([all.kind, all.apiVersion]).toEqual(["PodMetricsList", "metrics.k8s.io/v1beta1"]);
    // No sequence to number (no watch): no resourceVersion, as a member's own list of it.
    expect(all.metadata).toEqual({});
    // By cluster, then as each member listed them (in key order).
    expect(names(all)).toEqual(["fleet-a:web", "fleet-b:api", "fleet-b:web"]);
    for (const item of all.items) {
      const [cluster, name] = String(item.metadata?.name).split(":");
      expect(item.metadata?.annotations).toEqual({ [CLUSTER_ANNOTATION]: cluster, [NAME_ANNOTATION]: name, [CLUSTER_VERSION_ANNOTATION]: "" });
      expect(item.metadata?.resourceVersion).toBe("0");
      expect(item.metadata?.namespace).toBe(ns);
      expect(item.containers?.[0]?.usage.cpu).toMatch(/^\d+n$/);
    }
    expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBeNull();
    expect(response.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBeNull();
    // A merged get of one of them is the same object (but for when metrics-server made it).
    const got = (await (await relay(`${merged("fleet-a,fleet-b", ns)}/fleet-b:api`)).json()) as PodMetrics;
    const { creationTimestamp: _got, ...gotMeta } = got.metadata ?? {};
    const { creationTimestamp: _listed, ...listedMeta } = all.items[1]?.metadata ?? {};
    expect(gotMeta).toEqual(listedMeta);
    // The list cache cannot page, as a single cluster's: a limit gets the whole list, with no continue.
    const { list: limited } = await list(merged("fleet-a,fleet-b", ns, "limit=1"));
    expect(names(limited)).toEqual(names(all));
    expect(limited.metadata.continue).toBeUndefined();
    // The member's list cache listed its cluster once for all of these (twice if its interval turned meanwhile).
    expect((await b.requests(metricsPath(ns), next)).requests.filter((r) => r.verb === "list").length).toBeLessThanOrEqual(2);
    // A watch of it is still the API server's 405.
    const watch = await relay(merged("fleet-a,fleet-b", ns, "watch=1"));
    expect(watch.status).toBe(405);
    await watch.body?.cancel();
  });

  it("is kubectl's Table with the Cluster column after the name, and YAML", async () => {
    const ns = uniqueNamespace("fleet-top");
    await runningPod(a, ns, "web");
    await runningPod(b, ns, "web");
    const response = await relay(merged("fleet-a,fleet-b", ns), { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    expect(response.status).toBe(200);
    const table = (await response.json()) as { kind: string; columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
    expect(table.kind).toBe("Table");
    expect(table.columnDefinitions.slice(0, 2).map((c) => c.name)).toEqual(["Name", "Cluster"]);
    expect(table.rows.map((r) => r.cells.slice(0, 2))).toEqual([
      ["fleet-a:web", "fleet-a"],
      ["fleet-b:web", "fleet-b"],
    ]);
    const yaml = await relay(merged("fleet-a,fleet-b", ns), { headers: { accept: "application/yaml" } });
    expect([yaml.status, yaml.headers.get("content-type")]).toEqual([200, "application/yaml"]);
    const text = await yaml.text();
    expect(text).toMatch(/^apiVersion: metrics.k8s.io\/v1beta1\nitems:\n- /);
    for (const line of ["  name: fleet-b:web\n", "    kube-watch-relay.dev/cluster: fleet-a\n", "kind: PodMetricsList\n"]) expect(text).toContain(line);
  });

  it("names behind a member whose cluster cannot be reached, and one that does not answer within a second, and answers the others' items", async () => {
    const ns = uniqueNamespace("fleet-top");
    await runningPod(a, ns, "here");
    await runningPod(b, ns, "slow");
    const { response: down, list: withoutDown } = await list(merged("down,fleet-a", ns));
    expect(down.headers.get(MEMBERS_BEHIND_HEADER)).toBe("down");
    expect(names(withoutDown)).toEqual(["fleet-a:here"]);
    // fleet-b's cluster takes 5 s to answer its list cache's next list of the namespace's metrics.
    await b.faults({ delayRequests: { ms: 5000, count: 1, verbs: ["list"], path: metricsPath(ns) } });
    const started = Date.now();
    const { response: slow, list: withoutSlow } = await list(merged("fleet-a,fleet-b", ns));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(slow.headers.get(MEMBERS_BEHIND_HEADER)).toBe("fleet-b");
    expect(names(withoutSlow)).toEqual(["fleet-a:here"]);
    // Every member behind (fleet-b's list cache still waits for that list): an empty List that says so.
    const { response: none, list: empty } = await list(merged("fleet-b,", ns));
    expect(none.headers.get(MEMBERS_BEHIND_HEADER)).toBe("fleet-b");
    expect(empty.items).toEqual([]);
  });
});
