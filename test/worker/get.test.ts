/**
 * Reads that make no hub (DESIGN.md, "Reads that make no hub"): a get costs one upstream get, or
 * nothing when a live hub holds its object; a list of a field-selected key (kubectl describe's
 * Events) costs one upstream list, or nothing when its hub is live. Counted in the simulated API
 * server's request log.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { podsPath } from "../kit/paths.ts";
import { eventually, relay, Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { metricValue, scrape, type Scrape } from "./metrics-helpers.ts";

const sim = new Sim();

/** The requests the simulated API server got under `path` since `since`, as `verb path?query`. */
async function asked(path: string, since: number): Promise<string[]> {
  return (await sim.requests(path, since)).requests.map((r) => `${r.verb} ${r.path}${r.query ? `?${decodeURIComponent(r.query)}` : ""}`);
}

/** Reads passed through, by verb, since the scrape `before`. */
async function passedThrough(before: Scrape, verb: "get" | "list"): Promise<number> {
  const name = "kube_watch_relay_reads_passed_through_total";
  return metricValue(await scrape(), name, { cluster: "default", verb }) - metricValue(before, name, { cluster: "default", verb });
}

const mark = async (): Promise<number> => (await sim.requests("/nothing")).next;
const stats = async (path: string) => (await relay(`/_relay/stats${path}`)).json() as Promise<{ watching: boolean; objects: number; upstream: string }>;

async function write(path: string, body: object): Promise<KubeObject> {
  const response = await fetch(sim.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as KubeObject;
}

/** A pod with what the API server records of who wrote which field. */
const podWithManagedFields = (ns: string, name: string) =>
  write(podsPath(ns), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, managedFields: [{ manager: "kubectl", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } }] },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }] },
  });

/** An Event about `pod`, as the kubelet records one. */
const eventAbout = (pod: KubeObject, reason: string) =>
  write(`/api/v1/namespaces/${pod.metadata!.namespace}/events`, {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${pod.metadata!.name}.${reason.toLowerCase()}`, namespace: pod.metadata!.namespace },
    involvedObject: { kind: "Pod", namespace: pod.metadata!.namespace, name: pod.metadata!.name, uid: pod.metadata!.uid, apiVersion: "v1" },
    reason,
    message: `${reason} it`,
    type: "Normal",
    source: { component: "kubelet" },
  });

/** The Events query kubectl describe makes for a pod. */
const describeEvents = (pod: KubeObject) =>
  `/api/v1/namespaces/${pod.metadata!.namespace}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod.metadata!.name},involvedObject.namespace=${pod.metadata!.namespace},involvedObject.uid=${pod.metadata!.uid}`)}&limit=500`;

describe("a get costs a get", () => {
  it("on a key no live hub holds: one upstream get, the API server's object (managedFields dropped, as hubs drop them), and no hub", async () => {
    const ns = uniqueNamespace("get");
    const pod = await podWithManagedFields(ns, "solo");
    const before = await scrape();
    const since = await mark();
    const response = await relay(`${podsPath(ns)}/solo`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const { managedFields, ...metadata } = pod.metadata!;
    expect(managedFields).toHaveLength(1);
    expect(await response.json()).toEqual({ ...pod, metadata });
    expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([`get ${podsPath(ns)}/solo`]);
    expect(await asked("/api/v1/pods", since)).toEqual([]);
    expect(await stats(podsPath(ns))).toMatchObject({ watching: false, objects: 0, upstream: "stopped" });
    expect(await sim.watchesOn(podsPath(ns))).toEqual([]);
    await eventually(async () => (await passedThrough(before, "get")) === 1, "the get counted in /metrics as passed through");
  });

  it("is a consistent read: right after a write, the written object; resourceVersion=0 is passed on for the upstream's cache to answer", async () => {
    const ns = uniqueNamespace("get");
    await sim.createPod(ns, "p");
    const patched = await sim.patchPod(ns, "p", { metadata: { labels: { changed: "yes" } } });
    expect(await (await relay(`${podsPath(ns)}/p`)).json()).toMatchObject({ metadata: { labels: { changed: "yes" }, resourceVersion: patched.metadata!.resourceVersion } });
    const since = await mark();
    expect((await relay(`${podsPath(ns)}/p?resourceVersion=0`)).status).toBe(200);
    expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([`get ${podsPath(ns)}/p?resourceVersion=0`]);
  });

  it("refusals are the API server's own: NotFound, and a resourceVersion it cannot parse never reaches it", async () => {
    const ns = uniqueNamespace("get");
    const since = await mark();
    const missing = await relay(`${podsPath(ns)}/nope`);
    expect(missing.status).toBe(404);
    const invalid = await relay(`${podsPath(ns)}/nope?resourceVersion=abc`);
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ kind: "Status", reason: "BadRequest", message: 'invalid resource version: "abc"' });
    expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([`get ${podsPath(ns)}/nope`]);
    const upstream = await fetch(`${sim.url}${podsPath(ns)}/nope`);
    expect(await missing.json()).toEqual(await upstream.json());
  });

  it("kubectl's Table and YAML of a passed-through get", async () => {
    const ns = uniqueNamespace("get");
    await sim.createPod(ns, "p");
    const table = await relay(`${podsPath(ns)}/p`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json" } });
    expect(table.status).toBe(200);
    const { columnDefinitions, rows } = (await table.json()) as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
    expect(columnDefinitions.map((c) => c.name).slice(0, 5)).toEqual(["Name", "Ready", "Status", "Restarts", "Age"]);
    expect(rows.map((r) => r.cells[0])).toEqual(["p"]);
    const yaml = await relay(`${podsPath(ns)}/p`, { headers: { accept: "application/yaml" } });
    expect([yaml.status, yaml.headers.get("content-type")]).toEqual([200, "application/yaml"]);
    expect(await yaml.text()).toMatch(/^apiVersion: v1\nkind: Pod\nmetadata:\n/);
  });

  it("a Secret is refused as ever, and the upstream is not asked", async () => {
    const since = await mark();
    const response = await relay("/api/v1/namespaces/default/secrets/token");
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "Forbidden", message: expect.stringContaining("DENY_RESOURCES") });
    expect(await asked("/api/v1/namespaces/default/secrets", since)).toEqual([]);
  });

  it("from its namespace's live hub at resourceVersion 0 or N: no upstream request; without one, a consistent read, the upstream's own get however live the hub", async () => {
    const ns = uniqueNamespace("held");
    await sim.createPod(ns, "p");
    const watch = await wsWatch(`${podsPath(ns)}?watch=1`);
    try {
      await watch.events.next();
      const since = await mark();
      const patched = await sim.patchPod(ns, "p", { metadata: { labels: { changed: "yes" } } });
      await watch.events.until((e) => e.type === "MODIFIED", "the change at the hub");
      expect(await (await relay(`${podsPath(ns)}/p?resourceVersion=${patched.metadata!.resourceVersion}`)).json()).toMatchObject({
        kind: "Pod",
        metadata: { resourceVersion: patched.metadata!.resourceVersion },
      });
      expect((await relay(`${podsPath(ns)}/p?resourceVersion=0`)).status).toBe(200);
      const missing = await relay(`${podsPath(ns)}/nope?resourceVersion=0`);
      expect(await missing.json()).toMatchObject({ kind: "Status", code: 404, reason: "NotFound", message: 'pods "nope" not found', details: { name: "nope", kind: "pods" } });
      expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([`patch ${podsPath(ns)}/p`]);

      const consistent = await mark();
      expect(await (await relay(`${podsPath(ns)}/p`)).json()).toMatchObject({ kind: "Pod", metadata: { resourceVersion: patched.metadata!.resourceVersion } });
      expect(await asked(`/api/v1/namespaces/${ns}/`, consistent)).toEqual([`get ${podsPath(ns)}/p`]);
    } finally {
      watch.close();
    }
  });

  it("the live page's row click: the pod from the hub of every namespace the page shows, no upstream request", async () => {
    const ns = uniqueNamespace("click");
    const pod = await sim.createPod(ns, "clicked");
    // The page's table of every namespace's pods, kept live by that key's hub.
    const view = await wsWatch("/api/v1/pods?view=1&watch=1&filter=name~clicked");
    try {
      await eventually(async () => (await stats("/api/v1/pods")).watching, "every namespace's hub to watch");
      const since = await mark();
      // What the page fetches to learn the pod's containers (src/client/page/main.ts): any state of it.
      const response = await relay(`/api/v1/namespaces/${ns}/pods/clicked?resourceVersion=0`);
      expect(await response.json()).toMatchObject({ kind: "Pod", metadata: { uid: pod.metadata!.uid }, spec: { containers: [{ name: "app" }] } });
      expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([]);
      expect(await stats(podsPath(ns))).toMatchObject({ watching: false, objects: 0 });
    } finally {
      view.close();
    }
  });
});

describe("kubectl describe's Events: a list of a field-selected key", () => {
  it("with no live hub: one upstream list with the client's options, and no hub", async () => {
    const ns = uniqueNamespace("describe");
    const pod = await sim.createPod(ns, "p");
    await eventAbout(pod, "Scheduled");
    await eventAbout(await sim.createPod(ns, "other"), "Scheduled");
    const before = await scrape();
    const since = await mark();
    const response = await relay(describeEvents(pod));
    expect(response.status).toBe(200);
    const list = (await response.json()) as { kind: string; items: KubeObject[] };
    expect(list.kind).toBe("EventList");
    expect(list.items.map((e) => e.metadata!.name)).toEqual(["p.scheduled"]);
    expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([
      `list /api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=p,involvedObject.namespace=${ns},involvedObject.uid=${pod.metadata!.uid}&limit=500`,
    ]);
    expect(await stats(describeEvents(pod).replace("&limit=500", ""))).toMatchObject({ watching: false, objects: 0 });
    expect(await sim.watchesOn(`/api/v1/namespaces/${ns}/events`)).toEqual([]);
    await eventually(async () => (await passedThrough(before, "list")) === 1, "the list counted in /metrics as passed through");
  });

  it("its key's live hub answers it at resourceVersion=0: no upstream request; without one (kubectl's), a consistent read, the upstream's own list", async () => {
    const ns = uniqueNamespace("describe");
    const pod = await sim.createPod(ns, "p");
    await eventAbout(pod, "Scheduled");
    const path = describeEvents(pod).replace("&limit=500", "");
    const watch = await wsWatch(`${path}&watch=1`);
    try {
      await watch.events.next();
      const since = await mark();
      const list = (await (await relay(`${path}&resourceVersion=0`)).json()) as { items: KubeObject[] };
      expect(list.items.map((e) => e.metadata!.name)).toEqual(["p.scheduled"]);
      expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([]);
      const consistent = (await (await relay(describeEvents(pod))).json()) as { items: KubeObject[] };
      expect(consistent.items.map((e) => e.metadata!.name)).toEqual(["p.scheduled"]);
      expect(await asked(`/api/v1/namespaces/${ns}/`, since)).toEqual([
        `list /api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=p,involvedObject.namespace=${ns},involvedObject.uid=${pod.metadata!.uid}&limit=500`,
      ]);
    } finally {
      watch.close();
    }
  });

  it("a list passed upstream, then a watch from its resourceVersion: the hub it makes lists at exactly that resourceVersion, and the watch gets every change after it", async () => {
    const ns = uniqueNamespace("describe");
    const pod = await sim.createPod(ns, "p");
    await eventAbout(pod, "Scheduled");
    const path = describeEvents(pod).replace("&limit=500", "");
    const listed = (await (await relay(path)).json()) as { metadata: { resourceVersion: string } };
    // Changes after the list, before the watch: the hub made for the watch would list after them.
    const pulled = await eventAbout(pod, "Pulled");
    await sim.createPod(ns, "unrelated");
    const since = await mark();
    const watch = await wsWatch(`${path}&watch=1&resourceVersion=${listed.metadata.resourceVersion}`);
    try {
      const first = await watch.events.next();
      expect(first).toMatchObject({ type: "ADDED", object: { metadata: { name: "p.pulled", resourceVersion: pulled.metadata!.resourceVersion } } });
      const started = await asked(`/api/v1/namespaces/${ns}/events`, since);
      expect(started[0]).toBe(
        `list /api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=p,involvedObject.namespace=${ns},involvedObject.uid=${pod.metadata!.uid}&limit=500&resourceVersion=${listed.metadata.resourceVersion}&resourceVersionMatch=Exact`,
      );
    } finally {
      watch.close();
    }
  });
});
