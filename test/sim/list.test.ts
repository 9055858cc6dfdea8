/**
 * @module
 * LIST, GET and error responses: shape, resourceVersion rules, paging over a consistent snapshot, 410/422/504, selectors, Tables.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { STREAMED_LIST_ITEMS } from "../../src/sim/http.ts";
import { continueExpired } from "../../src/k8s/status.ts";
import { podManifest, request } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 7 });
});
afterAll(() => sim.close());

const pods = (ns: string, query = "") => `${sim.url}/api/v1/namespaces/${ns}/pods${query ? `?${query}` : ""}`;

describe("list", () => {
  it("has the API server's shape: list kind, current RV, built-in items without kind/apiVersion", async () => {
    const res = await request(`${sim.url}/api/v1/pods`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("cache-control")).toBe("no-cache, private");
    expect(res.text.endsWith("}\n")).toBe(true);
    expect(Object.keys(res.body)).toEqual(["kind", "apiVersion", "metadata", "items"]);
    expect(res.body.kind).toBe("PodList");
    expect(res.body.metadata).toEqual({ resourceVersion: sim.resourceVersion });
    expect(res.body.items).toHaveLength(32);
    const item = res.body.items[0];
    expect(item.kind).toBeUndefined();
    expect(Object.keys(item)).toEqual(["metadata", "spec", "status"]);
    expect(item.metadata.ownerReferences[0].kind).toBe("ReplicaSet");
    expect(item.status.podIP).toMatch(/^10\.244\./);
    const size = JSON.stringify(item).length;
    expect(size).toBeGreaterThan(2000);
    expect(size).toBeLessThan(4600);
  });

  it("keeps kind/apiVersion on custom resource items, and scopes by namespace and cluster", async () => {
    const widgets = await request(`${sim.url}/apis/example.com/v1/namespaces/team-a/widgets`);
    expect(widgets.body.kind).toBe("WidgetList");
    expect(widgets.body.apiVersion).toBe("example.com/v1");
    expect(widgets.body.items.map((w: any) => [w.kind, w.apiVersion, w.metadata.namespace])).toEqual([
      ["Widget", "example.com/v1", "team-a"],
      ["Widget", "example.com/v1", "team-a"],
    ]);
    const nodes = await request(`${sim.url}/api/v1/nodes`);
    expect(nodes.body.items.map((n: any) => n.metadata.name)).toEqual(["sim-node-1", "sim-node-2", "sim-node-3"]);
    const deployments = await request(`${sim.url}/apis/apps/v1/deployments`);
    expect(deployments.body.kind).toBe("DeploymentList");
    expect(deployments.body.items).toHaveLength(8);
  });

  it("pages with limit/continue over a consistent snapshot, even across writes", async () => {
    const before = sim.list("pods", "team-b").map((p) => p.metadata?.name);
    const first = await request(pods("team-b", "limit=3"));
    expect(first.body.items).toHaveLength(3);
    expect(first.body.metadata.remainingItemCount).toBe(5);
    const token = JSON.parse(Buffer.from(first.body.metadata.continue, "base64url").toString());
    expect(token).toEqual({ v: "meta.k8s.io/v1", rv: Number(first.body.metadata.resourceVersion), start: `team-b/${first.body.items[2].metadata.name}\u0000` });

    // Writes between pages: a new pod, and the deletion of one not yet returned.
    sim.create("pods", podManifest("team-b", "zzz-late"));
    sim.delete("pods", "team-b", before[7]!);
    const names = first.body.items.map((p: any) => p.metadata.name);
    let cont = first.body.metadata.continue;
    while (cont) {
      const page = await request(pods("team-b", `limit=3&continue=${cont}`));
      expect(page.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
      names.push(...page.body.items.map((p: any) => p.metadata.name));
      cont = page.body.metadata.continue;
    }
    expect(names).toEqual(before);
  });

  it("streams a list longer than STREAMED_LIST_ITEMS item by item, the same JSON as one body", async () => {
    const [seed] = sim.list("pods", "team-a");
    for (let i = 0; i <= STREAMED_LIST_ITEMS; i++) sim.create("pods", { ...seed, metadata: { ...seed?.metadata, namespace: "streamed", name: `pod-${i}`, uid: undefined } });
    const whole = await request(pods("streamed"));
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBeNull();
    expect(whole.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(whole.body)).toEqual(["kind", "apiVersion", "metadata", "items"]);
    expect(whole.text).toBe(`${JSON.stringify(whole.body)}\n`);
    expect(whole.body.items.map((p: any) => p.metadata.name)).toEqual(sim.list("pods", "streamed").map((p) => p.metadata?.name));
    // A page is small: one body, its length given.
    const page = await request(pods("streamed", "limit=500"));
    expect(Number(page.headers.get("content-length"))).toBe(Buffer.byteLength(page.text));
  });

  it("pages one namespace's range of keys, whatever the namespaces whose names share its prefix", async () => {
    // Keys are `<namespace>/<name>`: `pg-a/…` sorts before `pg/…`, and `pga/…` after it.
    for (const ns of ["pg-a", "pg", "pga"]) for (const name of ["a", "b", "c"]) sim.create("pods", podManifest(ns, name, { tier: name === "a" ? "front" : "back" }));
    const pages: Array<{ names: string[]; remaining: unknown; more: boolean }> = [];
    for (let cont: string | undefined, first = true; first || cont; first = false) {
      const page = await request(pods("pg", `limit=2${cont ? `&continue=${cont}` : ""}`));
      pages.push({
        names: page.body.items.map((p: any) => `${p.metadata.namespace}/${p.metadata.name}`),
        remaining: page.body.metadata.remainingItemCount,
        more: page.body.metadata.continue !== undefined,
      });
      cont = page.body.metadata.continue;
    }
    expect(pages).toEqual([
      { names: ["pg/a", "pg/b"], remaining: 1, more: true },
      { names: ["pg/c"], remaining: undefined, more: false },
    ]);
    // With a selector, a next page is promised only while another object matches.
    const front = await request(pods("pg", "limit=1&labelSelector=tier%3Dfront"));
    expect(front.body.items.map((p: any) => p.metadata.name)).toEqual(["a"]);
    expect(front.body.metadata.continue).toBeUndefined();
    const back = await request(pods("pg", "limit=1&labelSelector=tier%3Dback"));
    expect(back.body.items.map((p: any) => p.metadata.name)).toEqual(["b"]);
    expect(back.body.metadata.continue).toBeDefined();
    expect(back.body.metadata.remainingItemCount).toBeUndefined();
  });

  it("omits remainingItemCount when a selector is given", async () => {
    const res = await request(pods("team-c", "limit=1&labelSelector=app%3Dweb"));
    expect(res.body.metadata.continue).toBeDefined();
    expect(res.body.metadata.remainingItemCount).toBeUndefined();
  });

  it("answers an expired continue token with 410 and an inconsistent-continue token", async () => {
    const first = await request(pods("team-c", "limit=2"));
    sim.create("pods", podManifest("team-c", "zz-after-first-page"));
    await sim.faults({ compact: true });
    const res = await request(pods("team-c", `limit=2&continue=${first.body.metadata.continue}`));
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410, message: continueExpired("").message });
    const retry = await request(pods("team-c", `limit=100&continue=${res.body.metadata.continue}`));
    expect(retry.status).toBe(200);
    expect(retry.body.items.map((p: any) => p.metadata.name)).toContain("zz-after-first-page");
  });

  it("ignores limit for resourceVersion=0, as the watch cache does", async () => {
    const res = await request(pods("default", "limit=2&resourceVersion=0"));
    expect(res.body.items.length).toBeGreaterThan(2);
    expect(res.body.metadata.continue).toBeUndefined();
  });

  it("serves an exact resourceVersion from history, and 410 once it is compacted", async () => {
    const rv = sim.resourceVersion;
    const victim = sim.list("pods", "default")[0]!.metadata!.name!;
    sim.delete("pods", "default", victim);
    const exact = await request(pods("default", `resourceVersion=${rv}&resourceVersionMatch=Exact`));
    expect(exact.body.metadata.resourceVersion).toBe(rv);
    expect(exact.body.items.map((p: any) => p.metadata.name)).toContain(victim);
    const legacyExact = await request(pods("default", `resourceVersion=${rv}&limit=100`));
    expect(legacyExact.body.items.map((p: any) => p.metadata.name)).toContain(victim);
    const notOlder = await request(pods("default", `resourceVersion=${rv}`));
    expect(notOlder.body.metadata.resourceVersion).toBe(sim.resourceVersion);
    expect(notOlder.body.items.map((p: any) => p.metadata.name)).not.toContain(victim);
    await sim.faults({ compact: true });
    const gone = await request(pods("default", `resourceVersion=${rv}&resourceVersionMatch=Exact`));
    expect(gone.status).toBe(410);
    expect(gone.body.message).toBe("The resourceVersion for the provided list is too old.");
  });

  it("validates ListOptions with 422 Invalid", async () => {
    const cases: Array<[string, string]> = [
      ["resourceVersionMatch=NotOlderThan", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"],
      ["resourceVersion=1&resourceVersionMatch=Exact&continue=abc", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"],
      ["resourceVersion=1&resourceVersionMatch=Newest", 'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'],
      ["resourceVersion=0&resourceVersionMatch=Exact", 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
      ["sendInitialEvents=true", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"],
    ];
    for (const [query, message] of cases) {
      const res = await request(pods("default", query));
      expect(res.status, query).toBe(422);
      expect(res.body.reason).toBe("Invalid");
      expect(res.body.message).toBe(`ListOptions.meta.k8s.io "" is invalid: ${message}`);
      expect(res.body.details.kind).toBe("ListOptions");
    }
  });

  it("rejects bad selectors and resourceVersions with 400", async () => {
    const label = await request(pods("default", "labelSelector=app%3Amonolith"));
    expect(label.status).toBe(400);
    expect(label.body.reason).toBe("BadRequest");
    expect(label.body.message).toContain("app:monolith");
    const field = await request(pods("default", "fieldSelector=spec.foo%3Dbar"));
    expect(field.status).toBe(400);
    expect(field.body.message).toBe("field label not supported: spec.foo");
    const rv = await request(pods("default", "resourceVersion=abc"));
    expect(rv.status).toBe(400);
  });

  it("filters by label and field selectors", async () => {
    const web = await request(pods("team-a", "labelSelector=app%3Dweb"));
    expect(web.body.items.length).toBeGreaterThan(0);
    expect(web.body.items.every((p: any) => p.metadata.labels.app === "web")).toBe(true);
    const node = await request(`${sim.url}/api/v1/pods?fieldSelector=spec.nodeName%3Dsim-node-2,status.phase%3DRunning`);
    expect(node.body.items.length).toBeGreaterThan(0);
    expect(node.body.items.every((p: any) => p.spec.nodeName === "sim-node-2")).toBe(true);
  });

  it("waits for a resourceVersion ahead of the store, then answers 504 with Retry-After", async () => {
    const ahead = Number(sim.resourceVersion) + 5;
    const started = Date.now();
    const res = await request(pods("default", `resourceVersion=${ahead}`));
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(res.status).toBe(504);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Timeout: Too large resource version: ${ahead}, current: ${sim.resourceVersion}`,
      reason: "Timeout",
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
      code: 504,
    });
  });

  it("answers a list waiting for a resourceVersion as soon as the store reaches it", async () => {
    const target = Number(sim.resourceVersion) + 1;
    const { next } = sim.requests();
    const pending = request(pods("default", `resourceVersion=${target}`));
    // The request is logged when it arrives; only then does the write that satisfies it happen.
    while (sim.requests({ since: next }).requests.length === 0) await new Promise((r) => setImmediate(r));
    sim.create("pods", podManifest("default", "satisfies-the-wait"));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(Number(res.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(target);
  });
});

describe("get and errors", () => {
  it("gets one object with kind and apiVersion", async () => {
    const name = sim.list("pods", "team-a")[0]!.metadata!.name!;
    const res = await request(`${pods("team-a")}/${name}`);
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe("Pod");
    expect(res.body.metadata.name).toBe(name);
  });

  it("uses Status bodies for 404, 405 and 406", async () => {
    const missing = await request(`${pods("default")}/nginx`);
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nginx\\" not found","reason":"NotFound","details":{"name":"nginx","kind":"pods"},"code":404}\n',
    );
    const unknown = await request(`${sim.url}/api/v1/foos`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason).toBe("NotFound");
    const notServed = await request(`${sim.url}/healthz`);
    expect(notServed.status).toBe(404);
    const post = await request(`${pods("default")}/x`, { method: "POST", body: "{}" });
    expect(post.status).toBe(405);
    expect(post.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n',
    );
    const protobuf = await request(pods("default"), { headers: { Accept: "application/vnd.kubernetes.protobuf" } });
    expect(protobuf.status).toBe(406);
    const both = await request(pods("default"), { headers: { Accept: "application/vnd.kubernetes.protobuf, application/json" } });
    expect(both.status).toBe(200);
  });

  it("prints Tables when asked, as kubectl does", async () => {
    const res = await request(pods("team-a", "limit=500"), {
      headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json" },
    });
    expect(res.headers.get("content-type")).toBe("application/json;as=Table;v=v1;g=meta.k8s.io");
    expect(res.body.kind).toBe("Table");
    expect(res.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]);
    expect(res.body.rows[0].object.kind).toBe("PartialObjectMetadata");
    expect(res.body.rows[0].cells[1]).toBe("1/1");
    expect(res.text).toContain("\\u003cnone\\u003e");
  });
});
