/**
 * `npm start` with an upstream it cannot use: one line that says what is wrong and what to
 * try, a non-zero exit, and no relay started (no minute of request-log lines). That includes an
 * upstream that `AUTH_MODE=kube` cannot use because it answers any token.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { have } from "../kit/tools.ts";
import { makeCertificates } from "./certificates.ts";
import { freePort, launch } from "./harness.ts";

const opensslPresent = have("openssl", "the untrusted-certificate case (it makes its own CA)");

const TOKEN = "start-upstream-token-77aa";

/** `npm start` against `upstream`: its exit code and the lines the launcher printed. */
async function refusal(env: Record<string, string>): Promise<{ code: number | string; lines: string[]; output: string }> {
  const started = launch({ PORT: String(await freePort()), ...env });
  let code: number | string;
  try {
    code = await started.exitCode();
  } finally {
    await started.interrupt();
  }
  return {
    code,
    lines: started
      .output()
      .split("\n")
      .filter((l) => l.startsWith("[start]")),
    output: started.output(),
  };
}

describe.concurrent("npm start with an upstream it cannot use", () => {
  let sim: Simulator;
  let tlsSim: Simulator | undefined;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator({ token: TOKEN, initial: { namespaces: ["app"], podsPerNamespace: 1, nodes: 1, deployments: 0 } });
    dir = mkdtempSync(join(tmpdir(), "relay-start-upstream-"));
    if (opensslPresent) tlsSim = await startSimulator({ tls: makeCertificates(dir), initial: { namespaces: [], podsPerNamespace: 0, nodes: 1, deployments: 0 } });
  });
  afterAll(async () => {
    await sim?.close();
    await tlsSim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The launcher's last line is the one that says why, and nothing was started. */
  function expectRefused(result: Awaited<ReturnType<typeof refusal>>, url: string, hint: string): void {
    expect(result.code).toBe(1);
    expect(result.lines.at(-1)).toContain(url);
    expect(result.lines.at(-1)).toContain(hint);
    expect(result.lines.filter((l) => l.includes(url) && !l.startsWith("[start] relaying"))).toHaveLength(1);
    expect(result.output).not.toContain("relay is workerd");
  }

  it("connection refused: is kubectl proxy (or the API server) running?", async () => {
    // A privileged port that nothing serves and no process of the run can take (a free port picked
    // and closed could be taken by another file's process before the relay tries it), and one that
    // fetch does not refuse as a "bad port" itself, as it does the discard port (9).
    const url = "http://127.0.0.1:2";
    expectRefused(await refusal({ UPSTREAM_URL: url }), url, "connection refused; is `kubectl proxy` (or the API server) running");
  });

  it("a port fetch refuses: serve it on another port", async () => {
    const url = "http://127.0.0.1:6000";
    expectRefused(await refusal({ UPSTREAM_URL: url }), url, "fetch refuses port 6000 (a port browsers block); serve the API server or `kubectl proxy` on another port");
  });

  it("401: the token is missing, or the upstream does not accept it", async () => {
    expectRefused(await refusal({ UPSTREAM_URL: sim.url }), sim.url, "answered /version with 401: it needs a token: set UPSTREAM_TOKEN");
    expectRefused(await refusal({ UPSTREAM_URL: sim.url, UPSTREAM_TOKEN: "not-the-token" }), sim.url, "answered /version with 401: it does not accept UPSTREAM_TOKEN");
  });

  it("AUTH_MODE=kube with an upstream that answers any token (kubectl proxy with a client certificate): kube mode needs one that verifies tokens", async () => {
    const proxied = await startSimulator({ initial: { namespaces: [], podsPerNamespace: 0, nodes: 1, deployments: 0 } });
    try {
      proxied.configure({ clientCertificateUser: "kubernetes-admin" });
      const result = await refusal({ UPSTREAM_URL: proxied.url, AUTH_MODE: "kube" });
      expectRefused(result, proxied.url, 'answers a review for a made-up token as user "kubernetes-admin"');
      expect(result.lines.at(-1)).toMatch(/client certificate.*Point kube mode at the API server itself, or at a kubectl proxy whose kubeconfig authenticates with a bearer token/);
    } finally {
      await proxied.close();
    }
  });

  it.skipIf(!opensslPresent)("a certificate from a CA this machine does not trust: NODE_EXTRA_CA_CERTS", async () => {
    const url = tlsSim!.url;
    expectRefused(await refusal({ UPSTREAM_URL: url }), url, "set NODE_EXTRA_CA_CERTS to the cluster's CA certificate");
  });
});
