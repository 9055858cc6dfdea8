/**
 * Health endpoints (src/http/health.ts): `/readyz` says whether the relay can serve, without a
 * token and without saying more than that; anyone may ask, so asking often costs the upstream
 * little.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env.ts";
import { createApp } from "../../src/http/app.ts";
import { healthEndpointsNeedNoToken } from "./health-endpoints.ts";
import { eventually, Sim } from "./helpers.ts";

/** A fresh app (its own isolate-level state) with some variables changed. */
function appWith(vars: Partial<Env>) {
  const app = createApp();
  const changed = { ...env, ...vars } as Env;
  return (path: string) => app.fetch(new Request(`http://relay.test${path}`), changed);
}

describe("health endpoints", () => {
  healthEndpointsNeedNoToken(200);

  it("/readyz: 503 when the upstream does not answer, naming no address and no credential", async () => {
    const readyz = appWith({ UPSTREAM_URL: "http://127.0.0.1:9", UPSTREAM_TOKEN: "readyz-secret-token" });
    const response = await readyz("/readyz");
    expect(response.status).toBe(503);
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ kind: "Status", code: 503, reason: "ServiceUnavailable", message: "the upstream is not reachable" });
    expect(body).not.toContain("127.0.0.1");
    expect(body).not.toContain("readyz-secret-token");
    expect(response.headers.get("retry-after")).toBe("5");
    // The process is alive all the same.
    expect((await readyz("/healthz")).status).toBe(200);
  });

  it("/readyz: 503 while AUTH_MODE is unset, since the relay then serves nothing", async () => {
    const response = await appWith({ AUTH_MODE: undefined })("/readyz");
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toContain("the relay serves nothing until AUTH_MODE is set");
  });

  it("/readyz goes unready while the upstream is down and ready again when it returns", async () => {
    const sim = new Sim("ready");
    const readyz = appWith({ UPSTREAM_URL: sim.url });
    expect((await readyz("/readyz")).status).toBe(200);
    // The simulated API server closes every connection and listens again 3 s later.
    const back = sim.faults({ restart: { downtimeMs: 3000 } });
    const down = await eventually(async () => {
      const response = await readyz("/readyz");
      return response.status === 503 ? response : undefined;
    }, "/readyz to say 503 while the upstream is down");
    expect(await down.json()).toMatchObject({ code: 503, message: "the upstream is not reachable" });
    expect((await readyz("/healthz")).status).toBe(200);
    await back;
    await eventually(async () => (await readyz("/readyz")).status === 200, "/readyz to say 200 once the upstream is back");
  });

  it("/readyz asked by many at once costs the upstream one request", async () => {
    const sim = new Sim("other");
    const before = await sim.requests("/version");
    const readyz = appWith({ UPSTREAM_URL: sim.url });
    const answers = await Promise.all(Array.from({ length: 10 }, () => readyz("/readyz")));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const upstream = (await sim.requests("/version", before.next)).requests;
    expect(upstream).toHaveLength(1);
  });
});
