/**
 * @module
 * Writes through the API: create/replace/patch/delete with the API server's conflicts and defaults.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, WRITTEN_AT, type Simulator } from "../../src/sim/index.ts";
import { openWatch } from "../kit/lines.ts";
import { podManifest, request, sendJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 11 });
});
afterAll(() => sim.close());

const podsUrl = (ns: string) => `${sim.url}/api/v1/namespaces/${ns}/pods`;

describe("writes", () => {
  it("creates with server-set uid, creationTimestamp, resourceVersion and written-at, then 409 on a duplicate", async () => {
    const before = Date.now();
    const created = await sendJson(podsUrl("default"), "POST", podManifest("default", "made"));
    expect(created.status).toBe(201);
    const meta = created.body.metadata;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.resourceVersion).toBe(sim.resourceVersion);
    expect(Number(meta.annotations[WRITTEN_AT])).toBeGreaterThanOrEqual(before);
    expect(Object.keys(created.body).slice(0, 3)).toEqual(["kind", "apiVersion", "metadata"]);
    const again = await sendJson(podsUrl("default"), "POST", podManifest("default", "made"));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ reason: "AlreadyExists", message: 'pods "made" already exists', details: { name: "made", kind: "pods" } });
    const generated = await sendJson(podsUrl("default"), "POST", { metadata: { generateName: "gen-" }, spec: {} });
    expect(generated.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    const nameless = await sendJson(podsUrl("default"), "POST", { spec: {} });
    expect(nameless.status).toBe(422);
  });

  it("replaces with optimistic concurrency: 409 Conflict on a stale resourceVersion", async () => {
    const current = (await request(`${podsUrl("default")}/made`)).body;
    const updated = await sendJson(`${podsUrl("default")}/made`, "PUT", { ...current, metadata: { ...current.metadata, labels: { v: "2" } } });
    expect(updated.status).toBe(200);
    expect(updated.body.metadata.uid).toBe(current.metadata.uid);
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(current.metadata.resourceVersion));
    const stale = await sendJson(`${podsUrl("default")}/made`, "PUT", current);
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    expect(stale.body.message).toBe('Operation cannot be fulfilled on pods "made": the object has been modified; please apply your changes to the latest version and try again');
    const unconditional = await sendJson(`${podsUrl("default")}/made`, "PUT", { ...current, metadata: { name: "made", labels: { v: "3" } } });
    expect(unconditional.status).toBe(200);
    const wrongName = await sendJson(`${podsUrl("default")}/made`, "PUT", { ...current, metadata: { name: "other" } });
    expect(wrongName.status).toBe(400);
    expect((await sendJson(`${podsUrl("default")}/absent`, "PUT", podManifest("default", "absent"))).status).toBe(404);
  });

  it("patches with merge patch and JSON patch; other patch types get 415", async () => {
    const merged = await sendJson(`${podsUrl("default")}/made`, "PATCH", { metadata: { labels: { v: null, app: "x" } } }, "application/merge-patch+json");
    expect(merged.body.metadata.labels).toEqual({ app: "x" });
    const patched = await sendJson(`${podsUrl("default")}/made`, "PATCH", [{ op: "add", path: "/metadata/labels/extra", value: "1" }], "application/json-patch+json");
    expect(patched.body.metadata.labels).toEqual({ app: "x", extra: "1" });
    const failed = await sendJson(`${podsUrl("default")}/made`, "PATCH", [{ op: "test", path: "/metadata/labels/app", value: "y" }], "application/json-patch+json");
    expect(failed.status).toBe(422);
    const apply = await sendJson(`${podsUrl("default")}/made`, "PATCH", {}, "application/apply-patch+yaml");
    expect(apply.status).toBe(415);
  });

  it("deletes immediately: DELETED carries the last state at the deletion resourceVersion", async () => {
    const rv = sim.resourceVersion;
    const w = await openWatch(`${podsUrl("default")}?watch=1&resourceVersion=${rv}`);
    const deleted = await request(`${podsUrl("default")}/made`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(deleted.body.kind).toBe("Pod");
    const event = await w.next();
    expect(event.type).toBe("DELETED");
    expect(event.object.metadata.resourceVersion).toBe(String(Number(rv) + 1));
    expect(event.object.metadata.labels).toEqual({ app: "x", extra: "1" });
    w.close();
    const cm = await request(`${sim.url}/api/v1/namespaces/default/configmaps/kube-root-ca.crt`, { method: "DELETE" });
    expect(cm.body).toMatchObject({ kind: "Status", status: "Success", details: { name: "kube-root-ca.crt", kind: "configmaps" } });
    expect((await request(`${podsUrl("default")}/made`, { method: "DELETE" })).status).toBe(404);
  });

  it("creates the Namespace of an object written into a namespace that does not exist, and cascades namespace deletion", async () => {
    expect((await sendJson(`${sim.url}/apis/example.com/v1/namespaces/brand-new/widgets`, "POST", { metadata: { name: "w" }, spec: { size: 1 } })).status).toBe(201);
    const ns = await request(`${sim.url}/api/v1/namespaces/brand-new`);
    expect(ns.body.status.phase).toBe("Active");
    const widget = (await request(`${sim.url}/apis/example.com/v1/namespaces/brand-new/widgets/w`)).body;
    expect(Object.keys(widget)).toEqual(["apiVersion", "kind", "metadata", "spec"]);
    await request(`${sim.url}/api/v1/namespaces/brand-new`, { method: "DELETE" });
    expect((await request(`${sim.url}/apis/example.com/v1/namespaces/brand-new/widgets/w`)).status).toBe(404);
  });

  it("answers a write of an absent object 404, as the API server, before refusing its dry run", async () => {
    const absent = `${sim.url}/api/v1/namespaces/default/configmaps/absent?dryRun=All`;
    const deleted = await request(absent, { method: "DELETE" });
    const patched = await sendJson(absent, "PATCH", {}, "application/merge-patch+json");
    for (const reply of [deleted, patched]) expect([reply.status, reply.body?.reason]).toEqual([404, "NotFound"]);
    sim.create("configmaps", { metadata: { name: "present", namespace: "default" } });
    const dryRun = await request(`${sim.url}/api/v1/namespaces/default/configmaps/present?dryRun=All`, { method: "DELETE" });
    expect(dryRun.status).toBe(400);
    expect(sim.get("configmaps", "default", "present")).toBeDefined();
  });

  it("rejects bodies that do not match the URL", async () => {
    expect((await sendJson(podsUrl("default"), "POST", { ...podManifest("team-a", "x") })).status).toBe(400);
    expect((await sendJson(podsUrl("default"), "POST", { kind: "Service", metadata: { name: "x" } })).status).toBe(400);
    expect((await request(podsUrl("default"), { method: "POST", headers: { "Content-Type": "application/json" }, body: "{" })).status).toBe(400);
    expect((await sendJson(`${sim.url}/api/v1/pods`, "POST", podManifest("default", "x"))).status).toBe(405);
  });
});
