/**
 * The benchmark's list client: items counted in the bytes as they arrive, whatever the chunks,
 * and paged lists followed through their continue tokens to the whole collection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ItemCounter, pagedList, timedList } from "../../bench/listing.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";

describe("the benchmark's list client", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ initial: { namespaces: ["listed"], podsPerNamespace: 8 } });
    const [seed] = sim.list("pods", "listed");
    if (!seed) throw new Error("no pod seeded");
    for (let i = 0; i < 1200; i++) sim.create("pods", { ...seed, metadata: { ...seed.metadata, name: `copy-${i}` } });
  });
  afterAll(() => sim.close());

  it("counts a list's items in its bytes however they are cut into chunks, never a name elsewhere", () => {
    const list = Buffer.from(
      JSON.stringify({
        kind: "PodList",
        metadata: { resourceVersion: "7" },
        items: Array.from({ length: 300 }, (_, i) => ({ metadata: { name: `p${i}`, ownerReferences: [{ name: "rs" }] }, spec: { containers: [{ name: "c" }] } })),
      }),
    );
    for (const size of [1, 5, 19, 20, 4096, list.length]) {
      const counter = new ItemCounter();
      for (let at = 0; at < list.length; at += size) counter.push(list.subarray(at, at + size));
      expect(counter.items, `chunks of ${size}`).toBe(300);
    }
  });

  it("reads a whole list to its last byte, and a paged one through every continue token", async () => {
    const url = `${sim.url}/api/v1/namespaces/listed/pods`;
    const whole = await timedList(url);
    expect(whole.items).toBe(sim.list("pods", "listed").length);
    expect(whole.firstByteMs).toBeLessThanOrEqual(whole.ms);
    const paged = await pagedList(url, 500);
    expect([paged.items, paged.pages]).toEqual([whole.items, Math.ceil(whole.items / 500)]);
    expect(paged.metadata?.continue ?? "").toBe("");
    await expect(timedList(`${sim.url}/api/v1/namespaces/listed/nothings`)).rejects.toThrow(/HTTP 404/);
  });
});
