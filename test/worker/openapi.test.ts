/**
 * @module
 * OpenAPI through the relay. The simulated API server publishes none, like a server with
 * OpenAPI turned off: v3 passes its 404 through; v2, which kubectl downloads before a write,
 * becomes an empty document so kubectl skips client-side validation and meets the relay's 405.
 */
import { describe, expect, it } from "vitest";
import { relay, Sim } from "./helpers.ts";
import { requestMark } from "./kube-helpers.ts";

const sim = new Sim();

describe("OpenAPI", () => {
  it("passes v3 through from the upstream, query included", async () => {
    const mark = await requestMark(sim);
    const response = await relay("/openapi/v3/apis/apps/v1?hash=ABC", { headers: { accept: "application/json" } });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound" });
    expect((await sim.requests("/openapi/v3", mark)).requests.map((r) => [r.path, r.query])).toEqual([["/openapi/v3/apis/apps/v1", "hash=ABC"]]);
  });

  it("answers v2 with an empty document when the upstream has none: zero bytes of protobuf, as kubectl asks", async () => {
    const response = await relay("/openapi/v2?timeout=32s", { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
    expect(response.status).toBe(200);
    // Go's mime parser rejects the `@` spelling kubectl sends in Accept, so the response uses `.`.
    expect(response.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    expect((await response.arrayBuffer()).byteLength).toBe(0);
    const json = await relay("/openapi/v2", { headers: { accept: "application/json" } });
    expect(await json.json()).toMatchObject({ swagger: "2.0", paths: {} });
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
