import { describe, expect, it } from "vitest";
import { statsUrl } from "../../src/client/index.ts";
import { collectionUrl, viewUrl, watchUrl } from "../../src/client/url.ts";

describe("collection URLs", () => {
  it("normalise to http(s), keeping only the selectors", () => {
    expect(collectionUrl("ws://relay:8787/api/v1/pods?watch=1&resourceVersion=5&labelSelector=app%3Dweb&limit=3").href).toBe("http://relay:8787/api/v1/pods?labelSelector=app%3Dweb");
    expect(collectionUrl("wss://relay/apis/apps/v1/namespaces/x/deployments?fieldSelector=metadata.name%3Dy").href).toBe(
      "https://relay/apis/apps/v1/namespaces/x/deployments?fieldSelector=metadata.name%3Dy",
    );
  });

  it("are refused, with the reason, when they do not name a collection", () => {
    expect(() => collectionUrl("http://relay/api/v1/namespaces/default/pods/web-1")).toThrow(/not a collection URL .*e\.g\. http:\/\/relay\/api\/v1\/namespaces\/default\/pods/);
    expect(() => collectionUrl("http://relay/apis/apps/v1")).toThrow(/discovery path/);
    expect(() => collectionUrl("http://relay/healthz")).toThrow(/not a Kubernetes API path/);
    expect(() => collectionUrl("ftp://relay/api/v1/pods")).toThrow(/http\(s\) or ws\(s\)/);
    expect(() => collectionUrl("/api/v1/pods")).toThrow(/outside a browser it must be absolute/);
  });

  it("watch over ws(s) from a resourceVersion, with bookmarks", () => {
    const url = new URL(watchUrl(collectionUrl("https://relay/api/v1/pods?labelSelector=a%3D1"), "42", 300));
    expect(url.protocol).toBe("wss:");
    expect(Object.fromEntries(url.searchParams)).toEqual({ labelSelector: "a=1", watch: "1", resourceVersion: "42", allowWatchBookmarks: "true", timeoutSeconds: "300" });
  });

  it("view live over ws(s), or its window once over http(s), with what it asks for", () => {
    const collection = collectionUrl("https://relay/api/v1/pods?labelSelector=a%3D1");
    const live = new URL(viewUrl(collection, { sort: "-Status", filter: "", offset: 100, limit: 50, rows: "cells" }, true, 60));
    expect(live.protocol).toBe("wss:");
    expect(Object.fromEntries(live.searchParams)).toEqual({ labelSelector: "a=1", view: "1", watch: "1", sort: "-Status", offset: "100", limit: "50", rows: "cells", timeoutSeconds: "60" });
    expect(viewUrl(collection, { filter: "name~web" }, false, 60)).toBe("https://relay/api/v1/pods?labelSelector=a%3D1&view=1&filter=name%7Eweb");
  });

  it("have stats under /_relay/stats, named clusters included", () => {
    expect(statsUrl("http://relay/clusters/prod/api/v1/namespaces/a/pods?labelSelector=x%3Dy")).toBe("http://relay/_relay/stats/clusters/prod/api/v1/namespaces/a/pods?labelSelector=x%3Dy");
  });
});
