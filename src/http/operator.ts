/**
 * @module
 * What operators read: `/metrics` (Prometheus text) and `/_relay/hubs` (the live hubs: key,
 * subscribers, upstream state, window, last event age, last error). Both need the relay's own
 * rights (src/auth/operator.ts) in `jwt` and `kube` mode; `/metrics` also takes the
 * `METRICS_TOKEN` secret as a bearer token, for scrapers that hold no user's credentials. In
 * `none` mode (local only) they are as open as everything else.
 */
import { Hono } from "hono";
import { LIST_HUBS, READ_METRICS } from "../auth/operator.ts";
import type { Access } from "../auth/access.ts";
import { bearerToken } from "../auth/token.ts";
import type { Env } from "../env.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import { statusResponse } from "../k8s/status.ts";
import { CONTENT_TYPE } from "../metrics/exposition.ts";
import { REGISTRY } from "../metrics/registry.ts";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { frontDoor, type Authenticator } from "./auth.ts";
import type { GateCheck } from "./gate.ts";

export interface OperatorDeps {
  gate: GateCheck;
  auth: Authenticator;
  metrics: WorkerMetrics;
}

const NO_STORE = { "cache-control": "no-store" };

/** `METRICS_TOKEN`, compared in constant time (digests of equal length). */
async function isMetricsToken(env: Env, request: Request): Promise<boolean> {
  const expected = env.METRICS_TOKEN;
  const credential = bearerToken(request);
  if (!expected || !credential.ok || credential.token === undefined) return false;
  const digest = (text: string) => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const [given, wanted] = await Promise.all([digest(credential.token), digest(expected)]);
  return crypto.subtle.timingSafeEqual(given, wanted);
}

export function operator({ gate, auth, metrics }: OperatorDeps): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();

  /** `undefined` when the request may have `access`, else the refusal. */
  async function refusal(env: Env, request: Request, access: Access): Promise<Response | undefined> {
    const gated = await gate(env, request, DEFAULT_CLUSTER);
    if (!gated.ok) return statusResponse(gated.status);
    const denied = await auth.authorize(gated.value.identity, access, gated.value.upstream, env);
    return denied ? statusResponse(denied) : undefined;
  }

  app.get("/metrics", async (c) => {
    const env = c.env;
    // Only a request bearing the metrics token is checked here (the front door as the gate has
    // it, uncounted); any other goes through the gate below, which counts its refusal.
    const scraper = (await isMetricsToken(env, c.req.raw)) && frontDoor(env, c.req.raw, () => undefined).ok;
    if (!scraper) {
      const refused = await refusal(env, c.req.raw, READ_METRICS);
      if (refused) return refused;
    }
    await metrics.flush(env);
    const text = await env.METRICS.getByName(REGISTRY).scrape();
    return new Response(text, { headers: { "content-type": CONTENT_TYPE, ...NO_STORE } });
  });

  app.get("/_relay/hubs", async (c) => {
    const refused = await refusal(c.env, c.req.raw, LIST_HUBS);
    if (refused) return refused;
    const hubs = await c.env.METRICS.getByName(REGISTRY).hubs();
    return c.json({ hubs }, 200, NO_STORE);
  });

  return app;
}
