/**
 * @module
 * Strategic merge patch by the published schemas' merge keys and strategies, with the directives
 * kubectl writes; and field validation, which knows every field of what the simulator seeds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, RESOURCES, type Simulator } from "../../src/sim/index.ts";
import { strategicMergePatch } from "../../src/sim/patch.ts";
import { kindSchema } from "../../src/sim/schemas.ts";
import { unknownFields } from "../../src/sim/validation.ts";

const DEPLOYMENT = kindSchema({ group: "apps", version: "v1", kind: "Deployment" });

const deployment = {
  metadata: { name: "d", finalizers: ["a", "b"] },
  spec: {
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } },
    template: {
      spec: {
        containers: [
          { name: "app", image: "app:1", env: [{ name: "A", value: "1" }], ports: [{ containerPort: 80 }] },
          { name: "side", image: "side:1" },
        ],
        tolerations: [{ key: "x" }],
      },
    },
  },
};

describe("strategic merge patch", () => {
  it("merges lists by their merge keys and replaces the others", () => {
    const patched = strategicMergePatch(
      deployment,
      { spec: { template: { spec: { containers: [{ name: "app", image: "app:2", env: [{ name: "B", value: "2" }] }], tolerations: [{ key: "y" }] } } } },
      DEPLOYMENT,
    ) as typeof deployment;
    expect(patched.spec.template.spec.containers).toEqual([
      {
        name: "app",
        image: "app:2",
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
        ports: [{ containerPort: 80 }],
      },
      { name: "side", image: "side:1" },
    ]);
    expect(patched.spec.template.spec.tolerations).toEqual([{ key: "y" }]);
    expect(deployment.spec.template.spec.containers[0]!.image).toBe("app:1");
  });

  it("reads $patch, $retainKeys, $setElementOrder and $deleteFromPrimitiveList", () => {
    const patched = strategicMergePatch(
      deployment,
      {
        metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] },
        spec: {
          strategy: { $retainKeys: ["type"], type: "Recreate" },
          template: {
            spec: {
              "$setElementOrder/containers": [{ name: "side" }, { name: "app" }],
              containers: [
                { name: "app", $patch: "delete" },
                { name: "side", image: "side:2" },
              ],
            },
          },
        },
      },
      DEPLOYMENT,
    ) as typeof deployment;
    expect(patched.metadata.finalizers).toEqual(["b"]);
    expect(patched.spec.strategy).toEqual({ type: "Recreate" });
    expect(patched.spec.template.spec.containers).toEqual([{ name: "side", image: "side:2" }]);
    const replaced = strategicMergePatch(deployment, { spec: { template: { spec: { $patch: "replace", containers: [{ name: "only" }] } } } }, DEPLOYMENT) as typeof deployment;
    expect(replaced.spec.template.spec).toEqual({ containers: [{ name: "only" }] });
  });
});

describe("field validation", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 5 });
  });
  afterAll(() => sim.close());

  it("knows every field of every seeded object, and names the ones it does not", () => {
    for (const def of RESOURCES) for (const object of sim.list(def.id)) expect([def.id, unknownFields(object, kindSchema(def))]).toEqual([def.id, []]);
    expect(unknownFields({ spec: { replica: 1, template: { spec: { containers: [{ name: "a", imag: "x" }] } } } }, DEPLOYMENT)).toEqual(["spec.replica", "spec.template.spec.containers[0].imag"]);
  });
});
