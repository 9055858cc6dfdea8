/**
 * @module
 * Discovery: /version, legacy and aggregated discovery listing exactly the served resources.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { request } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

describe("discovery", () => {
  it("serves /version as a 1.34 server", async () => {
    const res = await request(`${sim.url}/version`);
    expect(res.body).toMatchObject({ major: "1", minor: "34", gitVersion: "v1.34.0" });
  });

  it("serves legacy discovery listing exactly the served resources", async () => {
    expect((await request(`${sim.url}/api`)).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const core = (await request(`${sim.url}/api/v1`)).body;
    expect(core.apiVersion).toBeUndefined();
    expect(core.resources.map((r: any) => r.name)).toEqual(["configmaps", "events", "namespaces", "nodes", "pods", "secrets", "services"]);
    expect(core.resources.find((r: any) => r.name === "pods")).toEqual({
      name: "pods",
      singularName: "pod",
      namespaced: true,
      kind: "Pod",
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      shortNames: ["po"],
      categories: ["all"],
      storageVersionHash: "xPOwRZ+Yhw8=",
    });
    expect(core.resources.find((r: any) => r.name === "nodes")).toMatchObject({ namespaced: false, shortNames: ["no"] });
    const groups = (await request(`${sim.url}/apis`)).body;
    expect(groups.groups.map((g: any) => g.preferredVersion.groupVersion)).toEqual(["apps/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "metrics.k8s.io/v1beta1", "example.com/v1"]);
    const apps = (await request(`${sim.url}/apis/apps/v1`)).body;
    expect(apps).toMatchObject({ kind: "APIResourceList", apiVersion: "v1", groupVersion: "apps/v1" });
    expect(apps.resources.map((r: any) => [r.name, r.shortNames])).toEqual([
      ["deployments", ["deploy"]],
      ["deployments/scale", undefined],
      ["replicasets", ["rs"]],
      ["replicasets/scale", undefined],
    ]);
    // What `kubectl scale` looks for: the scale subresource with the Scale kind's group and version.
    expect(apps.resources[1]).toEqual({ name: "deployments/scale", singularName: "", namespaced: true, group: "autoscaling", version: "v1", kind: "Scale", verbs: ["get", "patch", "update"] });
    expect((await request(`${sim.url}/apis/example.com/v1`)).body.resources[0]).toMatchObject({ name: "widgets", kind: "Widget", namespaced: true });
    expect((await request(`${sim.url}/apis/apps`)).body).toMatchObject({ kind: "APIGroup", name: "apps" });
    expect((await request(`${sim.url}/apis/batch/v1`)).status).toBe(404);
  });

  it("serves aggregated discovery with the media type echoed", async () => {
    const accept = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;
    const apis = await request(`${sim.url}/apis`, { headers: { Accept: accept } });
    expect(apis.headers.get("content-type")).toBe(AGGREGATED);
    expect(apis.body).toMatchObject({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {} });
    expect(apis.body.items.map((i: any) => i.metadata.name)).toEqual(["apps", "authentication.k8s.io", "authorization.k8s.io", "metrics.k8s.io", "example.com"]);
    expect(apis.body.items[0].versions[0].resources[0]).toEqual({
      resource: "deployments",
      responseKind: { group: "", version: "", kind: "Deployment" },
      scope: "Namespaced",
      singularResource: "deployment",
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      shortNames: ["deploy"],
      categories: ["all"],
      subresources: [{ subresource: "scale", responseKind: { group: "autoscaling", version: "v1", kind: "Scale" }, verbs: ["get", "patch", "update"] }],
    });
    const api = await request(`${sim.url}/api`, { headers: { Accept: accept } });
    expect(api.body.items).toHaveLength(1);
    expect(api.body.items[0].metadata).toEqual({});
    expect(api.body.items[0].versions[0].resources.map((r: any) => r.resource)).toContain("pods");
  });
});

describe("OpenAPI v3, when published", () => {
  it("is a 404 until the simulator is told to publish it", async () => {
    expect((await request(`${sim.url}/openapi/v3`)).status).toBe(404);
  });

  it("serves an index naming each group/version's document by hash, as kube-openapi does", async () => {
    sim.configure({ openapi: true });
    try {
      const index = await request(`${sim.url}/openapi/v3`);
      expect(index.status).toBe(200);
      const apps = index.body.paths["apis/apps/v1"].serverRelativeURL as string;
      const hash = /hash=([0-9A-F]{128})$/.exec(apps)?.[1];
      expect(hash).toBeDefined();
      expect(Object.keys(index.body.paths)).toEqual(expect.arrayContaining(["api/v1", "apis/apps/v1", "apis/example.com/v1"]));
      const document = await request(`${sim.url}${apps}`, { headers: { Accept: "application/json" } });
      expect([document.status, document.headers.get("etag"), document.headers.get("cache-control")]).toEqual([200, `"${hash}"`, "public, immutable"]);
      expect(Object.keys(document.body.paths)).toEqual(expect.arrayContaining(["/apis/apps/v1/deployments", "/apis/apps/v1/namespaces/{namespace}/deployments"]));
      const unhashed = await request(`${sim.url}/openapi/v3/apis/apps/v1`);
      expect([unhashed.status, unhashed.headers.get("cache-control")]).toEqual([200, "no-cache, private"]);
      const stale = await fetch(`${sim.url}/openapi/v3/apis/apps/v1?hash=old`, { redirect: "manual" });
      expect([stale.status, stale.headers.get("location")]).toEqual([301, `/openapi/v3/apis/apps/v1?hash=${hash}`]);
      const held = await fetch(`${sim.url}${apps}`, { headers: { "If-None-Match": `"${hash}"` } });
      expect(held.status).toBe(304);
      expect((await request(`${sim.url}/openapi/v3/apis/nope.io/v1`)).status).toBe(404);
      // v2 is empty: kubectl, which downloads it before a write, finds no schema there and leaves validation to the server.
      const v2 = await request(`${sim.url}/openapi/v2`, { headers: { Accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
      expect([v2.status, v2.headers.get("content-type"), v2.text]).toEqual([200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", ""]);
      expect((await request(`${sim.url}/openapi/v2`)).body).toMatchObject({ swagger: "2.0", paths: {} });
    } finally {
      sim.configure({ openapi: false });
    }
  });
});
