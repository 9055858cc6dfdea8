/**
 * @module
 * The gate every API request passes before its route, and the operator routes too.
 */
import type { RefusalReason } from "../metrics/catalog.ts";
import type { Result } from "../k8s/status.ts";
import { upstreamFor, type Upstream } from "../upstream.ts";
import type { Vars } from "../vars.ts";
import { frontDoor, originRefusal, type Authenticator, type Identity } from "./auth.ts";
import { notFoundPath } from "./resource-resolver.ts";

/**
 * What every API request passes before its route (after the size limits every request passes):
 * auth mode, host, token, cluster, origin. The token comes before the cluster, so nobody learns which clusters exist without one.
 */
export interface Gate {
  upstream: Upstream;
  identity: Identity;
}

/** The gate, as the routes that mount beside the API's call it. */
export type GateCheck = (env: Vars, request: Request, cluster: string) => Promise<Result<Gate>>;

/** `refused`: told of a refusal at the front door, by reason (metrics). */
export async function gate(env: Vars, request: Request, cluster: string, auth: Authenticator, refused: (reason: RefusalReason) => void): Promise<Result<Gate>> {
  const mode = frontDoor(env, request, refused);
  if (!mode.ok) return mode;
  const upstream = upstreamFor(env, cluster);
  const identity = await auth.authenticate(mode.value, env, request, upstream);
  if (!identity.ok) return identity;
  if (!upstream) return { ok: false, status: notFoundPath(`cluster "${cluster}" is not configured`) };
  const wrongOrigin = originRefusal(env, request, refused);
  if (wrongOrigin) return { ok: false, status: wrongOrigin };
  return { ok: true, value: { upstream, identity: identity.value } };
}
