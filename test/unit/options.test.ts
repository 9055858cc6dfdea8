import { describe, expect, it } from "vitest";
import { isWatch, parseListOptions, parseWatchOptions } from "../../src/k8s/options.ts";

const q = (s: string) => new URLSearchParams(s);

describe("watch flag", () => {
  it.each([
    ["watch=1", true],
    ["watch=true", true],
    ["watch", true],
    ["watch=false", false],
    ["watch=0", false],
    ["", false],
  ])("%s → %s", (s, v) => {
    expect(isWatch(q(s))).toBe(v);
  });
});

describe("list options", () => {
  it("parses resourceVersion, limit and continue", () => {
    expect(parseListOptions(q("resourceVersion=0&limit=500"))).toEqual({
      ok: true,
      value: { resourceVersion: { kind: "zero" }, resourceVersionMatch: undefined, limit: 500, continue: undefined },
    });
  });

  it.each([
    ["resourceVersionMatch=NotOlderThan", "resourceVersionMatch is forbidden unless resourceVersion is provided"],
    ["resourceVersion=5&resourceVersionMatch=Exact&continue=abc", "resourceVersionMatch is forbidden when continue is provided"],
    ["resourceVersion=0&resourceVersionMatch=Exact", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
    ["resourceVersion=5&resourceVersionMatch=Newest", "supported values"],
    ["sendInitialEvents=true", "sendInitialEvents is forbidden for list"],
  ])("%s → 422", (s, message) => {
    const r = parseListOptions(q(s));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status.code).toBe(422);
      expect(r.status.reason).toBe("Invalid");
      expect(r.status.message).toContain(message);
      expect(r.status.details?.kind).toBe("ListOptions");
    }
  });

  it.each(["resourceVersion=abc", "resourceVersion=-1", "limit=ten"])("%s → 400", (s) => {
    const r = parseListOptions(q(s));
    expect(!r.ok && r.status.code).toBe(400);
  });
});

describe("watch options", () => {
  it("parses a watch-list request", () => {
    const r = parseWatchOptions(q("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300"));
    expect(r).toEqual({
      ok: true,
      value: { resourceVersion: { kind: "unset" }, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true, sendInitialEvents: true, timeoutSeconds: 300, compact: false },
    });
  });

  it("treats a resourceVersion beyond 2^53 as ahead of everything, and keeps it through JSON", () => {
    const r = parseWatchOptions(q("resourceVersion=18446744073709551615"));
    expect(r.ok && JSON.parse(JSON.stringify(r.value.resourceVersion))).toEqual({ kind: "exact", rv: Number.MAX_VALUE });
  });

  it.each([
    ["sendInitialEvents=true", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"],
    ["resourceVersion=1&resourceVersionMatch=NotOlderThan", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"],
  ])("%s → 422", (s, message) => {
    const r = parseWatchOptions(q(s));
    expect(!r.ok && r.status.message).toContain(message);
  });
});
