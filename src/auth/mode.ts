/**
 * @module
 * `AUTH_MODE`: who the relay lets in. Read before anything else on every request, so a relay
 * deployed without a decision serves nothing.
 */
import { serviceUnavailable, type Result } from "../k8s/status.ts";
import type { Vars } from "../vars.ts";

export type AuthMode = "none" | "jwt" | "kube";

const MODES: readonly AuthMode[] = ["none", "jwt", "kube"];

export function authMode(env: Vars): Result<AuthMode> {
  const mode = env.AUTH_MODE as AuthMode | undefined;
  if (mode && MODES.includes(mode)) {
    if (mode === "jwt" && !env.AUTH_JWT_SECRET) return { ok: false, status: serviceUnavailable("AUTH_MODE=jwt needs AUTH_JWT_SECRET (wrangler secret put AUTH_JWT_SECRET)") };
    return { ok: true, value: mode };
  }
  return {
    ok: false,
    status: serviceUnavailable(
      `the relay serves nothing until AUTH_MODE is set: "jwt" (with AUTH_JWT_SECRET), "kube" (subscribers' own Kubernetes tokens), or "none" (local use only)${mode ? `; got ${JSON.stringify(mode)}` : ""}`,
    ),
  };
}
