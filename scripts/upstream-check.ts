/**
 * @module
 * Before a relay starts: does its upstream answer discovery `/version` with the relay's
 * credentials, and, for `AUTH_MODE=kube`, does it verify the tokens it is given (a made-up one
 * must be refused)? If not, one line that says what is wrong and what to try, instead of a relay
 * that starts and fails (or, worse, grants) every request.
 */
import { answersAnyToken, answersAnyTokenProblem } from "../src/auth/kube.ts";

const TIMEOUT_MS = 10_000;

/** TLS failures Node reports, by code: all mean the certificate is not one this machine trusts. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
]);

/** The deepest `code` and message in an error's chain of causes (fetch wraps the socket's error in "fetch failed"). */
function causeOf(error: unknown): { code?: string; message?: string } {
  const found: { code?: string; message?: string } = {};
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined; e && typeof e === "object"; e = e.cause as typeof e) {
    if (typeof e.code === "string") found.code = e.code;
    if (typeof e.message === "string") found.message = e.message;
  }
  return found;
}

/** Why the upstream cannot be used, as one line; `undefined` when it answers. */
export async function upstreamProblem(url: string, token: string | undefined): Promise<string | undefined> {
  const version = `${url.replace(/\/+$/, "")}/version`;
  let response: Response;
  try {
    response = await fetch(version, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(TIMEOUT_MS) });
    await response.body?.cancel();
  } catch (e) {
    const { code, message } = causeOf(e);
    const cannot = `cannot reach the upstream at ${url}`;
    if ((e as Error).name === "TimeoutError") return `${cannot}: no answer within ${TIMEOUT_MS / 1000} s; is the address right, and is a firewall in the way?`;
    if (code === "ECONNREFUSED") return `${cannot}: connection refused; is \`kubectl proxy\` (or the API server) running and listening there?`;
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `${cannot}: the host name does not resolve; check UPSTREAM_URL`;
    if (code === "CERT_HAS_EXPIRED") return `${cannot}: its TLS certificate has expired`;
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return `${cannot}: its TLS certificate is not for this host name (${code}); use the name or address the certificate names`;
    if (code && UNTRUSTED.has(code)) return `${cannot}: its TLS certificate is not signed by a CA this machine trusts (${code}); set NODE_EXTRA_CA_CERTS to the cluster's CA certificate (PEM)`;
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER") return `${cannot}: it does not speak TLS; try http:// instead of https://`;
    // fetch refuses the ports browsers block (the discard port, X11's, NFS's…) before it connects.
    if (message === "bad port") return `${cannot}: fetch refuses port ${new URL(url).port} (a port browsers block); serve the API server or \`kubectl proxy\` on another port`;
    return `${cannot}: ${code ?? message}`;
  }
  if (response.ok) return undefined;
  if (response.status === 401 || response.status === 403) {
    const credentials = token ? "does not accept UPSTREAM_TOKEN" : "needs a token: set UPSTREAM_TOKEN";
    return `the upstream at ${url} answered /version with ${response.status}: it ${credentials} (a token that may read discovery, list and watch)`;
  }
  return `the upstream at ${url} answered /version with ${response.status}; is UPSTREAM_URL the API server's address?`;
}

/**
 * Why `AUTH_MODE=kube` cannot use the upstream, as one line; `undefined` when it refuses a
 * made-up token (asked with that token alone, never the relay's).
 */
export async function kubeModeProblem(url: string): Promise<string | undefined> {
  const root = url.replace(/\/+$/, "");
  const answer = await answersAnyToken({ fetch: (path, init) => fetch(root + path, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) }) });
  if (!answer.ok) return `AUTH_MODE=kube: the upstream at ${url} did not answer a SelfSubjectReview, which kube mode asks for every token: ${answer.reason}`;
  return answer.value === undefined ? undefined : `AUTH_MODE=kube: ${answersAnyTokenProblem(`the upstream at ${url}`, answer.value)}`;
}
