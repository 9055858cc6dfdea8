import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HeldObjects } from "./held.ts";
import type { KubeResource } from "./types.ts";

const at = (name: string, rv: number, namespace = "ns"): KubeResource => ({ metadata: { namespace, name, resourceVersion: String(rv) } });

describe("held objects", () => {
  it("find the version held of each object by its resourceVersion, and no other", () => {
    // Writes to a few objects in two namespaces, each with the next resourceVersion, as a watch delivers them.
    const write = fc.record({ name: fc.constantFrom("a", "b", "c"), namespace: fc.constantFrom("x", "y"), deleted: fc.boolean() });
    fc.assert(
      fc.property(fc.array(write, { maxLength: 40 }), (writes) => {
        const held = new HeldObjects();
        const model = new Map<string, KubeResource>();
        writes.forEach(({ name, namespace, deleted }, i) => {
          const object = at(name, i + 1, namespace);
          if (deleted) {
            held.remove(object);
            model.delete(`${namespace}/${name}`);
          } else {
            held.put(object);
            model.set(`${namespace}/${name}`, object);
          }
        });
        const current = new Set([...model.values()].map((object) => object.metadata!.resourceVersion));
        for (let rv = 1; rv <= writes.length; rv++) {
          const found = held.at(String(rv));
          if (current.has(String(rv))) expect(found?.metadata?.resourceVersion).toBe(String(rv));
          else expect(found).toBeUndefined();
        }
      }),
      { seed: 20261124, numRuns: 300 },
    );
  });

  it("hold exactly a list's items after a replace", () => {
    const held = new HeldObjects();
    held.put(at("gone", 1));
    held.replace([at("a", 5), at("b", 6)]);
    expect(held.at("1")).toBeUndefined();
    expect(held.at("5")?.metadata?.name).toBe("a");
    expect(held.at("6")?.metadata?.name).toBe("b");
  });
});
