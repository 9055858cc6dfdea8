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
