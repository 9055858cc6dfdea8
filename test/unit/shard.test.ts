import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { admitsEvent, admitsObject, fnv1a64, hexLess, parseShardSelector, ShardSelectorError, stringAt } from "../../src/k8s/shard.ts";

describe("64-bit FNV-1a", () => {
  // The first three are the algorithm's published vectors; the rest are Go's hash/fnv New64a (which the API server uses) of the same bytes.
  it.each([
    ["", "cbf29ce484222325"],
    ["a", "af63dc4c8601ec8c"],
    ["foobar", "85944171f73967e8"],
    ["default", "ebada5168620c5fe"],
    ["kube-system", "df65c7bc1d82b35e"],
    ["3f0c2a4e-6b1d-4c8e-9a57-1d2e3f4a5b6c", "19275a7ace77382a"],
    ["naïve-ünïcode", "bd927b7f855b3c0a"],
    ["😀", "feff073875020288"],
  ])("%j → %s", (value, hash) => {
    expect(fnv1a64(value)).toBe(hash);
  });
});

describe("shardSelector, parsed as the API server parses it", () => {
  it("takes one range, with or without spaces", () => {
    for (const text of [
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
      "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  \"0x8000000000000000\" )  ",
    ]) {
      expect(parseShardSelector(text)).toEqual({ selector: text, field: "uid", ranges: [{ start: "0x0000000000000000", end: "0x8000000000000000" }] });
    }
  });

  it("takes ranges joined with ||, in parentheses or not, and 2^64 as an end", () => {
    const text = "shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || (shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000'))";
    expect(parseShardSelector(text)).toEqual({
      selector: text,
      field: "namespace",
      ranges: [
        { start: "0x0000000000000000", end: "0x4000000000000000" },
        { start: "0x8000000000000000", end: "0x10000000000000000" },
      ],
    });
  });

  it.each([
    ["", "empty shard selector is not allowed"],
    ["   ", "empty shard selector is not allowed"],
    ["shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')", "hexStart must have '0x' prefix"],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')", "hexEnd must have '0x' prefix"],
    ["shardRange(object.metadata.uid, '0x', '0x8000000000000000')", "hexStart: hex value is required after '0x'"],
    ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", 'unsupported field path "object.metadata.name"'],
    ["shardRange(object.metadata.labels, '0x00', '0x80')", 'unsupported field path "object.metadata.labels"'],
    ["invalidFunc(object.metadata.uid, '0x00', '0x80')", 'unsupported function "invalidFunc"'],
    ["shardRange(object.metadata.uid, '0x000000000000000000', '0x80')", "hexStart: hex value too long (18 chars, max 17)"],
    ["shardRange(object.metadata.uid, '0x0g', '0x80')", 'hexStart: invalid hex character "g"'],
    ["shardRange(object.metadata.uid, '0x00000000000000AA', '0x8000000000000000')", 'hexStart: invalid hex character "A"'],
    ["shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', '0xf')", 'unsupported function "_&&_"'],
    ["shardRange(object.metadata.uid, 0, 8)", "hexStart must be a string literal, got int64"],
    ["object.metadata.uid > '0x0'", 'unsupported function "_>_"'],
    ["shardRange(object.metadata.uid, '0x0')", "shardRange() requires exactly 3 arguments, got 2"],
    ["shardRange(object.metadata.uid, hex(0), '0x8')", "hexStart must be a string literal (e.g. '0xff'), got expression kind CallKind"],
    [
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
      'all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"',
    ],
    ["shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", `hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)`],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0xff')", "hexEnd must be a 0x-prefixed 16-digit hex value"],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')", "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64)"],
    ["shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')", "shard range start 0x8000000000000000 must be less than end 0x8000000000000000"],
    ["shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')", "must be less than end"],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'", "CEL parse error"],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') shardRange", "CEL parse error"],
    ["object.metadata.uid", "unexpected expression kind SelectKind"],
  ])("refuses %j: %s", (text, message) => {
    expect(() => parseShardSelector(text)).toThrow(ShardSelectorError);
    expect(() => parseShardSelector(text)).toThrow(message);
  });

  it("refuses a field path that names a property every JavaScript object inherits, as any other it does not support", () => {
    const inherited = fc.constantFrom("constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf");
    fc.assert(
      fc.property(inherited, fc.boolean(), (name, nested) => {
        const path = nested ? `object.${name}` : name;
        expect(() => parseShardSelector(`shardRange(${path}, '0x0000000000000000', '0x8000000000000000')`)).toThrow(`unsupported field path "${path}"`);
      }),
      { seed: 5, numRuns: 50 },
    );
  });
});

describe("bounds and membership", () => {
  it("orders bounds numerically, 2^64 above every 16-digit value", () => {
    expect(hexLess("0x7fffffffffffffff", "0x8000000000000000")).toBe(true);
    expect(hexLess("0xffffffffffffffff", "0x10000000000000000")).toBe(true);
    expect(hexLess("0x8000000000000000", "0x8000000000000000")).toBe(false);
  });

  it("puts an object in the range its field hashes into: start inclusive, end exclusive", () => {
    // "default" hashes to 0xebada5168620c5fe.
    const pod = JSON.stringify({ kind: "Pod", metadata: { name: "p", namespace: "default", uid: "u" }, spec: {} });
    const shard = (start: string, end: string) => ({ field: "namespace" as const, ranges: [{ start, end }] });
    expect(admitsObject(shard("0xebada5168620c5fe", "0xebada5168620c5ff"), pod)).toBe(true);
    expect(admitsObject(shard("0x0000000000000000", "0xebada5168620c5fe"), pod)).toBe(false);
    expect(admitsObject(shard("0xebada5168620c5ff", "0x10000000000000000"), pod)).toBe(false);
  });

  it("hashes a missing field as the empty string (a cluster-scoped object's namespace)", () => {
    const node = JSON.stringify({ metadata: { name: "n1", uid: "x" } });
    const empty = fnv1a64("");
    const next = (BigInt(`0x${empty}`) + 1n).toString(16).padStart(16, "0");
    expect(admitsObject({ field: "namespace", ranges: [{ start: `0x${empty}`, end: `0x${next}` }] }, node)).toBe(true);
  });

  it("passes BOOKMARK and ERROR lines to every shard, and judges the others by their object", () => {
    const none = { field: "uid" as const, ranges: [{ start: "0x0000000000000000", end: "0x0000000000000001" }] };
    expect(admitsEvent(none, '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"5"}}}\n')).toBe(true);
    expect(admitsEvent(none, '{"type":"ERROR","object":{"kind":"Status","code":410}}\n')).toBe(true);
    expect(admitsEvent(none, '{"type":"ADDED","object":{"metadata":{"name":"a","uid":"u"}}}\n')).toBe(false);
    const all = { field: "uid" as const, ranges: [{ start: "0x0000000000000000", end: "0x10000000000000000" }] };
    expect(admitsEvent(all, '{"type":"DELETED","object":{"metadata":{"name":"a","uid":"u"}}}\n')).toBe(true);
  });
});

describe("stringAt", () => {
  it("finds a nested string past values of every kind, and decodes escapes", () => {
    const json = JSON.stringify({
      kind: "Pod",
      spec: { a: [1, { "b}": "c]" }, null, true], s: 'quote " and \\' },
      n: -1.5e3,
      metadata: { annotations: { uid: "not this" }, "u\u00efd": "x", uid: 'a"b' },
    });
    expect(stringAt(json, ["metadata", "uid"])).toBe('a"b');
    expect(stringAt(json, ["metadata", "uïd"])).toBe("x");
    expect(stringAt(json, ["metadata", "namespace"])).toBeUndefined();
    expect(stringAt(json, ["kind", "x"])).toBeUndefined();
    expect(stringAt(`{ "object" : { "metadata" : { "uid" : "spaced" } } }`, ["object", "metadata", "uid"])).toBe("spaced");
  });
});
