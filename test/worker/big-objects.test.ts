/**
 * Collections of big objects (Helm's release ConfigMaps and Secrets, Grafana dashboards, CRDs):
 * objects up to the API server's 1.5 MiB, pages of them far past what one isolate's 128 MB can
 * hold whole, and an object too big for one row of the hub's storage. The test shares the
 * relay's isolate, so it reads every list as a stream, an item at a time.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hubName, watchKey } from "../../src/k8s/key.ts";
import { ListItems } from "../../src/k8s/list-items.ts";
import { LineSplitter } from "../../src/k8s/ndjson.ts";
import type { KubeObject, Status, WatchEvent } from "../../src/k8s/types.ts";
import { eventually, httpWatch, relay, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** A ConfigMap named `name` with `bytes` of data. */
const configMap = (name: string, bytes: number, labels: Record<string, string> = {}, fill = "x"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data: { blob: fill.repeat(bytes) },
});

/** `count` ConfigMaps of about `bytes` of data each in `ns`, named `cm-00`, `cm-01`, ... */
async function seed(ns: string, count: number, bytes: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `cm-${String(i).padStart(2, "0")}`;
    // A different first character each, so no two objects' JSON is alike.
    await sim.create(configMaps(ns), configMap(name, bytes, {}, String.fromCharCode(97 + (i % 26))));
    names.push(name);
  }
  return names;
}

/** Frees the simulator's memory: its objects are this file's only. */
async function unseed(ns: string, names: string[]): Promise<void> {
  for (const name of names) await sim.delete(`${configMaps(ns)}/${name}`);
}

/** A list response read as a stream: its status, and (a list) how many items, their names and its bytes. */
async function readList(path: string): Promise<{ status: number; names: string[]; bytes: number; text?: string }> {
  let response = await relay(path);
  // A big collection's first list can outlast a request's wait for it: asked again, as a client would.
  for (let tries = 0; response.status === 503 && tries < 10; tries++) {
    const text = await response.text();
    if (!text.includes("still listing")) return { status: 503, names: [], bytes: 0, text };
    response = await relay(path);
  }
  if (response.status !== 200 || !response.body) return { status: response.status, names: [], bytes: 0, text: await response.text() };
  const items = new ListItems();
  const names: string[] = [];
  let bytes = 0;
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    bytes += chunk.length;
    for (const item of items.push(decoder.decode(chunk, { stream: true })).items) {
      names.push(/"name":"([^"]*)"/.exec(item)?.[1] ?? "");
    }
  }
  expect(items.ended, `the list body of ${path} ends (${bytes} bytes read)`).toBe(true);
  return { status: 200, names, bytes };
}

/** The names of the first `count` ADDED events of a watch of `path` from now, each line read and let go. */
async function initialNames(path: string, count: number): Promise<string[]> {
  const response = await relay(`${path}?watch=1`);
  expect(response.status).toBe(200);
  const names: string[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const lines = new LineSplitter();
  try {
    while (names.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const line of lines.push(value)) if (line.startsWith('{"type":"ADDED"')) names.push(/"name":"([^"]*)"/.exec(line)?.[1] ?? "");
    }
  } finally {
    await reader.cancel();
  }
  return names;
}

describe("big objects", () => {
  it("a namespace of 70 ConfigMaps of 1.2 MB (84 MB a page) lists through one isolate's 128 MB", { timeout: 120_000 }, async () => {
    const ns = uniqueNamespace("bigpage");
    const names = await seed(ns, 70, 1_200_000);
    try {
      const list = await readList(configMaps(ns));
      expect(list.status).toBe(200);
      expect(list.names).toEqual(names);
      expect(list.bytes).toBeGreaterThan(70 * 1_200_000);
      // A watch from now: the same objects as ADDED events first, read from storage a few at a time.
      expect(await initialNames(configMaps(ns), names.length)).toEqual(names);
    } finally {
      await unseed(ns, names);
    }
  });

  it("9 ConfigMaps of 1.2 MB list with kubectl's limit=500, in their namespace and cluster-wide", { timeout: 60_000 }, async () => {
    const ns = uniqueNamespace("bigjoin");
    const names = await seed(ns, 9, 1_200_000);
    try {
      const paged = await readList(`${configMaps(ns)}?limit=500`);
      expect(paged.status).toBe(200);
      expect(paged.names).toEqual(names);
      const whole = await readList(configMaps(ns));
      expect(whole.names).toEqual(names);
      const clusterWide = await readList("/api/v1/configmaps?limit=500");
      expect(clusterWide.status).toBe(200);
      expect(clusterWide.names.filter((name) => names.includes(name)).length).toBeGreaterThanOrEqual(9);
    } finally {
      await unseed(ns, names);
    }
  });

  it("an object at the API server's 1.5 MiB is listed, got and watched", { timeout: 60_000 }, async () => {
    const ns = uniqueNamespace("bigone");
    // 1.5 MiB of JSON in all, as the API server's object limit.
    const created = await sim.create(configMaps(ns), configMap("big", 1_572_864 - 300));
    try {
      expect(JSON.stringify(created).length).toBeGreaterThan(1_572_864 - 300);
      const list = await readList(configMaps(ns));
      expect([list.status, list.names]).toEqual([200, ["big"]]);
      const got = await relay(`${configMaps(ns)}/big`);
      expect([got.status, ((await got.json()) as { data: { blob: string } }).data.blob.length]).toEqual([200, 1_572_864 - 300]);
      const watch = await httpWatch(`${configMaps(ns)}?watch=1&resourceVersion=${created.metadata?.resourceVersion}`);
      try {
        await sim.patch(`${configMaps(ns)}/big`, { data: { blob: "y".repeat(1_572_864 - 300) } });
        const modified = (await watch.events.until((e) => e.type === "MODIFIED", "the big object's change")).at(-1) as WatchEvent;
        expect((modified.object as { data: { blob: string } }).data.blob).toBe("y".repeat(1_572_864 - 300));
      } finally {
        watch.close();
      }
    } finally {
      await unseed(ns, ["big"]);
    }
  });

  it("an object too big for a row of the hub's storage: its collection's reads get a Status naming the limit, and the hub takes the collection again once the object is small", {
    timeout: 90_000,
  }, async () => {
    const ns = uniqueNamespace("toobig");
    await sim.create(configMaps(ns), configMap("small", 10, { size: "small" }));
    await sim.create(configMaps(ns), configMap("big", 2_100_000, { size: "big" }));
    try {
      const refused = await relay(configMaps(ns));
      expect(refused.status).toBe(503);
      const status = (await refused.json()) as Status;
      expect(status).toMatchObject({ kind: "Status", code: 503, reason: "ServiceUnavailable" });
      expect(status.message).toMatch(
        new RegExp(
          `the upstream object ${ns}/big is 2,1\\d\\d,\\d\\d\\d bytes or more as JSON, over the 1,995,904 bytes a relay hub stores an object in \\(Durable Object SQL holds at most 2 MB a row\\)`,
        ),
      );
      expect(status.message).toContain("a label or field selector that leaves the object out");
      // Another key of the same namespace (the selector leaves it out) is served meanwhile.
      const others = await readList(`${configMaps(ns)}?labelSelector=size%3Dsmall`);
      expect([others.status, others.names]).toEqual([200, ["small"]]);
      await sim.patch(`${configMaps(ns)}/big`, { data: { blob: "small now" } });
      const served = await eventually(async () => {
        const list = await readList(configMaps(ns));
        return list.status === 200 && list;
      }, "the hub to list the collection once the object is small");
      expect(served.names).toEqual(["big", "small"]);
    } finally {
      await unseed(ns, ["small", "big"]);
    }
  });

  it("an object that grows past a row while watched: the watch's subscribers keep their state, consistent reads get the Status, and reads at resourceVersion=0 the state before it", {
    timeout: 90_000,
  }, async () => {
    const ns = uniqueNamespace("grows");
    const created = await sim.create(configMaps(ns), configMap("grows", 10));
    // A subscriber from the object's creation: it keeps the hub watching, and sees no gap.
    const watch = await httpWatch(`${configMaps(ns)}?watch=1&resourceVersion=${created.metadata?.resourceVersion}&allowWatchBookmarks=true`);
    try {
      await sim.patch(`${configMaps(ns)}/grows`, { data: { blob: "x".repeat(2_100_000) } });
      const refused = await eventually(async () => {
        const response = await relay(configMaps(ns));
        return response.status === 503 && ((await response.json()) as Status);
      }, "the hub to refuse the grown object");
      expect(refused.message).toMatch(/the upstream object .*\/grows is [\d,]+ bytes .*2 MB a row.*served with resourceVersion=0/);
      const before = (await (await relay(`${configMaps(ns)}?resourceVersion=0`)).json()) as { items: KubeObject[] };
      expect(before.items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion])).toEqual([["grows", created.metadata?.resourceVersion]]);
      // The operators' index of hubs shows it too: the hub's last upstream error, as its heartbeat reports it.
      type Entry = { key: string; lastError?: { status: number; message: string } };
      const hub = env.WATCH_HUB.getByName(
        hubName(watchKey({ cluster: "default", group: "", version: "v1", resource: "configmaps", namespace: ns, namespaced: true, labelSelector: null, fieldSelector: null })),
      );
      const entry = await eventually(async () => {
        await runDurableObjectAlarm(hub);
        const hubs = ((await (await relay("/_relay/hubs")).json()) as { hubs: Entry[] }).hubs;
        return hubs.find((h) => h.key === `default:${configMaps(ns)}` && h.lastError?.status === 413);
      }, "the hub index to show the refusal");
      expect(entry.lastError?.message).toMatch(/\/grows is [\d,]+ bytes .*2 MB a row/);
      // Small again: the hub lists, and the subscriber gets the change as an event, after nothing else.
      await sim.patch(`${configMaps(ns)}/grows`, { data: { blob: "small again" } });
      const events = await watch.events.until((e) => e.type === "MODIFIED", "the object's change once it is small again");
      expect(events.filter((e) => e.type !== "BOOKMARK").map((e) => [e.type, (e.object as { data?: { blob?: string } }).data?.blob])).toEqual([["MODIFIED", "small again"]]);
    } finally {
      watch.close();
      await unseed(ns, ["grows"]);
    }
  });
});
