/**
 * @module
 * YAML through the relay (`Accept: application/yaml`): lists written an item at a time and
 * objects whole, each exactly the YAML the API server makes of the JSON (test/unit/yaml.test.ts
 * holds the conversion to go-yaml's own output); errors in YAML as the API server negotiates
 * them; a YAML watch is the API server's 406.
 */
import { describe, expect, it } from "vitest";
import { jsonToYaml } from "../../src/k8s/yaml.ts";
import { podsPath } from "../kit/paths.ts";
import { shardSelector } from "../kit/shards.ts";
import { relay, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();
const YAML = { accept: "application/yaml" };

async function podsIn(count: number): Promise<string> {
  const ns = uniqueNamespace("yaml");
  for (let i = 0; i < count; i++) await sim.createPod(ns, `p${i}`, { app: "web", "index.example.com/n": String(i) });
  return ns;
}

/** The relay's JSON and YAML of one snapshot of a collection. */
async function both(path: string, query = ""): Promise<{ json: string; yaml: Response }> {
  const json = await (await relay(`${path}?${query}`)).text();
  const rv = (JSON.parse(json) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const yaml = await relay(`${path}?resourceVersion=${rv}&resourceVersionMatch=Exact${query ? `&${query}` : ""}`, { headers: YAML });
  return { json, yaml };
}

describe("YAML (Accept: application/yaml)", () => {
  it("a list, written as it streams from the hub, is the API server's YAML of the same list", async () => {
    const ns = await podsIn(120);
    const { json, yaml } = await both(podsPath(ns));
    expect([yaml.status, yaml.headers.get("content-type")]).toEqual([200, "application/yaml"]);
    const text = await yaml.text();
    expect(text).toBe(jsonToYaml(json));
    expect(text.startsWith("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n")).toBe(true);
    expect(text).toMatch(/\nkind: PodList\nmetadata:\n {2}resourceVersion: "\d+"\n$/);
  });

  it("pages, an empty list and a shard's list keep their metadata", async () => {
    const ns = await podsIn(6);
    const page = await both(podsPath(ns), "limit=2");
    expect(await page.yaml.text()).toBe(jsonToYaml(page.json));
    const selector = encodeURIComponent(shardSelector(0, 2));
    const shard = await both(podsPath(ns), `shardSelector=${selector}`);
    const text = await shard.yaml.text();
    expect(text).toBe(jsonToYaml(shard.json));
    expect(text).toContain(`  shardInfo:\n    selector: shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')\n`);
    const empty = await relay(podsPath(uniqueNamespace("yaml")), { headers: YAML });
    expect(await empty.text()).toMatch(/^apiVersion: v1\nitems: \[\]\nkind: PodList\nmetadata:\n {2}resourceVersion: "\d+"\n$/);
  });

  it("one object, and an Accept that prefers YAML over JSON", async () => {
    const ns = await podsIn(1);
    const json = await (await relay(`${podsPath(ns)}/p0`)).text();
    const yaml = await relay(`${podsPath(ns)}/p0`, { headers: { accept: "application/yaml, application/json" } });
    expect(yaml.headers.get("content-type")).toBe("application/yaml");
    expect(await yaml.text()).toBe(jsonToYaml(json));
    // JSON first, JSON it is.
    const preferred = await relay(`${podsPath(ns)}/p0`, { headers: { accept: "application/json, application/yaml" } });
    expect(preferred.headers.get("content-type")).toBe("application/json");
  });

  it("errors are Status objects in YAML, as the API server negotiates them", async () => {
    const ns = await podsIn(1);
    const missing = await relay(`${podsPath(ns)}/nope`, { headers: YAML });
    expect([missing.status, missing.headers.get("content-type")]).toEqual([404, "application/yaml"]);
    expect(await missing.text()).toBe(
      `apiVersion: v1\ncode: 404\ndetails:\n  kind: pods\n  name: nope\nkind: Status\nmessage: pods "nope" not found\nmetadata: {}\nreason: NotFound\nstatus: Failure\n`,
    );
    const bad = await relay(`${podsPath(ns)}?labelSelector=${encodeURIComponent("a in (")}`, { headers: YAML });
    expect([bad.status, bad.headers.get("content-type")]).toEqual([400, "application/yaml"]);
    expect(await bad.text()).toMatch(/^apiVersion: v1\ncode: 400\nkind: Status\nmessage: /);
    const unknown = await relay("/api/v1/widgets", { headers: YAML });
    expect([unknown.status, unknown.headers.get("content-type")]).toEqual([404, "application/yaml"]);
  });

  it("a YAML watch is a 406 naming the stream type there is, in YAML; before any upstream request", async () => {
    const ns = uniqueNamespace("yaml");
    const { next } = await sim.requests(podsPath(ns));
    const response = await relay(`${podsPath(ns)}?watch=1`, { headers: YAML });
    expect([response.status, response.headers.get("content-type")]).toEqual([406, "application/yaml"]);
    expect(await response.text()).toBe(
      "apiVersion: v1\ncode: 406\nkind: Status\nmessage: 'only the following media types are accepted: application/json;stream=watch'\nmetadata: {}\nreason: NotAcceptable\nstatus: Failure\n",
    );
    expect((await sim.requests(podsPath(ns), next)).requests).toEqual([]);
  });
});
