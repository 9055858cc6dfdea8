/**
 * @module
 * The document cache's rules, under a fake clock and a scripted upstream: TTL, one request
 * for concurrent misses, the last good answer standing in for a failing upstream, the byte bound.
 */
import { describe, expect, it } from "vitest";
import { DocumentCache, DocumentUnavailable, type DocumentFetch, type UpstreamDocument } from "../../src/http/document-cache.ts";

/** A scripted upstream: each call takes the next answer (a Response, or an Error to reject with). */
function upstream(...answers: Array<Response | Error>) {
  const calls: Array<[string, string]> = [];
  const fetch: DocumentFetch = async (path, accept) => {
    calls.push([path, accept]);
    const answer = answers.shift();
    if (!answer) throw new Error("the test's upstream has no more answers");
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch, calls };
}

const json = (body: unknown, status = 200, type = "application/json") => new Response(JSON.stringify(body), { status, headers: { "content-type": type } });

function cache(overrides: { maxBytes?: number; joinWaitMs?: number } = {}) {
  const clock = { now: 1_000_000 };
  const c = new DocumentCache({ what: "discovery", ttlMs: 60_000, staleMs: 600_000, maxBytes: overrides.maxBytes ?? 1 << 20, now: () => clock.now, joinWaitMs: overrides.joinWaitMs });
  return { cache: c, clock };
}

const text = (document: UpstreamDocument): string => new TextDecoder().decode(document.body);

describe("DocumentCache", () => {
  it("serves an answer for the TTL without asking again, then refreshes it", async () => {
    const { cache: c, clock } = cache();
    const up = upstream(json({ kind: "APIResourceList", n: 1 }), json({ kind: "APIResourceList", n: 2 }));
    expect(JSON.parse(text(await c.get("default", "/api/v1", "application/json", up.fetch))).n).toBe(1);
    clock.now += 59_999;
    expect(JSON.parse(text(await c.get("default", "/api/v1", "application/json", up.fetch))).n).toBe(1);
    expect(up.calls).toHaveLength(1);
    clock.now += 1;
    expect(JSON.parse(text(await c.get("default", "/api/v1", "application/json", up.fetch))).n).toBe(2);
    expect(up.calls).toEqual([
      ["/api/v1", "application/json"],
      ["/api/v1", "application/json"],
    ]);
  });

  it("keys on cluster, path and Accept, and keeps the upstream's Content-Type", async () => {
    const { cache: c } = cache();
    const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    const up = upstream(json({ a: 1 }), json({ a: 2 }, 200, aggregated), json({ a: 3 }));
    const plain = await c.get("default", "/apis", "application/json", up.fetch);
    const agg = await c.get("default", "/apis", `${aggregated},application/json`, up.fetch);
    const other = await c.get("prod", "/apis", "application/json", up.fetch);
    expect([plain, agg, other].map(text)).toEqual(['{"a":1}', '{"a":2}', '{"a":3}']);
    expect(agg.contentType).toBe(aggregated);
    expect(up.calls).toHaveLength(3);
  });

  it("fetches anew for a request whose shared fetch does not settle in time (its request may be gone), and shares that one", async () => {
    const { cache: c } = cache({ joinWaitMs: 20 });
    const calls: string[] = [];
    // The first fetch never settles, as one whose request the runtime cancelled; the next answers.
    const fetch: DocumentFetch = (path) => {
      calls.push(path);
      return calls.length === 1 ? new Promise<Response>(() => undefined) : Promise.resolve(json({ kind: "APIResourceList" }));
    };
    void c.get("default", "/api/v1", "application/json", fetch);
    const [a, b] = await Promise.all([c.get("default", "/api/v1", "application/json", fetch), c.get("default", "/api/v1", "application/json", fetch)]);
    expect([text(a), text(b)]).toEqual(['{"kind":"APIResourceList"}', '{"kind":"APIResourceList"}']);
    expect(calls).toHaveLength(2);
  });

  it("shares one upstream request between concurrent misses", async () => {
    const { cache: c } = cache();
    const up = upstream(json({ once: true }));
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.get("default", "/apis/apps/v1", "application/json", up.fetch)));
    expect(new Set(answers.map(text))).toEqual(new Set(['{"once":true}']));
    expect(up.calls).toHaveLength(1);
  });

  it("caches a 404 (a group/version the cluster does not serve) like any answer", async () => {
    const { cache: c } = cache();
    const up = upstream(json({ kind: "Status", code: 404 }, 404));
    expect((await c.get("default", "/apis/nope.io/v1", "application/json", up.fetch)).status).toBe(404);
    expect((await c.get("default", "/apis/nope.io/v1", "application/json", up.fetch)).status).toBe(404);
    expect(up.calls).toHaveLength(1);
  });

  it("stands in the last good answer for an upstream that fails, for at most the stale period", async () => {
    const { cache: c, clock } = cache();
    const up = upstream(json({ good: 1 }), new Error("connect ECONNREFUSED"), json({ kind: "Status", message: "etcd is unavailable" }, 503), new Error("connect ECONNREFUSED"));
    await c.get("default", "/api/v1", "application/json", up.fetch);
    clock.now += 120_000;
    expect(text(await c.get("default", "/api/v1", "application/json", up.fetch))).toBe('{"good":1}');
    expect(text(await c.get("default", "/api/v1", "application/json", up.fetch))).toBe('{"good":1}');
    // A stale answer is not refreshed by serving it: every request past the TTL asks the upstream again.
    expect(up.calls).toHaveLength(3);
    clock.now += 600_000;
    await expect(c.get("default", "/api/v1", "application/json", up.fetch)).rejects.toThrow(
      new DocumentUnavailable("the upstream API server did not answer discovery for /api/v1: connect ECONNREFUSED"),
    );
  });

  it("names the cause of a failure it cannot cover: the upstream's Status message, and a hint for 401/403", async () => {
    const { cache: c } = cache();
    const up = upstream(json({ kind: "Status", message: "Unauthorized", code: 401 }, 401), new Response("upstream connect error", { status: 502 }));
    await expect(c.get("default", "/api", "application/json", up.fetch)).rejects.toThrow(
      "the upstream API server did not answer discovery for /api: HTTP 401: Unauthorized (check the relay's upstream token and its RBAC)",
    );
    await expect(c.get("default", "/api", "application/json", up.fetch)).rejects.toThrow("discovery for /api: HTTP 502: upstream connect error");
    // Failures are not cached: the next request asks again.
    expect(up.calls).toHaveLength(2);
  });

  it("stays within its byte bound by dropping the least recently fetched answers", async () => {
    const { cache: c } = cache({ maxBytes: 25 });
    const body = (n: number) => new Response("x".repeat(10) + n, { headers: { "content-type": "application/json" } });
    const up = upstream(body(1), body(2), body(3), body(1));
    await c.get("default", "/a", "application/json", up.fetch);
    await c.get("default", "/b", "application/json", up.fetch);
    await c.get("default", "/c", "application/json", up.fetch); // 33 bytes in all: /a goes
    await c.get("default", "/b", "application/json", up.fetch);
    await c.get("default", "/c", "application/json", up.fetch);
    expect(up.calls.map(([path]) => path)).toEqual(["/a", "/b", "/c"]);
    await c.get("default", "/a", "application/json", up.fetch);
    expect(up.calls.map(([path]) => path)).toEqual(["/a", "/b", "/c", "/a"]);
  });

  it("keeps the upstream's validators and caching headers, and the body as bytes (OpenAPI's protobuf is not text)", async () => {
    const { cache: c } = cache();
    const bytes = new Uint8Array([0, 255, 10, 128]);
    const up = upstream(new Response(bytes, { headers: { "content-type": "application/x-protobuf", etag: '"ABC"', "cache-control": "public, immutable", "x-other": "dropped" } }));
    const document = await c.get("default", "/openapi/v2", "application/x-protobuf", up.fetch);
    expect([...document.body]).toEqual([...bytes]);
    expect(document.headers).toEqual({ etag: '"ABC"', "cache-control": "public, immutable" });
  });

  it("does not read a document past its byte bound: the upstream is reported as unable to answer", async () => {
    const { cache: c } = cache({ maxBytes: 10 });
    const streamed = new Response(new ReadableStream({ pull: (controller) => controller.enqueue(new Uint8Array(4)) }));
    const up = upstream(new Response("x".repeat(11)), streamed);
    await expect(c.get("default", "/openapi/v2", "application/json", up.fetch)).rejects.toThrow(
      "the upstream API server did not answer discovery for /openapi/v2: the document is larger than the 10 bytes the relay keeps",
    );
    // An endless body is cut off at the bound too.
    await expect(c.get("default", "/openapi/v2", "application/json", up.fetch)).rejects.toThrow("larger than the 10 bytes");
  });
});
