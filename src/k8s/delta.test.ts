import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyDelta, deltaLine, parseDelta } from "./delta.ts";
import { eventLine } from "./event.ts";
import type { KubeObject } from "./types.ts";

/** An object's versions: fields come, go and change, at any depth (JSON values, no nulls: merge patches use null to delete). */
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, fc.string(), fc.integer(), fc.boolean(), fc.array(tie("value"), { maxLength: 3 }), tie("object")),
  object: fc.dictionary(fc.constantFrom("a", "b", "c", "spec", "status"), tie("value"), { maxKeys: 4 }),
})).object;

const pod = (rv: number, body: Record<string, unknown>): KubeObject =>
  ({ kind: "Pod", apiVersion: "v1", metadata: { namespace: "ns", name: "p", uid: "u1", resourceVersion: String(rv) }, ...body }) as KubeObject;

/** JSON with every object's keys in order: two values alike whatever order their keys came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`)
    .join(",")}}`;
}

describe("delta lines", () => {
  it("applied to the version they name, give the next one", () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const before = pod(1, a);
        const after = pod(2, b);
        const line = deltaLine(before, after, eventLine("MODIFIED", JSON.stringify(after)) + "x".repeat(10_000));
        const delta = parseDelta(line!);
        expect(delta?.base).toBe("1");
        expect(applyDelta(before, delta!)).toEqual(after);
        expect(before).toEqual(pod(1, a)); // the version it was applied to is left as it was
      }),
      { seed: 20261123, numRuns: 200 },
    );
  });

  it("carry keys named like inherited properties as any other, and are not made where a null in an object would read as a removal", () => {
    const named = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, fc.string(), fc.integer(), fc.constant(null), fc.array(tie("value"), { maxLength: 3 }), tie("object")),
      object: fc.dictionary(fc.constantFrom("a", "constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"), tie("value"), { maxKeys: 4 }),
    })).object;
    fc.assert(
      fc.property(named, named, (a, b) => {
        // As a watch line is read: keys named like inherited properties are the objects' own.
        const before = JSON.parse(JSON.stringify(pod(1, a))) as KubeObject;
        const after = JSON.parse(JSON.stringify(pod(2, b))) as KubeObject;
        const line = deltaLine(before, after, eventLine("MODIFIED", JSON.stringify(after)) + "x".repeat(10_000));
        if (line === undefined) {
          expect(JSON.stringify(after)).toContain("null");
          return;
        }
        const applied = applyDelta(before, parseDelta(line)!);
        expect(canonical(applied)).toBe(canonical(after));
        expect(Object.getPrototypeOf(applied)).toBe(Object.prototype);
      }),
      { seed: 20261129, numRuns: 300 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("are not made when the whole object is as short, and ordinary events are not taken for them", () => {
    const before = pod(1, { spec: "x" });
    const after = pod(2, { spec: "y" });
    const full = eventLine("MODIFIED", JSON.stringify(after));
    expect(deltaLine(before, after, full)).toBeDefined();
    expect(deltaLine(before, after, full.slice(0, 60))).toBeUndefined();
    expect(parseDelta(eventLine("MODIFIED", JSON.stringify({ ...after, base: "a field named base", patch: {} })))).toBeUndefined();
    expect(parseDelta('{"type":"MODIFIED","base":"1","object":{}}')).toBeUndefined();
  });
});
