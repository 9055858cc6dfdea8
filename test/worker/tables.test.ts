/**
 * @module
 * kubectl's Tables through the relay, checked against the shapes kube-apiserver sends: a list,
 * one object and a watch stream (one row per event, column definitions on the first event only,
 * BOOKMARKs converted, ERRORs untouched), plus media-type negotiation (406, protobuf-then-JSON).
 */
import { env } from "cloudflare:workers";
import { listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INITIAL_EVENTS_END, type KubeObject } from "../../src/k8s/types.ts";
import { httpWatch, relay, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { KUBECTL_TABLE, TABLE_V1 } from "./kube-helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim();
const POD_COLUMNS = ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"];

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: Array<{ name: string; type: string; format: string; description: string; priority: number }> | null;
  rows: Array<{ cells: unknown[]; object: KubeObject | null }>;
}

async function podsIn(count: number): Promise<{ ns: string; pods: KubeObject[] }> {
  const ns = uniqueNamespace("tbl");
  const pods: KubeObject[] = [];
  for (let i = 0; i < count; i++) pods.push(await sim.createPod(ns, `p${i}`));
  return { ns, pods };
}

async function table(path: string, accept = KUBECTL_TABLE): Promise<Table> {
  const response = await relay(path, { headers: { accept } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe(TABLE_V1);
  return response.json();
}

/** The structure kube-apiserver's pod Tables have, field order included. */
function expectPodTableShape(t: Table, withColumns: boolean): void {
  expect(Object.keys(t)).toEqual(["kind", "apiVersion", "metadata", "columnDefinitions", "rows"]);
  expect([t.kind, t.apiVersion]).toEqual(["Table", "meta.k8s.io/v1"]);
  if (withColumns) {
    expect(t.columnDefinitions!.map((c) => c.name)).toEqual(POD_COLUMNS);
    expect(t.columnDefinitions!.map((c) => c.priority)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1]);
    expect(t.columnDefinitions![0]).toMatchObject({ type: "string", format: "name" });
    for (const c of t.columnDefinitions!) expect(Object.keys(c)).toEqual(["name", "type", "format", "description", "priority"]);
  } else {
    expect(t.columnDefinitions).toBeNull();
  }
  for (const row of t.rows) {
    expect(Object.keys(row)).toEqual(["cells", "object"]);
    expect(row.cells).toHaveLength(POD_COLUMNS.length);
    expect(row.object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1" });
    expect(Object.keys(row.object!)).toEqual(["kind", "apiVersion", "metadata"]);
  }
}

describe("Tables for kubectl", () => {
  it("a list is a Table with the pod columns, one row per object, at the list's resourceVersion", async () => {
    const { ns, pods } = await podsIn(3);
    const plain = (await (await relay(podsPath(ns))).json()) as { metadata: { resourceVersion: string } };
    const t = await table(podsPath(ns));
    expectPodTableShape(t, true);
    expect(t.metadata.resourceVersion).toBe(plain.metadata.resourceVersion);
    expect(t.rows.map((r) => r.cells[0])).toEqual(["p0", "p1", "p2"]);
    expect(t.rows.map((r) => r.object!.metadata)).toEqual(pods.map((p) => p.metadata));
    // READY and STATUS as kubectl shows them, from the objects' own status.
    expect(t.rows.map((r) => r.cells.slice(1, 3))).toEqual(
      pods.map((p: any) => [`${(p.status?.containerStatuses ?? []).filter((c: any) => c.ready).length}/${p.spec.containers.length}`, expect.any(String)]),
    );
  });

  it("one object is a Table of one row at the object's resourceVersion", async () => {
    const { ns, pods } = await podsIn(1);
    const t = await table(`${podsPath(ns)}/p0`);
    expectPodTableShape(t, true);
    expect(t.metadata).toEqual({ resourceVersion: pods[0]!.metadata!.resourceVersion });
    expect(t.rows).toHaveLength(1);
    // Errors stay Status objects.
    const missing = await relay(`${podsPath(ns)}/nope`, { headers: { accept: KUBECTL_TABLE } });
    expect([missing.status, missing.headers.get("content-type")]).toEqual([404, "application/json"]);
    expect(await missing.json()).toMatchObject({ kind: "Status", reason: "NotFound" });
  });

  it("a watch sends one-row Tables: columns on the first event only, BOOKMARKs converted, live events with their cells", async () => {
    const { ns } = await podsIn(2);
    const watch = await httpWatch<Table>(`${podsPath(ns)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { accept: KUBECTL_TABLE });
    expect(watch.response.headers.get("content-type")).toBe(TABLE_V1);
    const [first, second, bookmark] = await watch.events.take(3);
    expect([first!.type, second!.type, bookmark!.type]).toEqual(["ADDED", "ADDED", "BOOKMARK"]);
    expectPodTableShape(first!.object, true);
    expectPodTableShape(second!.object, false);
    expect([first!.object.rows[0]!.cells[0], second!.object.rows[0]!.cells[0]]).toEqual(["p0", "p1"]);
    expectPodTableShape(bookmark!.object, false);
    expect(bookmark!.object.rows[0]!.object!.metadata!.annotations).toEqual({ [INITIAL_EVENTS_END]: "true" });

    const patched = await sim.patchPod(ns, "p1", { metadata: { labels: { tier: "web" } } });
    const live = await watch.events.next("the live MODIFIED");
    expect(live.type).toBe("MODIFIED");
    expectPodTableShape(live.object, false);
    expect(live.object.metadata.resourceVersion).toBe(patched.metadata!.resourceVersion);
    expect(live.object.rows[0]!.cells[0]).toBe("p1");
    expect(live.object.rows[0]!.object!.metadata!.labels).toEqual({ tier: "web" });
    watch.close();
  });

  it("an ERROR event reaches a Table watch as the Status it is", async () => {
    const { ns } = await podsIn(1);
    const watch = await httpWatch<Table>(`${podsPath(ns)}?watch=1&resourceVersion=1`, { accept: KUBECTL_TABLE });
    const error = await watch.events.next("the 410");
    expect(error).toMatchObject({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", reason: "Expired", code: 410 } });
    await watch.events.closed();
  });

  it("honours v1beta1 and includeObject as the API server does", async () => {
    const { ns } = await podsIn(1);
    const beta = await relay(podsPath(ns), { headers: { accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io" } });
    expect(beta.headers.get("content-type")).toBe("application/json;as=Table;v=v1beta1;g=meta.k8s.io");
    const betaTable = (await beta.json()) as Table;
    expect([betaTable.apiVersion, betaTable.rows[0]!.object!.apiVersion]).toEqual(["meta.k8s.io/v1beta1", "meta.k8s.io/v1beta1"]);
    expect((await table(`${podsPath(ns)}?includeObject=None`)).rows[0]!.object).toBeNull();
    // The full object, with the kind and apiVersion a built-in list item lacks.
    expect((await table(`${podsPath(ns)}?includeObject=Object`)).rows[0]!.object).toMatchObject({ kind: "Pod", apiVersion: "v1", spec: { containers: [{ name: "app" }] } });
  });

  it("deployments get their printer's columns", async () => {
    const t = await table("/apis/apps/v1/namespaces/team-a/deployments");
    expect(t.columnDefinitions!.filter((c) => c.priority === 0).map((c) => c.name)).toEqual(["Name", "Ready", "Up-to-date", "Available", "Age"]);
    expect(t.rows.map((r) => r.cells[0])).toEqual((await sim.list("/apis/apps/v1/namespaces/team-a/deployments")).items.map((d) => d.metadata?.name));
  });
});

describe("media types", () => {
  it.each(["list", "get", "watch"])("an Accept of protobuf alone is a 406 for a %s, before any hub exists", async (verb) => {
    const ns = uniqueNamespace("pb");
    const path = verb === "list" ? podsPath(ns) : verb === "get" ? `${podsPath(ns)}/p0` : `${podsPath(ns)}?watch=1`;
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const response = await relay(path, { headers: { accept: "application/vnd.kubernetes.protobuf" } });
    expect(response.status).toBe(406);
    expect(await response.json()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `only the following media types are accepted: ${verb === "watch" ? "application/json;stream=watch" : "application/json, application/yaml"}`,
      reason: "NotAcceptable",
      code: 406,
    });
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });

  it("protobuf-then-JSON (kube components) gets plain JSON", async () => {
    const { ns } = await podsIn(1);
    const response = await relay(podsPath(ns), { headers: { accept: "application/vnd.kubernetes.protobuf, application/json" } });
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/json"]);
    expect(await response.json()).toMatchObject({ kind: "PodList", items: [{ metadata: { name: "p0" } }] });
  });

  it("a WebSocket watch sends JSON events whatever the handshake's Accept says", async () => {
    const { ns } = await podsIn(1);
    const ws = await wsWatch(`${podsPath(ns)}?watch=1`, { accept: KUBECTL_TABLE });
    expect(await ws.events.next()).toMatchObject({ type: "ADDED", object: { kind: "Pod", metadata: { name: "p0" } } });
    ws.close();
  });
});
