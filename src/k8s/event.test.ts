import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventLine, objectJsonOf, parseEventLine } from "./event.ts";

describe("objectJsonOf", () => {
  it("property: gives back the object's text of every line eventLine writes, as the line splitter hands it over", () => {
    const object = fc.dictionary(fc.string(), fc.jsonValue());
    const type = fc.constantFrom("ADDED" as const, "MODIFIED" as const, "DELETED" as const, "BOOKMARK" as const);
    fc.assert(
      fc.property(type, object, (t, o) => {
        const json = JSON.stringify(o);
        const line = eventLine(t, json).slice(0, -1);
        expect(objectJsonOf(line, t)).toBe(json);
        expect(parseEventLine(line)?.object).toEqual(JSON.parse(json));
      }),
      { seed: 2026, numRuns: 300 },
    );
  });

  it("gives nothing for a line of another shape", () => {
    const json = '{"metadata":{"name":"a"}}';
    expect(objectJsonOf(`{"type":"ADDED","object":${json}}`, "MODIFIED")).toBeUndefined();
    expect(objectJsonOf(`{"type": "ADDED", "object": ${json}}`, "ADDED")).toBeUndefined();
    expect(objectJsonOf(`{"object":${json},"type":"ADDED"}`, "ADDED")).toBeUndefined();
    expect(objectJsonOf(`{"type":"ADDED","object":${json}}\r`, "ADDED")).toBeUndefined();
  });
});
