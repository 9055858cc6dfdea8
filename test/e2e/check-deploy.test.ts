/**
 * `npm run check:deploy` (scripts/check-deploy.ts) on the real wrangler dry run: the shipped
 * configuration passes, and deliberately broken copies of it fail, each naming its mistake.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkDeploy, PLANS } from "../../scripts/check-deploy.ts";

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

describe("npm run check:deploy", () => {
  it("passes the shipped configuration, reporting the bundle's size and the Durable Objects", async () => {
    const report = await checkDeploy(join(ROOT, "wrangler.toml"), PLANS.paid);
    expect(report.problems).toEqual([]);
    expect(report.summary.join("\n")).toMatch(/bundle: [\d.]+ KiB, [\d.]+ KiB gzipped/);
    expect(report.summary.join("\n")).toContain("METRICS → MetricsRegistry");
  });

  it("fails a Durable Object class no migration creates", async () => {
    const config = brokenCopy("no-migration", (t) => t.replace(/\[\[migrations\]\]\ntag = "v3"\nnew_sqlite_classes = \["MetricsRegistry"\]\n/, ""));
    expect((await checkDeploy(config, PLANS.paid)).problems).toEqual([expect.stringContaining("binding METRICS names class MetricsRegistry, which no migration creates")]);
  });

  it("fails a binding to a class the main module does not export (wrangler says so)", async () => {
    const config = brokenCopy("not-exported", (t) => t.replaceAll('"MetricsRegistry"', '"MetricRegistry"'));
    const { problems } = await checkDeploy(config, PLANS.paid);
    expect(problems).toContainEqual(expect.stringMatching(/wrangler deploy --dry-run failed: .*not exported.*MetricRegistry/));
  });

  it("fails a migration that creates a class nothing exports", async () => {
    const config = brokenCopy("stale-migration", (t) => t.replace('new_sqlite_classes = ["MetricsRegistry"]', 'new_sqlite_classes = ["MetricsRegistry", "OldHub"]'));
    expect((await checkDeploy(config, PLANS.paid)).problems).toEqual([expect.stringContaining("the migrations create OldHub, which the main module does not export")]);
  });

  it("fails a CPU limit shorter than an upstream stream is read between renewals, and a bundle over the size limit", async () => {
    const config = brokenCopy("default-cpu", (t) => t.replace("cpu_ms = 300000", "cpu_ms = 30000"));
    const { problems } = await checkDeploy(config, { ...PLANS.paid, gzipBytes: 1024 });
    expect(problems).toContainEqual(expect.stringContaining("longer than its CPU limit of 30000 ms"));
    expect(problems).toContainEqual(expect.stringMatching(/gzipped, over the 1024-byte Worker size limit/));
  });
});
