/**
 * `TLS=1 npm start` in jwt mode: kubectl, which sends no token over plain http, reads pods
 * through the relay over https with the CA the launcher made and printed; the CA can sign for
 * the local names only and its key is gone; a browser's WebSocket from the https origin is
 * the relay's own origin; the certificate is kept across restarts. Skipped, loudly, without
 * openssl or kubectl (on CI, a failure).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { get, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { have } from "../kit/tools.ts";
import { startRelay, waitForOutput, type RunningRelay } from "./harness.ts";
import { Kubectl } from "./kube.ts";

const opensslPresent = have("openssl", "the TLS=1 npm start tests");

const SECRET = "start-tls-secret-long-enough-for-hs256";
const usable = opensslPresent && have("kubectl", "the TLS=1 npm start test in jwt mode");

let relay: RunningRelay;
let stateDir: string;
let kubectl: Kubectl;
let server: string;
let caFile: string;

function mint(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("npm", ["run", "-s", "token", "--", ...args], { env: { ...process.env, AUTH_JWT_SECRET: SECRET } }, (error, stdout, stderr) =>
      error ? reject(new Error(`npm run token: ${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

/** Start the relay over TLS in jwt mode, keeping its state (and so its certificate) in `stateDir`. */
async function start(): Promise<void> {
  relay = await startRelay({ TLS: "1", AUTH_MODE: "jwt", AUTH_JWT_SECRET: SECRET, SIM_CHURN: "0", PERSIST_DIR: stateDir });
  server = `https://127.0.0.1:${relay.port}`;
  caFile = join(stateDir, "tls", "ca.crt");
  kubectl = new Kubectl(server);
}

beforeAll(async () => {
  if (!usable) return;
  stateDir = mkdtempSync(join(tmpdir(), "relay-tls-state-"));
  await start();
}, 120_000);
afterAll(async () => {
  await relay?.stop();
  kubectl?.cleanup();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe.skipIf(!usable)("TLS=1 npm start in jwt mode", () => {
  it("prints the https address and the kubectl flags that work with it", async () => {
    await waitForOutput(relay.process, relay.output, "[start] Ctrl-C stops", 10_000);
    const output = relay.output();
    expect(output).toContain(`[start] relay ready at ${server}`);
    expect(output).toContain(`kubectl --server ${server} --certificate-authority '${caFile}' --token "$TOKEN" get pods -A -w`);
    // The kubeconfig lines add the relay beside the reader's clusters: nothing switches the current context.
    expect(output).toContain("kubectl config set-context kube-watch-relay --cluster kube-watch-relay --user kube-watch-relay");
    expect(output).toContain("kubectl --context kube-watch-relay get pods -A");
    expect(output).not.toContain("use-context");
    expect(output).not.toContain(SECRET);
  });

  it("kubectl get pods --token succeeds over https with the printed CA, and fails without it or with a bad token", async () => {
    const token = await mint("--sub", "reader", "--resource", "pods");
    const good = await kubectl.run("--certificate-authority", caFile, "--token", token, "get", "pods", "-A");
    expect(good.stderr).toBe("");
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS/);
    expect(good.stdout.trim().split("\n").length).toBeGreaterThan(10);

    const untrusted = await kubectl.run("--token", token, "get", "pods", "-A");
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toContain("certificate signed by unknown authority");

    const forged = await kubectl.run("--certificate-authority", caFile, "--token", "not-a-token", "get", "pods", "-A");
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain("You must be logged in to the server (Unauthorized");
  });

  it("the CA is constrained to the local names, its key is gone, and the server's is private", () => {
    expect(readdirSync(join(stateDir, "tls")).sort()).toEqual(["ca.crt", "server.crt", "server.key"]);
    expect(statSync(join(stateDir, "tls")).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, "tls", "server.key")).mode & 0o777).toBe(0o600);
    const ca = execFileSync("openssl", ["x509", "-in", caFile, "-noout", "-text"], { encoding: "utf8" });
    expect(ca).toMatch(/Name Constraints: critical\s+Permitted:\s+IP:127\.0\.0\.1\/255\.255\.255\.255\s+DNS:localhost/);
    expect(ca).toContain("CA:TRUE, pathlen:0");
  });

  it("a WebSocket from the relay's own https origin is accepted (the relay sees https)", async () => {
    const token = await mint("--sub", "reader", "--resource", "pods");
    const status = await new Promise<number>((resolve, reject) => {
      const upgrade = request(`${server}/api/v1/pods?watch=1`, {
        ca: readFileSync(caFile),
        headers: {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          origin: server,
          authorization: `Bearer ${token}`,
        },
        timeout: 30_000,
      });
      upgrade.on("upgrade", (response, socket) => {
        socket.destroy();
        resolve(response.statusCode!);
      });
      upgrade.on("response", (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      upgrade.on("timeout", () => upgrade.destroy(new Error("no answer to the upgrade within 30 s")));
      upgrade.on("error", reject);
      upgrade.end();
    });
    expect(status).toBe(101);
  });

  it("a restart reuses the certificate, so a CA handed to kubectl stays valid", async () => {
    const before = readFileSync(caFile, "utf8");
    await relay.stop();
    kubectl.cleanup();
    await start();
    expect(relay.output()).toContain("TLS: reusing a certificate");
    expect(readFileSync(caFile, "utf8")).toBe(before);
    expect(existsSync(join(stateDir, "tls", "ca.key"))).toBe(false);
  }, 120_000);
});

/** The status of GET `url`, trusting only `ca` (rejects on a certificate it does not sign). */
function statusTrusting(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const asked = get(url, { ca, timeout: 30_000 }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    asked.on("timeout", () => asked.destroy(new Error(`no answer from ${url} within 30 s`)));
    asked.on("error", reject);
  });
}

describe.skipIf(!opensslPresent)("TLS=1 relays started at the same moment on one state directory", () => {
  const relays: RunningRelay[] = [];
  let shared: string;
  afterAll(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    if (shared) rmSync(shared, { recursive: true, force: true });
  });

  it("both serve a certificate that the one CA left in the directory signs", async () => {
    shared = mkdtempSync(join(tmpdir(), "relay-tls-shared-"));
    const started = await Promise.allSettled([0, 1].map(() => startRelay({ TLS: "1", SIM_CHURN: "0", PERSIST_DIR: shared })));
    for (const s of started) if (s.status === "fulfilled") relays.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    const ca = readFileSync(join(shared, "tls", "ca.crt"));
    for (const relay of relays) expect(await statusTrusting(`https://127.0.0.1:${relay.port}/healthz`, ca)).toBe(200);
    expect(readdirSync(shared).sort()).toEqual(["tls"]);
  }, 180_000);
});
