/** Tokens the way `AUTH_MODE=jwt` takes them: HS256, a subject, an expiry and the rules it grants. */
import { sign } from "hono/jwt";
import type { Rule } from "../../src/auth/rules.ts";

/** The secret the Workers tests' jwt project is configured with (vitest.config.ts). */
export const TEST_JWT_SECRET = "test-secret-that-is-long-enough-for-hs256";

/** A token for `sub`, granting `rules`, valid for `ttlSeconds` from now. */
export function jwtFor(sub: string, rules: Rule[], { secret = TEST_JWT_SECRET, ttlSeconds = 600 } = {}): Promise<string> {
  return sign({ sub, exp: Math.floor(Date.now() / 1000) + ttlSeconds, rules }, secret, "HS256");
}
