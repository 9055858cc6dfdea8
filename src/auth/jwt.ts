/**
 * @module
 * `AUTH_MODE=jwt`: HS256 tokens signed with `AUTH_JWT_SECRET`, carrying `sub`, `exp` (both
 * required) and `rules`. Verification is hono's; the claims the relay relies on are checked here.
 */
import { verify } from "hono/jwt";
import { parseRules, type Rule } from "./rules.ts";

export interface JwtSubject {
  subject: string;
  /** Epoch ms: when the token, and every stream opened with it, ends. */
  expiresAt: number;
  rules: Rule[];
}

/** The token's subject, or why it is refused (a 401's message: it must not say more than needed). */
export async function verifyJwt(token: string, secret: string): Promise<JwtSubject | { refused: string }> {
  let payload: Record<string, unknown>;
  try {
    payload = (await verify(token, secret, "HS256")) as Record<string, unknown>;
  } catch (e) {
    const name = (e as Error).name;
    if (name === "JwtTokenExpired") return { refused: "the bearer token has expired" };
    if (name === "JwtTokenNotBefore") return { refused: "the bearer token is not valid yet" };
    return { refused: "the bearer token is not a valid token for this relay" };
  }
  if (typeof payload.sub !== "string" || payload.sub === "") return { refused: "the bearer token has no sub claim" };
  if (typeof payload.exp !== "number") return { refused: "the bearer token has no exp claim" };
  const rules = parseRules(payload.rules);
  if (typeof rules === "string") return { refused: `the bearer token's ${rules}` };
  return { subject: payload.sub, expiresAt: payload.exp * 1000, rules };
}
