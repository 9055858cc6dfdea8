/**
 * @module
 * OpenAPI through the relay, as kubectl asks for it. The `openapi` cluster's simulated API server
 * publishes v3 as kube-openapi does (an index naming each document by hash); the default one
 * publishes none, like a server with OpenAPI turned off: v3 is its 404; v2, which kubectl
 * downloads before a write, becomes an empty document so kubectl skips client-side validation and
 * meets the relay's 405. Either way the relay asks the upstream once per document, however many
 * clients ask, and asks nothing it was not listed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { relay, Sim } from "./helpers.ts";
import { requestMark } from "./kube-helpers.ts";

const sim = new Sim();
// A cluster no other test file uses, so its request log is this file's own.
const published = new Sim("openapi");
beforeAll(() => published.configure({ openapi: true }));

const openapiRequests = async (of: Sim, since: number) => (await of.requests("/openapi", since)).requests.map((r) => (r.query ? `${r.path}?${r.query}` : r.path));

describe("OpenAPI v3", () => {
  it("serves the index and the documents it lists, each asked upstream once however many clients ask", async () => {
    const mark = await requestMark(published);
    const indexes = await Promise.all(Array.from({ length: 5 }, () => relay("/clusters/openapi/openapi/v3", { headers: { accept: "application/json, */*" } })));
    expect(indexes.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const index = (await indexes[0]!.json()) as { paths: Record<string, { serverRelativeURL: string }> };
    await Promise.all(indexes.slice(1).map((r) => r.body?.cancel()));
    const apps = index.paths["apis/apps/v1"]!.serverRelativeURL;
    expect(apps).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    // As client-go asks for a document: the index's URL under the relay's path.
    for (let i = 0; i < 5; i++) {
      const document = await relay(`/clusters/openapi${apps}`, { headers: { accept: "application/json" } });
      expect([document.status, document.headers.get("cache-control")]).toEqual([200, "public, immutable"]);
      expect(await document.json()).toMatchObject({ openapi: "3.0.0", paths: { "/apis/apps/v1/namespaces/{namespace}/deployments": {} } });
    }
    expect(await openapiRequests(published, mark)).toEqual(["/openapi/v3", apps]);
  });

  it("asks the upstream nothing it did not list: another path is a 404 Status, another hash a 301 to the current one, queries stay", async () => {
    const index = (await (await relay("/clusters/openapi/openapi/v3")).json()) as { paths: Record<string, { serverRelativeURL: string }> };
    const core = index.paths["api/v1"]!.serverRelativeURL;
    await (await relay(`/clusters/openapi${core}`)).body?.cancel();
    const mark = await requestMark(published);
    for (let i = 0; i < 30; i++) {
      const unknown = await relay(`/clusters/openapi/openapi/v3/apis/made-up-${i}.example.com/v1?hash=${i}`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: expect.stringContaining(`lists no /openapi/v3/apis/made-up-${i}.example.com/v1`) });
      const stale = await relay(`/clusters/openapi/openapi/v3/api/v1?hash=stale-${i}`, { redirect: "manual" });
      expect([stale.status, stale.headers.get("location")]).toEqual([301, `/clusters/openapi${core}`]);
      const other = await relay(`/clusters/openapi/openapi/v${i % 2 ? 2 : 3}/anything-${i}?timeout=${i}s`);
      expect(other.status).toBe(404);
      await other.body?.cancel();
    }
    // A document asked without its hash is the current one, without the immutable caching its hashed URL has.
    const unhashed = await relay("/clusters/openapi/openapi/v3/api/v1");
    expect([unhashed.status, unhashed.headers.get("cache-control")]).toEqual([200, "no-cache, private"]);
    await unhashed.body?.cancel();
    expect(await openapiRequests(published, mark)).toEqual([]);
  });

  it("answers a client's If-None-Match from the cache with 304", async () => {
    const first = await relay("/clusters/openapi/openapi/v3");
    const etag = first.headers.get("etag");
    await first.body?.cancel();
    expect(etag).toMatch(/^"[0-9A-F]+"$/);
    const again = await relay("/clusters/openapi/openapi/v3", { headers: { "if-none-match": etag! } });
    expect([again.status, again.headers.get("etag")]).toEqual([304, etag]);
  });

  it("passes on the upstream's 404 when it publishes no v3, and asks it once", async () => {
    const mark = await requestMark(sim);
    for (let i = 0; i < 3; i++) {
      const response = await relay("/openapi/v3", { headers: { accept: "application/json" } });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound" });
      expect((await relay(`/openapi/v3/apis/apps/v1?hash=${i}`)).status).toBe(404);
    }
    expect(await openapiRequests(sim, mark)).toEqual(["/openapi/v3"]);
  });
});

describe("OpenAPI v2", () => {
  it("answers v2 with an empty document when the upstream has none: zero bytes of protobuf, as kubectl asks", async () => {
    const response = await relay("/openapi/v2?timeout=32s", { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
    expect(response.status).toBe(200);
    // Go's mime parser rejects the `@` spelling kubectl sends in Accept, so the response uses `.`.
    expect(response.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    expect((await response.arrayBuffer()).byteLength).toBe(0);
    const json = await relay("/openapi/v2", { headers: { accept: "application/json" } });
    expect(await json.json()).toMatchObject({ swagger: "2.0", paths: {} });
  });

  it("asks the upstream once per representation, whatever the query", async () => {
    const mark = await requestMark(published);
    for (let i = 0; i < 5; i++) {
      const response = await relay(`/clusters/openapi/openapi/v2?timeout=${i}s&x=${i}`, { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
    expect(await openapiRequests(published, mark)).toEqual(["/openapi/v2"]);
  });

  it("is read-only and per cluster like every other path", async () => {
    expect((await relay("/openapi/v2", { method: "PUT" })).status).toBe(405);
    const unknown = await relay("/clusters/nope/openapi/v3");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ message: 'the server could not find the requested resource (cluster "nope" is not configured)' });
    const down = await relay("/clusters/down/openapi/v3");
    expect([down.status, down.headers.get("retry-after")]).toEqual([503, "5"]);
  });
});
