/**
 * @module
 * Bearer-token authentication and HTTPS.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { get } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { request } from "./helpers.ts";

const sims: Simulator[] = [];
afterAll(async () => {
  for (const s of sims) await s.close();
});

function openssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const hasOpenssl = openssl();
if (!hasOpenssl) console.warn("\n*** openssl is not on PATH: SKIPPING the simulator TLS test ***\n");

describe("authentication", () => {
  it("requires the bearer token on Kubernetes paths when one is configured, never on /_sim/", async () => {
    const sim = await startSimulator({ token: "s3cret" });
    sims.push(sim);
    const denied = await request(`${sim.url}/api/v1/pods`);
    expect(denied.status).toBe(401);
    expect(denied.text).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n');
    expect((await request(`${sim.url}/api`, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    const allowed = await request(`${sim.url}/api/v1/pods`, { headers: { Authorization: "Bearer s3cret" } });
    expect(allowed.status).toBe(200);
    expect((await request(`${sim.url}/_sim/stats`)).status).toBe(200);
  });

  it.skipIf(!hasOpenssl)("serves HTTPS with the given certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-tls-"));
    try {
      execFileSync("openssl", [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
        "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
      ], { stdio: "ignore" });
      const cert = readFileSync(join(dir, "cert.pem"), "utf8");
      const sim = await startSimulator({ tls: { key: readFileSync(join(dir, "key.pem"), "utf8"), cert } });
      sims.push(sim);
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const body = await new Promise<string>((resolve, reject) => {
        get(`${sim.url}/version`, { ca: cert }, (res) => {
          let text = "";
          res.on("data", (d) => (text += d)).on("end", () => resolve(text));
        }).on("error", reject);
      });
      expect(JSON.parse(body).gitVersion).toBe("v1.34.0");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
