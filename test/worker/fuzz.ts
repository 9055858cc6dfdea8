/**
 * Hostile input, generated: paths, query strings, selectors, methods and headers. Whatever
 * comes in, the relay never answers 5xx, every rejection is a well-formed Kubernetes Status,
 * and a rejected request creates no hub and sends the upstream nothing but discovery lookups
 * (how the relay learns which resources exist).
 */
import { env } from "cloudflare:workers";
import { listDurableObjectIds } from "cloudflare:test";
import fc from "fast-check";
import { expect } from "vitest";
import { relay, Sim } from "./helpers.ts";

const segment = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("api", "apis", "v1", "v2beta1", "apps", "namespaces", "pods", "deployments", "nodes", "watch", "team-a", "default", "pod-1", "status", "log", "widgets", "example.com"),
  },
  { weight: 1, arbitrary: fc.constantFrom("..", ".", "%2F", "%zz", "Pods", "%E2%98%83", "a".repeat(300), "v0", "-", "clusters") },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(encodeURIComponent) },
);

const param = fc.tuple(
  fc.constantFrom(
    "watch",
    "resourceVersion",
    "resourceVersionMatch",
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "timeoutSeconds",
    "sendInitialEvents",
    "allowWatchBookmarks",
    "pretty",
    "x",
  ),
  fc.oneof(
    fc.constantFrom(
      "",
      "0",
      "1",
      "true",
      "false",
      "-1",
      "abc",
      "NotOlderThan",
      "Exact",
      "18446744073709551616",
      "a=b",
      "a in (x,y)",
      "!a",
      "a,",
      "metadata.name=x",
      "spec.nodeName!=n",
      "status.phase==Running",
      "a:b",
      "x>1",
      "((",
    ),
    fc.string({ maxLength: 40 }),
  ),
);

const header = fc.oneof(
  fc.tuple(fc.constant("accept"), fc.constantFrom("application/json", "application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v1;g=meta.k8s.io", "text/html", "*/*", "application/yaml")),
  fc.tuple(fc.constant("upgrade"), fc.constant("websocket")),
  fc.tuple(fc.constant("sec-websocket-protocol"), fc.constantFrom("base64.binary.k8s.io", "a, b", "base64url.bearer.authorization.k8s.io.!!!", "base64url.bearer.authorization.k8s.io.", "x,y,z")),
  fc.tuple(fc.constant("origin"), fc.constantFrom("https://evil.example", "null", "http://relay.test")),
  fc.tuple(
    fc.constant("authorization"),
    fc.oneof(
      fc.constantFrom("Bearer", "Bearer x.y.z", "Basic YTpi", "bearer  "),
      fc.string({ maxLength: 30 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, "")}`),
    ),
  ),
  fc.tuple(fc.constant("x-filler"), fc.constantFrom("a".repeat(20_000), "b")),
);

const request = fc.record({
  method: fc.oneof({ weight: 8, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: fc.constantFrom("POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS") }),
  prefix: fc.constantFrom("/clusters/fuzz", "/clusters/fuzz", "/clusters/nope", "/clusters/constructor", ""),
  segments: fc.array(segment, { maxLength: 7 }),
  params: fc.array(param, { maxLength: 5 }),
  headers: fc.array(header, { maxLength: 3 }),
  huge: fc.boolean(),
});

/** Run the fuzz against the `fuzz` cluster; `extraHeaders` adds (for example) a valid token to some requests. */
export async function fuzzRelay(seed: number, numRuns: number, extraHeaders: () => Record<string, string> = () => ({})): Promise<void> {
  const sim = new Sim("fuzz");
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const query = new URLSearchParams(r.params);
      if (r.huge) query.set("labelSelector", `a in (${"v,".repeat(3000)}v)`);
      const url = `${r.prefix}/${r.segments.join("/")}${query.size ? `?${query}` : ""}`;
      const headers = { ...extraHeaders(), ...Object.fromEntries(r.headers) };
      const hubsBefore = (await listDurableObjectIds(env.WATCH_HUB)).length;
      const upstreamBefore = (await sim.requests("/")).next;

      const response = await relay(url, { method: r.method, headers });
      response.webSocket?.accept();
      response.webSocket?.close();
      let body = "";
      if (response.status >= 400) body = await response.text();
      else await response.body?.cancel();

      expect(response.status, `${r.method} ${url}`).toBeLessThan(500);
      if (response.status < 400) return; // valid input: served
      if (r.method !== "HEAD") {
        // A HEAD answer has the status's headers but, as HTTP requires, no body.
        const status = JSON.parse(body) as Record<string, unknown>;
        expect(status, `${r.method} ${url}`).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", code: response.status, reason: expect.any(String), message: expect.any(String) });
      }
      expect(response.headers.get("content-type")).toBe("application/json");
      expect((await listDurableObjectIds(env.WATCH_HUB)).length, `${url} created a hub`).toBe(hubsBefore);
      const upstream = (await sim.requests("/", upstreamBefore)).requests.filter((q) => q.verb !== "discovery");
      expect(upstream, `${url} reached the upstream`).toEqual([]);
    }),
    { seed, numRuns, endOnFailure: true },
  );
}
