/**
 * @module
 * Discovery through the relay: answered from the upstream and cached, and used to resolve
 * every resource path before a hub is touched. The caching assertions count the simulator's
 * requests for `/api`, `/apis` and `/apis/example.com/v1`: no other test file asks for those,
 * so the counts are this file's own (each test file runs in its own isolate, with its own cache).
 */
import { env } from "cloudflare:workers";
import { listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { httpWatch, nameOf, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { AGGREGATED, discoveryRequests, KUBECTL_DISCOVERY, requestMark, simCreate } from "./kube-helpers.ts";

const sim = new Sim();

async function fromSim(path: string, accept: string): Promise<{ type: string | null; body: unknown }> {
  const response = await fetch(sim.url + path, { headers: { accept } });
  return { type: response.headers.get("content-type"), body: await response.json() };
}

describe("discovery", () => {
  it.each([
    ["/api", KUBECTL_DISCOVERY, AGGREGATED],
    ["/apis", KUBECTL_DISCOVERY, AGGREGATED],
    ["/apis", "application/json, */*", "application/json"],
    ["/apis/example.com/v1", KUBECTL_DISCOVERY, "application/json"],
  ])("%s (Accept %s) is the upstream's answer, and asking again costs the upstream nothing", async (path, accept, type) => {
    const first = await relay(path, { headers: { accept } });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe(type);
    expect(await first.json()).toEqual((await fromSim(path, accept)).body);
    const mark = await requestMark(sim);
    const again = await relay(path, { headers: { accept } });
    expect([again.status, again.headers.get("content-type")]).toEqual([200, type]);
    expect(await discoveryRequests(sim, path, mark)).toEqual([]);
  });

  it("resolves resource paths from the same cache: listing and watching a custom resource asks discovery nothing more", async () => {
    await relay("/apis/example.com/v1");
    const mark = await requestMark(sim);
    expect((await relay("/apis/example.com/v1/widgets")).status).toBe(200);
    const watch = await httpWatch("/apis/example.com/v1/namespaces/default/widgets?watch=1");
    await watch.events.next();
    watch.close();
    expect(await discoveryRequests(sim, "/apis/example.com/v1", mark)).toEqual([]);
  });

  it("answers an Accept it cannot serve with 406, and offers aggregated discovery only for /api and /apis", async () => {
    const protobuf = await relay("/apis", { headers: { accept: "application/vnd.kubernetes.protobuf" } });
    expect(protobuf.status).toBe(406);
    expect(await protobuf.json()).toMatchObject({ kind: "Status", reason: "NotAcceptable", code: 406 });
    const groupVersion = await relay("/apis/example.com/v1", { headers: { accept: KUBECTL_DISCOVERY } });
    expect(await groupVersion.json()).toMatchObject({ kind: "APIResourceList", groupVersion: "example.com/v1" });
  });

  it("answers 503 with Retry-After, naming the cause, when the upstream's discovery cannot be reached", async () => {
    const api = await relay("/clusters/down/api", { headers: { accept: KUBECTL_DISCOVERY } });
    expect(api.status).toBe(503);
    expect(api.headers.get("retry-after")).toBe("5");
    expect(await api.json()).toMatchObject({ reason: "ServiceUnavailable", message: expect.stringContaining("the upstream API server did not answer discovery for /api") });
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const deployments = await relay("/clusters/down/apis/apps/v1/deployments?watch=1");
    expect(deployments.status).toBe(503);
    expect(deployments.headers.get("retry-after")).toBe("5");
    expect(await deployments.json()).toMatchObject({ message: expect.stringContaining('the relay cannot tell what "deployments" is in apps/v1') });
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });
});

describe("resource paths resolved through discovery", () => {
  it.each([
    ["/api/v1/podz", 'v1 has no resource "podz"'],
    ["/api/v1/namespaces/default/podz?watch=1", 'v1 has no resource "podz"'],
    ["/apis/apps/v1/deploymentz", 'apps/v1 has no resource "deploymentz"'],
    ["/apis/example.com/v1/gadgets", 'example.com/v1 has no resource "gadgets"'],
    ["/apis/nope.example.com/v1/things?watch=1", "the upstream API server does not serve nope.example.com/v1"],
    ["/apis/apps/v7/deployments", "the upstream API server does not serve apps/v7"],
    ["/api/v1/namespaces/default/nodes", "nodes is not namespaced"],
    ["/api/v1/pods/some-pod", "pods are namespaced: use /namespaces/{namespace}/pods/some-pod"],
  ])("%s is the API server's 404, and no hub is created", async (path, cause) => {
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const response = await relay(path);
    expect(response.status).toBe(404);
    const status = (await response.json()) as { reason: string; message: string };
    expect(status.reason).toBe("NotFound");
    expect(status.message).toBe(`the server could not find the requested resource (${cause})`);
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });

  it("a group or version the cluster's lists do not name is a 404 without asking the upstream, however many different ones are asked", async () => {
    await (await relay("/apis/apps/v1")).body?.cancel();
    const mark = await requestMark(sim);
    // What each miss would cost the upstream if it were asked.
    const unlisted = new Set<string>();
    for (let i = 0; i < 60; i++) {
      for (const p of [`/apis/made-up-${i}.example.com/v1`, `/apis/made-up-${i}.example.com`, `/apis/apps/v${i + 2}`, `/api/v${i + 2}`]) unlisted.add(p);
      const paths = [`/apis/made-up-${i}.example.com/v1/things`, `/apis/made-up-${i}.example.com/v1`, `/apis/made-up-${i}.example.com`, `/apis/apps/v${i + 2}`, `/api/v${i + 2}/pods`];
      for (const path of paths) {
        const response = await relay(path, { headers: { accept: KUBECTL_DISCOVERY } });
        expect([path, response.status]).toEqual([path, 404]);
        expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: expect.stringContaining("the upstream API server does not serve") });
      }
    }
    expect((await sim.requests("/ap", mark)).requests.filter((r) => unlisted.has(r.path))).toEqual([]);
  });

  it("lists and watches a custom resource, as discovery describes it", async () => {
    const list = (await (await relay("/apis/example.com/v1/widgets")).json()) as { kind: string; items: KubeObject[] };
    expect(list.kind).toBe("WidgetList");
    expect(list.items.map((w) => w.metadata?.uid).sort()).toEqual((await sim.list("/apis/example.com/v1/widgets")).items.map((w) => w.metadata?.uid).sort());

    const ns = uniqueNamespace("wdg");
    const watch = await httpWatch(`/apis/example.com/v1/namespaces/${ns}/widgets?watch=1`);
    const widget = await simCreate(sim, `/apis/example.com/v1/namespaces/${ns}/widgets`, {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "sprocket", namespace: ns },
      spec: { color: "red", size: 3 },
    });
    const added = await watch.events.next("the new widget");
    expect([added.type, nameOf(added), added.object.kind, added.object.apiVersion, added.object.metadata?.uid]).toEqual(["ADDED", "sprocket", "Widget", "example.com/v1", widget.metadata?.uid]);
    expect(await sim.watchesOn(`/apis/example.com/v1/namespaces/${ns}/widgets`)).toHaveLength(1);
    watch.close();
  });
});
