/**
 * `npm run check:deploy` (scripts/check-deploy.ts) on the real wrangler dry run: the shipped
 * configuration passes, and deliberately broken copies of it fail, each naming its mistake.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkDeploy, type DeployInputs, PLANS } from "../../scripts/check-deploy.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SHIPPED = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "kwr-check-deploy-"));

/** A copy of wrangler.toml, changed by `edit`, outside the repository (paths made absolute). */
function brokenCopy(name: string, edit: (toml: string) => string): string {
  const changed = edit(SHIPPED);
  expect(changed, `${name}: the edit applies`).not.toBe(SHIPPED);
  const path = join(dir, `${name}.toml`);
  writeFileSync(path, changed.replace('main = "src/index.ts"', `main = "${join(ROOT, "src/index.ts")}"`).replace('directory = "public"', `directory = "${join(ROOT, "public")}"`));
  return path;
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a deployer adds to the shipped configuration, which leaves the mode and the upstream to them. */
const DEPLOYED: DeployInputs = { vars: { AUTH_MODE: "jwt", UPSTREAM_URL: "https://k8s.example.com" }, secrets: ["AUTH_JWT_SECRET", "UPSTREAM_TOKEN"] };

describe("npm run check:deploy", () => {
  it("refuses the shipped configuration as it is: it names no mode and no upstream", async () => {
    const { problems } = await checkDeploy(join(ROOT, "wrangler.toml"), PLANS.paid);
    expect(problems).toEqual([expect.stringMatching(/^AUTH_MODE is not set, .*: set AUTH_MODE = "jwt" or "kube"/), expect.stringMatching(/^no upstream: set UPSTREAM_URL/)]);
  });

  it("passes the shipped configuration with a mode, an upstream and its secrets, reporting the bundle's size and the Durable Objects", async () => {
    const report = await checkDeploy(join(ROOT, "wrangler.toml"), PLANS.paid, DEPLOYED);
    expect(report.problems).toEqual([]);
    expect(report.summary.join("\n")).toMatch(/bundle: [\d.]+ KiB, [\d.]+ KiB gzipped/);
    expect(report.summary.join("\n")).toContain("METRICS → MetricsRegistry");
  });

  it("fails a Durable Object class no migration creates", async () => {
    const config = brokenCopy("no-migration", (t) => t.replace(/\[\[migrations\]\]\ntag = "v3"\nnew_sqlite_classes = \["MetricsRegistry"\]\n/, ""));
    expect((await checkDeploy(config, PLANS.paid, DEPLOYED)).problems).toEqual([expect.stringContaining("binding METRICS names class MetricsRegistry, which no migration creates")]);
  });

  it("fails a binding to a class the main module does not export (wrangler says so)", async () => {
    const config = brokenCopy("not-exported", (t) => t.replaceAll('"MetricsRegistry"', '"MetricRegistry"'));
    const { problems } = await checkDeploy(config, PLANS.paid, DEPLOYED);
    expect(problems).toContainEqual(expect.stringMatching(/wrangler deploy --dry-run failed: .*not exported.*MetricRegistry/));
  });

  it("fails a migration that creates a class nothing exports", async () => {
    const config = brokenCopy("stale-migration", (t) => t.replace('new_sqlite_classes = ["MetricsRegistry"]', 'new_sqlite_classes = ["MetricsRegistry", "OldHub"]'));
    expect((await checkDeploy(config, PLANS.paid, DEPLOYED)).problems).toEqual([expect.stringContaining("the migrations create OldHub, which the main module does not export")]);
  });

  it("fails a CPU limit shorter than an upstream stream is read between renewals, and a bundle over the size limit", async () => {
    const config = brokenCopy("default-cpu", (t) => t.replace("cpu_ms = 300000", "cpu_ms = 30000"));
    const { problems } = await checkDeploy(config, { ...PLANS.paid, gzipBytes: 1024 }, DEPLOYED);
    expect(problems).toContainEqual(expect.stringContaining("longer than its CPU limit of 30000 ms"));
    expect(problems).toContainEqual(expect.stringMatching(/gzipped, over the 1024-byte Worker size limit/));
  });
});

describe("npm run check:deploy, as a deployer runs it", () => {
  const npm = (args: string[]) => spawnSync("npm", ["run", "-s", "check:deploy", "--", ...args], { cwd: ROOT, encoding: "utf8" });

  it("takes the mode and the upstream as wrangler deploy does (--var KEY:VALUE) and the secrets from a secrets file, and says ok", () => {
    const secrets = join(dir, "secrets.env");
    writeFileSync(secrets, "# as wrangler deploy --secrets-file reads it\nAUTH_JWT_SECRET=not-read\nUPSTREAM_TOKEN=not-read\n");
    const run = npm(["--var", "AUTH_MODE:jwt", "--var", "UPSTREAM_URL:https://k8s.example.com", "--secrets-file", secrets]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("check:deploy: configuration: AUTH_MODE jwt; upstream https://k8s.example.com; secrets AUTH_JWT_SECRET, UPSTREAM_TOKEN");
    expect(run.stdout).toMatch(/check:deploy: ok \(paid plan limits\)\n$/);
  });

  it("exits 1 with one line per thing to set, and 2 with its usage on a flag it does not know", () => {
    const refused = npm(["--var", "AUTH_MODE:none"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^check:deploy: AUTH_MODE is "none": .*pass --allow-unauthenticated to deploy it so on purpose$/),
      expect.stringMatching(/^check:deploy: no upstream: /),
    ]);
    const unknown = npm(["--plan", "enterprise"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim()).toMatch(/^check:deploy: --plan is free or paid, not enterprise \(usage: npm run check:deploy -- .*\)$/);
  });
});
