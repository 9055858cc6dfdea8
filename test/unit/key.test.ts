import { describe, expect, it } from "vitest";
import { describeKey, hubName, upstreamCollectionUrl, watchKey, type KeyInput } from "../../src/k8s/key.ts";
import { SelectorError } from "../../src/k8s/labels.ts";

const input = (labelSelector: string | null, fieldSelector: string | null = null, extra: Partial<KeyInput> = {}): KeyInput => ({
  cluster: undefined,
  group: "",
  version: "v1",
  resource: "pods",
  namespace: "dev",
  namespaced: true,
  labelSelector,
  fieldSelector,
  ...extra,
});

describe("watch keys", () => {
  it("equivalent selectors share one hub", () => {
    const names = ["a=1,b=2", "b=2, a=1", "b==2,a in (1)", " a = 1 , b = 2 "].map((s) => hubName(watchKey(input(s))));
    expect(new Set(names).size).toBe(1);
    expect(hubName(watchKey(input(null, "status.phase==Running,metadata.name=x")))).toBe(hubName(watchKey(input(null, "metadata.name=x,status.phase=Running"))));
  });

  it("different selectors, namespaces, clusters and groups get different hubs", () => {
    const names = [
      watchKey(input("a=1")),
      watchKey(input("a=2")),
      watchKey(input("a=1", null, { namespace: undefined })),
      watchKey(input("a=1", null, { cluster: "prod" })),
      watchKey(input("a=1", null, { group: "apps", resource: "deployments" })),
      watchKey(input("a=1", "status.phase=Running")),
    ].map(hubName);
    expect(new Set(names).size).toBe(names.length);
  });

  it("rejects invalid selectors with the API server's message", () => {
    expect(() => watchKey(input("app:monolith"))).toThrow(SelectorError);
    expect(() => watchKey(input(null, "spec.foo=bar"))).toThrow("field label not supported: spec.foo");
  });

  it.each([
    ["a NUL ending a label selector (which Go's lexer takes for the end)", "app=web\0", null, '"\\x00" at position 7'],
    ["a NUL where a label selector starts (Go: select everything)", "\0app=web", null, "position 0"],
    ["a control character in a field value", null, "metadata.name=a\x01b", '"\\x01" at position 15'],
    ["a NUL in a field value", null, "metadata.name=a\0b", "field selector"],
    ["a tab in a field value (no whitespace in the field grammar)", null, "metadata.name=a\tb", '"\\t"'],
    ["DEL in a field value", null, "metadata.name=a\x7f", '"\\x7f"'],
    ["a C1 control in a field value", null, "metadata.name=a\u0085", '"\\u0085"'],
  ])("refuses %s (400, before any hub)", (_, labels, fields, message) => {
    expect(() => watchKey(input(labels, fields))).toThrow(SelectorError);
    expect(() => watchKey(input(labels, fields))).toThrow(message);
  });

  it("keeps the whitespace the label grammar allows between tokens", () => {
    expect(watchKey(input("a=1,\tb in (x,\r\ny)\n")).labelSelector).toBe("a=1,b in (x,y)");
  });

  it("describes the upstream collection it watches", () => {
    const key = watchKey(input("b=2,a=1"));
    expect(upstreamCollectionUrl(key, { watch: "1" })).toBe("/api/v1/namespaces/dev/pods?labelSelector=a%3D1%2Cb%3D2&watch=1");
    expect(describeKey(key)).toBe("default:/api/v1/namespaces/dev/pods?labelSelector=a%3D1%2Cb%3D2");
  });
});
