/**
 * AUTH_MODE=none at the front door: only the host names it is told (loopback by default), so a
 * page that re-points its own name at the relay (DNS rebinding) reads nothing; cluster names that
 * are prototype properties are unknown clusters, not a 5xx; WebSocket subprotocols negotiated as
 * the API server does, and refused when they are not RFC 6455 tokens.
 */
import { env, exports } from "cloudflare:workers";
import { createExecutionContext, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim } from "./helpers.ts";

// A cluster no other test file of this project uses, so its request log is this file's own.
const sim = new Sim("other");
const app = createApp();
/** The relay with `none` mode's defaults: no ALLOWED_HOSTS. */
const byDefault = (url: string, init?: RequestInit) => app.fetch(new Request(url, init), { ...env, ALLOWED_HOSTS: undefined }, createExecutionContext());

describe("host names (DNS rebinding)", () => {
  it("refuses a rebound name with 403 naming ALLOWED_HOSTS: no hub, nothing upstream", async () => {
    const hubs = (await listDurableObjectIds(env.WATCH_HUB)).length;
    const since = (await sim.requests("/_none_")).next;
    for (const path of ["/clusters/other/api/v1/namespaces/default/pods", "/clusters/other/api/v1/pods?watch=1", "/clusters/other/version", "/_relay/stats/clusters/other/api/v1/pods"]) {
      const response = await byDefault(`http://attacker.example:8787${path}`);
      expect(response.status, path).toBe(403);
      expect(await response.json()).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403, message: expect.stringContaining('host "attacker.example"') });
    }
    const ws = await byDefault("http://attacker.example:8787/clusters/other/api/v1/pods?watch=1", { headers: { upgrade: "websocket", origin: "http://attacker.example:8787" } });
    expect(ws.status).toBe(403);
    expect(ws.webSocket).toBeNull();
    expect(await ws.json()).toMatchObject({ message: expect.stringContaining("ALLOWED_HOSTS") });
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(hubs);
    expect((await sim.requests("/", since)).requests).toEqual([]);
  });

  it.each(["http://localhost:8787", "http://127.0.0.1:1234", "http://[::1]:8787", "http://localhost"])("serves loopback names on any port: %s", async (origin) => {
    const response = await byDefault(`${origin}/api/v1/namespaces/default/pods`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ kind: "PodList" });
  });

  it("ALLOWED_HOSTS names the hosts instead (here: relay.test, the tests' own)", async () => {
    expect((await relay("/api/v1/namespaces/default/pods")).status).toBe(200);
    const other = await exports.default.fetch(new Request("http://localhost/api/v1/namespaces/default/pods"));
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ message: 'the relay does not answer to host "localhost": it is not in ALLOWED_HOSTS' });
  });

  it("a malformed ALLOWED_HOSTS is a configuration error that names it", async () => {
    const response = await app.fetch(new Request("http://localhost/api/v1/pods"), { ...env, ALLOWED_HOSTS: "localhost:8787" }, createExecutionContext());
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ message: expect.stringContaining("ALLOWED_HOSTS entries are host names without a port") });
  });
});

describe("cluster names", () => {
  // The one property of Object.prototype that is also a DNS label, as cluster names must be.
  it("constructor is an unknown cluster (404), never a 5xx", async () => {
    const response = await relay("/clusters/constructor/api/v1/pods");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: expect.stringContaining('cluster "constructor" is not configured') });
  });
});

describe("WebSocket subprotocols", () => {
  const watch = (protocols: string) => relay("/api/v1/namespaces/default/pods?watch=1", { headers: { upgrade: "websocket", "sec-websocket-protocol": protocols } });

  it("echo the one offered beside a token, never the token", async () => {
    const response = await watch(`base64.binary.k8s.io, ${bearerProtocol("ignored-here")}`);
    expect(response.status).toBe(101);
    expect(response.headers.get("sec-websocket-protocol")).toBe("base64.binary.k8s.io");
    response.webSocket!.accept();
    response.webSocket!.close();
  });

  it.each(['x"y', "a b", "batch.watch.kube-watch-relay.dev/1", "é"])("refuse a protocol that is not a token (%s) with 400, rather than echo it", async (protocol) => {
    for (const path of ["/api/v1/namespaces/default/pods?watch=1", "/_relay/socket"]) {
      const response = await relay(path, { headers: { upgrade: "websocket", "sec-websocket-protocol": protocol } });
      expect([path, response.status, response.webSocket]).toEqual([path, 400, null]);
      expect(await response.json()).toMatchObject({ kind: "Status", code: 400, message: expect.stringContaining("must be a token (RFC 6455 section 4.1)") });
    }
  });

  it("refuse a token protocol offered alone (401, as the API server), rather than answer with no protocol", async () => {
    const response = await watch(bearerProtocol("ignored-here"));
    expect(response.status).toBe(401);
    expect(response.webSocket).toBeNull();
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ kind: "Status", code: 401, message: expect.stringContaining("needs one other subprotocol beside it") });
    expect(body).not.toContain(bearerProtocol("ignored-here"));
  });
});
