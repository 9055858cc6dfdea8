/**
 * `npm run -s token -- --sub alice --namespace team-a --resource pods --ttl 1h`: an HS256 token
 * for a relay in AUTH_MODE=jwt, signed with AUTH_JWT_SECRET (from the environment), in the
 * relay's format (src/auth/jwt.ts, src/auth/rules.ts): `sub`, `exp`, and one rule built from
 * the flags. The token alone goes to stdout; what it grants, to stderr.
 */
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { sign } from "hono/jwt";
import type { Rule } from "../src/auth/rules.ts";

const USAGE = `usage: npm run -s token -- [--sub NAME] [--namespace NS]... [--resource R]... [--group G]... [--cluster C]... [--ttl 1h]
  --sub        who the token is for (default: your user name)
  --namespace  a namespace it may read (repeat, or a,b); default * (all, and cluster-scoped resources)
  --resource   a resource it may read, e.g. pods (repeat, or a,b); default *
  --group      an API group, "" or core for the core group (repeat, or a,b); default *
  --cluster    a cluster it may read (repeat, or a,b); default: every cluster
  --ttl        how long it is valid: 90s, 30m, 12h, 7d (default 1h)
AUTH_JWT_SECRET must be set to the relay's secret.`;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

function fail(message: string): never {
  console.error(`token: ${message}\n${USAGE}`);
  process.exit(2);
}

/** Repeated and comma-separated values, in order; `fallback` when none is given. */
function values(given: string[] | undefined, fallback: string[]): string[] {
  const all = (given ?? []).flatMap((v) => v.split(",")).map((v) => v.trim());
  return all.length > 0 ? all : fallback;
}

function seconds(ttl: string): number {
  const match = /^(\d+)([smhd])$/.exec(ttl);
  if (!match || Number(match[1]) === 0) fail(`--ttl ${JSON.stringify(ttl)} is not a duration like 90s, 30m, 12h or 7d`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

function parseFlags() {
  try {
    return parseArgs({
      options: {
        sub: { type: "string" },
        namespace: { type: "string", multiple: true },
        resource: { type: "string", multiple: true },
        group: { type: "string", multiple: true },
        cluster: { type: "string", multiple: true },
        ttl: { type: "string", default: "1h" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }).values;
  } catch (e) {
    return fail((e as Error).message);
  }
}
const parsed = parseFlags();
if (parsed.help) {
  console.error(USAGE);
  process.exit(0);
}
const secret = process.env.AUTH_JWT_SECRET;
if (!secret) fail("AUTH_JWT_SECRET is not set: a token must be signed with the relay's own secret");

const sub = parsed.sub ?? userInfo().username;
if (sub === "") fail("--sub must not be empty");
const rule: Rule = {
  ...(parsed.cluster ? { clusters: values(parsed.cluster, []) } : {}),
  apiGroups: values(parsed.group, ["*"]).map((g) => (g === "core" ? "" : g)),
  resources: values(parsed.resource, ["*"]),
  namespaces: values(parsed.namespace, ["*"]),
};
const exp = Math.floor(Date.now() / 1000) + seconds(parsed.ttl);

console.log(await sign({ sub, exp, rules: [rule] }, secret, "HS256"));
console.error(`token for ${sub}, valid until ${new Date(exp * 1000).toISOString()}: ${JSON.stringify(rule)}`);
