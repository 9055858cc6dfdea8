/**
 * @module
 * Health endpoints for launchers, load balancers and Kubernetes probes. They need no token in
 * any AUTH_MODE, so they reveal nothing: `ok`, or a Status that names no URL, token or cause.
 * - `/healthz`: the Worker answers.
 * - `/readyz`: the relay can serve: it is configured (AUTH_MODE), and the default cluster's
 *   upstream answers discovery `/version` with the relay's credentials (and, in `kube` mode,
 *   refuses a made-up token, as an upstream that verifies tokens must).
 * `/readyz` costs an upstream request, and anyone may ask: one check at a time per isolate, its
 * answer reused for a second. The cause of a failure goes to the log, once per change.
 */
import { Hono } from "hono";
import type { Vars } from "../vars.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import { serviceUnavailable, statusResponse } from "../k8s/status.ts";
import { logger } from "../log.ts";
import { upstreamFor, type Upstream } from "../upstream.ts";
import { authMode } from "../auth/mode.ts";

const REUSE_MS = 1000;
/** Longer than this, and the upstream is not answering in any useful sense. */
const UPSTREAM_TIMEOUT_MS = 5000;

const ok = () => new Response("ok\n", { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });

/** Why kube mode cannot use an upstream, or `undefined` (the Authenticator's check). */
export type KubeUpstreamCheck = (upstream: Upstream) => Promise<string | undefined>;

/** Why the default cluster's upstream cannot serve (for the log), or `undefined` when it answers `/version` (and passes `kubeCheck` in kube mode). */
async function upstreamFailure(env: Vars, kubeCheck: KubeUpstreamCheck): Promise<string | undefined> {
  try {
    const upstream = upstreamFor(env, DEFAULT_CLUSTER);
    if (!upstream) return "no default cluster is configured (UPSTREAM_URL)";
    const response = await upstream.fetch("/version", { signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS) });
    await response.body?.cancel();
    if (!response.ok) return `/version answered ${response.status}`;
    return authMode(env).ok && env.AUTH_MODE === "kube" ? await kubeCheck(upstream) : undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

export function health(kubeCheck: KubeUpstreamCheck): Hono<{ Bindings: Vars }> {
  const app = new Hono<{ Bindings: Vars }>();
  const log = logger({ component: "health" });
  // The check in flight, or the last one for REUSE_MS after it settled.
  let last: { failure: Promise<string | undefined>; settledAt?: number } | undefined;
  let logged: string | undefined;

  function check(env: Vars): Promise<string | undefined> {
    if (last && (last.settledAt === undefined || Date.now() - last.settledAt < REUSE_MS)) return last.failure;
    const current: NonNullable<typeof last> = { failure: upstreamFailure(env, kubeCheck) };
    void current.failure.then((failure) => {
      current.settledAt = Date.now();
      if (failure !== logged) log(failure === undefined ? "upstream ready" : "upstream not ready", failure === undefined ? {} : { reason: failure });
      logged = failure;
    });
    last = current;
    return current.failure;
  }

  app.get("/healthz", ok);
  app.get("/readyz", async (c) => {
    const mode = authMode(c.env);
    if (!mode.ok) return statusResponse(mode.status);
    const failure = await check(c.env);
    return failure === undefined ? ok() : statusResponse(serviceUnavailable("the upstream is not reachable", 5));
  });
  return app;
}
