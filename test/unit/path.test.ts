import { describe, expect, it } from "vitest";
import { collectionPath, parseApiPath } from "../../src/k8s/path.ts";

describe("parseApiPath", () => {
  it.each([
    ["/api/v1/pods", { group: "", version: "v1", resource: "pods", namespace: undefined, name: undefined }],
    ["/api/v1/namespaces/dev/pods", { resource: "pods", namespace: "dev" }],
    ["/api/v1/namespaces/dev/pods/web-1", { resource: "pods", namespace: "dev", name: "web-1" }],
    ["/api/v1/namespaces/dev/pods/web-1/log", { name: "web-1", subresource: "log" }],
    ["/apis/apps/v1/deployments", { group: "apps", version: "v1", resource: "deployments" }],
    ["/apis/example.com/v1alpha1/namespaces/x/widgets", { group: "example.com", version: "v1alpha1", resource: "widgets", namespace: "x" }],
    ["/api/v1/namespaces", { resource: "namespaces", namespace: undefined, name: undefined }],
    ["/api/v1/namespaces/dev", { resource: "namespaces", namespace: undefined, name: "dev" }],
    ["/api/v1/namespaces/dev/status", { resource: "namespaces", name: "dev", subresource: "status" }],
    ["/api/v1/nodes/node-1", { resource: "nodes", name: "node-1" }],
    ["/api/v1/watch/namespaces/dev/pods", { resource: "pods", namespace: "dev", legacyWatch: true }],
    ["/clusters/prod/api/v1/pods", { cluster: "prod", resource: "pods" }],
  ])("%s", (path, expected) => {
    expect(parseApiPath(path)).toMatchObject({ kind: "resource", cluster: undefined, legacyWatch: false, ...expected });
  });

  it.each(["/version", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/clusters/prod/apis"])("%s is discovery", (path) => {
    expect(parseApiPath(path).kind).toBe("discovery");
  });

  it.each([
    ["/", "not a Kubernetes API path"],
    ["/healthz", "not a Kubernetes API path"],
    ["/api/v1/Pods", "is not a resource name"],
    ["/api/vX/pods", "is not an API version"],
    ["/api/v1/namespaces/Bad_NS/pods", "is not a DNS label"],
    ["/apis/Apps/v1/deployments", "is not an API group name"],
    ["/api/v1/namespaces/a/pods/b/c/d", "more segments"],
    ["/clusters/Bad/api/v1/pods", "DNS label"],
    ["/api/v1/namespaces/a/pods/%zz", "percent-encoding"],
    ["/api/v1/namespaces/a/pods/..", "not a valid object name"],
  ])("%s is rejected", (path, reason) => {
    const parsed = parseApiPath(path);
    expect(parsed.kind).toBe("invalid");
    expect(parsed.kind === "invalid" && parsed.reason).toContain(reason);
  });

  it("builds collection paths back", () => {
    expect(collectionPath({ group: "", version: "v1", resource: "pods", namespace: "a" })).toBe("/api/v1/namespaces/a/pods");
    expect(collectionPath({ group: "apps", version: "v1", resource: "deployments" })).toBe("/apis/apps/v1/deployments");
  });
});
