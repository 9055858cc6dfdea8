/**
 * @module
 * Which host names the relay answers to (`ALLOWED_HOSTS`), against DNS rebinding: a web page
 * whose name an attacker re-points at 127.0.0.1 is same-origin with the relay for the browser,
 * but still sends its own name as `Host`. With `AUTH_MODE=none` nothing else stands in its way,
 * so that mode answers only loopback names unless told otherwise, as `kubectl proxy
 * --accept-hosts` does. In `jwt` and `kube` mode a token is needed anyway; there the list
 * applies only when set.
 */
import { ConfigError, list } from "../config.ts";
import type { Vars } from "../vars.ts";
import { failure } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { AuthMode } from "../auth/mode.ts";

export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

const NAME = /^(\*\.)?([a-z0-9]([a-z0-9_-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9_-]*[a-z0-9])?)*$/i;
const IPV6 = /^\[[0-9a-f:.]+\]$/i;

/** One entry: `*` (any host), `*.example.com` (any name under it), a host name, or an IP literal (`[::1]`). */
function matcher(entry: string): (hostname: string) => boolean {
  if (entry === "*") return () => true;
  if (!NAME.test(entry) && !IPV6.test(entry)) {
    throw new ConfigError(`ALLOWED_HOSTS entries are host names without a port, "*.example.com" or "*"; got ${JSON.stringify(entry)}`);
  }
  const wildcard = entry.startsWith("*.");
  // As the URL parser writes it (lower case, IPv6 compressed), which is how a request's URL has it.
  const hostname = new URL(`http://${wildcard ? entry.slice(2) : entry}/`).hostname;
  return wildcard ? (h) => h.endsWith(`.${hostname}`) : (h) => h === hostname;
}

/** A 403 for a request to a host name the relay does not answer to; `undefined` when it does. */
export function hostRefusal(env: Vars, mode: AuthMode, url: URL): Status | undefined {
  const configured = list(env, "ALLOWED_HOSTS");
  if (configured.length === 0 && mode !== "none") return undefined;
  const matchers = (configured.length > 0 ? configured : LOOPBACK_HOSTS).map(matcher);
  if (matchers.some((matches) => matches(url.hostname))) return undefined;
  const why =
    configured.length > 0
      ? "it is not in ALLOWED_HOSTS"
      : `with AUTH_MODE=none the relay answers only ${LOOPBACK_HOSTS.join(", ")}, against DNS rebinding (ALLOWED_HOSTS sets the names it answers to)`;
  return failure(403, "Forbidden", `the relay does not answer to host "${url.hostname}": ${why}`, {});
}
