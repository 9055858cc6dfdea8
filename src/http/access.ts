/**
 * @module
 * `/_relay/access` (the default cluster) and `/_relay/access/clusters/{name}`: what the request's
 * token may read on that cluster, as an `AccessSummary` (src/auth/summary.ts), so a client (the
 * live page) can open where the token may look and offer the namespaces it may see. It passes
 * the gate as any request to that cluster does (401 without a token the relay accepts). In
 * `kube` mode the cluster is asked, with the token: a SelfSubjectRulesReview for each of the
 * namespaces the relay's own identity lists (at most `MAX_NAMESPACES`), and access reviews for
 * the rules they share; the answer is kept for `KEEP_MS` per token and cluster.
 */
import { Hono, type Context } from "hono";
import { rulesIn } from "../auth/kube.ts";
import { everything, jwtSummary, kubeSummary, type AccessSummary } from "../auth/summary.ts";
import type { Env } from "../env.ts";
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import { statusResponse } from "../k8s/status.ts";
import type { Upstream } from "../upstream.ts";
import type { Authenticator, Identity } from "./auth.ts";
import type { GateCheck } from "./gate.ts";

export const ACCESS_PATH = "/_relay/access";

/** Namespaces a kube-mode summary asks about: a review each. */
export const MAX_NAMESPACES = 50;
/** As long as the cluster's decisions are kept (`http/auth.ts`). */
const KEEP_MS = 30_000;
const KEPT_MAX = 1000;

const NO_STORE = { "cache-control": "no-store" };

/** The names of the first `MAX_NAMESPACES` namespaces, as the relay's own identity lists them; or why there are none or not all. */
async function namespacesOf(upstream: Upstream): Promise<{ names: string[]; incomplete?: string }> {
  try {
    const response = await upstream.fetch(`/api/v1/namespaces?limit=${MAX_NAMESPACES}`);
    if (!response.ok) {
      await response.body?.cancel();
      return { names: [], incomplete: `the relay could not list the cluster's namespaces (${response.status})` };
    }
    const list = (await response.json()) as { metadata?: { continue?: string }; items?: Array<{ metadata?: { name?: string } }> };
    const names = (list.items ?? []).flatMap((item) => (item.metadata?.name ? [item.metadata.name] : []));
    return list.metadata?.continue ? { names, incomplete: `the relay asked about the first ${MAX_NAMESPACES} of the cluster's namespaces` } : { names };
  } catch (e) {
    return { names: [], incomplete: `the relay could not list the cluster's namespaces: ${(e as Error).message}` };
  }
}

export function access({ gate, auth }: { gate: GateCheck; auth: Authenticator }): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  const kept = new Map<string, { summary: AccessSummary; until: number }>();

  async function kube(identity: Identity, upstream: Upstream): Promise<AccessSummary> {
    const key = `${identity.tokenId}|${upstream.cluster}`;
    const hit = kept.get(key);
    if (hit && hit.until > Date.now()) return hit.summary;
    const token = identity.token as string;
    const { names, incomplete } = await namespacesOf(upstream);
    const summary = await kubeSummary(
      upstream.cluster,
      identity.subject as string,
      names,
      {
        rulesIn: async (namespace) => {
          const review = await rulesIn(upstream, token, namespace);
          return review.ok ? { ok: true, ...review.value } : { ok: false, reason: `the cluster could not say what the token may do in namespace "${namespace}": ${review.reason}` };
        },
        may: (asked) => auth.may(identity, { cluster: upstream.cluster, ...asked }, upstream),
      },
      incomplete,
    );
    kept.delete(key);
    if (kept.size >= KEPT_MAX) kept.delete(kept.keys().next().value as string);
    kept.set(key, { summary, until: Date.now() + KEEP_MS });
    return summary;
  }

  async function answer(c: Context<{ Bindings: Env }>, cluster: string): Promise<Response> {
    const passed = await gate(c.env, c.req.raw, cluster);
    if (!passed.ok) return statusResponse(passed.status);
    const { identity, upstream } = passed.value;
    const summary =
      identity.mode === "none"
        ? everything(upstream.cluster)
        : identity.mode === "jwt"
          ? jwtSummary(upstream.cluster, identity.subject as string, identity.rules ?? [])
          : await kube(identity, upstream);
    return c.json(summary, 200, NO_STORE);
  }

  app.get(ACCESS_PATH, (c) => answer(c, DEFAULT_CLUSTER));
  app.get(`${ACCESS_PATH}/clusters/:cluster`, (c) => answer(c, c.req.param("cluster")));
  return app;
}
