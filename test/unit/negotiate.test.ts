/**
 * @module
 * Accept negotiation with the headers real clients send: kubectl's Table and discovery Accepts,
 * kube components' protobuf-then-JSON, protobuf alone.
 */
import { describe, expect, it } from "vitest";
import { negotiate } from "../../src/k8s/negotiate.ts";

const KUBECTL_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const KUBECTL_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const RESOURCES = { table: true, aggregated: false };

describe("negotiate", () => {
  it("gives kubectl the v1 Table it asks for first, and v1beta1 to a client that only takes that", () => {
    expect(negotiate(KUBECTL_TABLE, RESOURCES)).toEqual({ kind: "table", version: "v1", contentType: "application/json;as=Table;v=v1;g=meta.k8s.io" });
    expect(negotiate("application/json;as=Table;v=v1beta1;g=meta.k8s.io", RESOURCES)).toMatchObject({ kind: "table", version: "v1beta1" });
    expect(negotiate(KUBECTL_TABLE, { table: false, aggregated: false })).toEqual({ kind: "json" });
  });

  it("answers kube components' protobuf-then-JSON with JSON, and protobuf alone with nothing (406)", () => {
    expect(negotiate("application/vnd.kubernetes.protobuf, application/json", RESOURCES)).toEqual({ kind: "json" });
    expect(negotiate("application/vnd.kubernetes.protobuf", RESOURCES)).toBeUndefined();
    expect(negotiate("application/yaml", RESOURCES)).toBeUndefined();
    // A Table in a group/version that has none is as unacceptable as protobuf.
    expect(negotiate("application/json;as=Table;v=v2;g=meta.k8s.io", RESOURCES)).toBeUndefined();
  });

  it("treats no Accept, */* and application/* as JSON, and skips ranges with q=0", () => {
    expect(negotiate(undefined, RESOURCES)).toEqual({ kind: "json" });
    expect(negotiate("*/*", RESOURCES)).toEqual({ kind: "json" });
    expect(negotiate("application/json, */*", RESOURCES)).toEqual({ kind: "json" });
    expect(negotiate("application/json;q=0", RESOURCES)).toBeUndefined();
  });

  it("offers YAML where it is allowed, in the client's order, and never a YAML Table", () => {
    const yaml = { ...RESOURCES, yaml: true };
    expect(negotiate("application/yaml", yaml)).toEqual({ kind: "yaml" });
    expect(negotiate("application/yaml, application/json", yaml)).toEqual({ kind: "yaml" });
    expect(negotiate("application/json, application/yaml", yaml)).toEqual({ kind: "json" });
    expect(negotiate("application/vnd.kubernetes.protobuf, application/yaml", yaml)).toEqual({ kind: "yaml" });
    expect(negotiate("application/yaml;as=Table;v=v1;g=meta.k8s.io", yaml)).toBeUndefined();
    expect(negotiate("application/yaml;q=0", yaml)).toBeUndefined();
  });

  it("offers aggregated discovery only where it is allowed", () => {
    expect(negotiate(KUBECTL_DISCOVERY, { table: false, aggregated: true })).toEqual({ kind: "aggregated" });
    expect(negotiate(KUBECTL_DISCOVERY, { table: false, aggregated: false })).toEqual({ kind: "json" });
  });
});
