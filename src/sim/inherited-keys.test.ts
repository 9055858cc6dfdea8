import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import { canonicalObject } from "./meta.ts";
import { jsonPatch, mergePatch } from "./patch.ts";

/** Keys every JavaScript object "has" through its prototype: a patch reaches them only as an object's own. */
const inherited = fc.constantFrom("constructor", "__proto__", "toString", "hasOwnProperty", "valueOf");
/** A pod as the simulator stores it (parsed JSON: plain objects, with no such keys of their own). */
const pod = () => JSON.parse('{"metadata":{"name":"p","labels":{"app":"web"}},"spec":{"containers":[]}}') as { metadata: { labels: Record<string, string> } };

const refusal = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (e) {
    if (e instanceof ApiError) return `${e.status.code} ${e.status.message}`;
    throw e;
  }
};

describe("the simulator's objects, with keys named like inherited properties", () => {
  it("merge patch sets and removes such a key as an object's own, and leaves prototypes alone", () => {
    fc.assert(
      fc.property(inherited, (key) => {
        const patch = JSON.parse(`{"metadata":{"labels":{${JSON.stringify(key)}:"x"}}}`) as unknown;
        const patched = mergePatch(pod(), patch) as ReturnType<typeof pod>;
        expect(Object.hasOwn(patched.metadata.labels, key)).toBe(true);
        expect(JSON.parse(JSON.stringify(patched.metadata.labels))).toEqual(JSON.parse(`{"app":"web",${JSON.stringify(key)}:"x"}`));
        const removed = mergePatch(patched, JSON.parse(`{"metadata":{"labels":{${JSON.stringify(key)}:null}}}`)) as ReturnType<typeof pod>;
        expect(JSON.stringify(removed.metadata.labels)).toBe('{"app":"web"}');
        expect(Object.getPrototypeOf(removed.metadata.labels)).toBe(Object.prototype);
      }),
      { seed: 7, numRuns: 30 },
    );
  });

  it("JSON patch adds such a key as an object's own, and finds none that the object does not have", () => {
    fc.assert(
      fc.property(inherited, (key) => {
        const added = jsonPatch(pod(), [{ op: "add", path: `/metadata/labels/${key}`, value: "x" }]) as ReturnType<typeof pod>;
        expect(JSON.stringify(added.metadata.labels)).toBe(`{"app":"web",${JSON.stringify(key)}:"x"}`);
        expect(Object.getPrototypeOf(added.metadata.labels)).toBe(Object.prototype);
        for (const ops of [
          [{ op: "remove", path: `/metadata/labels/${key}` }],
          [{ op: "replace", path: `/metadata/labels/${key}`, value: "x" }],
          [{ op: "test", path: `/metadata/labels/${key}`, value: "x" }],
          [{ op: "copy", from: `/metadata/${key}`, path: "/metadata/labels/copied" }],
          [{ op: "add", path: `/metadata/${key}/polluted`, value: "x" }],
        ]) {
          expect(refusal(() => jsonPatch(pod(), ops))).toMatch(/^422 .*does not exist/);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { seed: 7, numRuns: 30 },
    );
  });

  it("keeps such a key where it writes an object in the API server's key order, built-in or custom", () => {
    fc.assert(
      fc.property(inherited, fc.boolean(), (key, custom) => {
        const text = `{"kind":"Pod","metadata":{"name":"p",${JSON.stringify(key)}:"m","labels":{${JSON.stringify(key)}:"x","app":"web"}},"spec":{${JSON.stringify(key)}:{"a":1}}}`;
        const written = canonicalObject(JSON.parse(text) as KubeObject, custom);
        expect(JSON.parse(JSON.stringify(written))).toEqual(JSON.parse(text));
        expect(Object.getPrototypeOf(written.metadata?.labels)).toBe(Object.prototype);
      }),
      { seed: 7, numRuns: 30 },
    );
  });
});
