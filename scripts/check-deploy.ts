/**
 * @module
 * `npm run check:deploy [-- --config wrangler.toml] [--plan paid|free]`: what `wrangler deploy`
 * would upload, checked before it is: the production bundle as `wrangler deploy --dry-run
 * --outdir` builds it (with the live page built into the assets first), then
 * - its size within the Workers limits (developers.cloudflare.com/workers/platform/limits/):
 *   after gzip 3 MiB on Workers Free, 10 MiB on Paid; 64 MiB uncompressed, the limit the
 *   platform is moving to; each static asset at most 25 MiB, at most 20,000 of them (Free);
 * - every Durable Object class a binding names exported by the main module, and created by a
 *   migration (a class bound but never migrated, or migrated but not exported, fails the real
 *   deploy or the first request); migration tags unique;
 * - `limits.cpu_ms` within 5 minutes (and only on Paid, the default plan), and long enough for an upstream stream read between two
 *   renewals (`WATCH_RENEW_SECONDS` plus the 30 s heartbeat: DESIGN.md, "CPU limits");
 * - a compatibility date from 2026-10-01 on (pending I/O keeps a hub from eviction);
 * - a configuration that serves (`deploy-config.ts`): an upstream, `AUTH_MODE` decided, every
 *   secret it names among the deploy's secrets (`[secrets] required`, which `wrangler deploy`
 *   checks are set on the Worker, or a `--secrets-file`), with `--var KEY:VALUE` as `wrangler
 *   deploy` takes it.
 * Exits 1 naming every problem, 0 with a summary. Needs no Cloudflare account.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs, promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { unstable_readConfig } from "wrangler";
import { DEFAULT_WATCH_RENEW_SECONDS, HEARTBEAT_MS } from "../src/heartbeat.ts";
import { buildClient } from "./build-client.ts";
import { configurationProblems, configurationSummary, type DeployConfiguration, parseVar, secretNames } from "./deploy-config.ts";

const MiB = 1024 * 1024;

export interface DeployLimits {
  /** Whether `limits.cpu_ms` may raise the CPU limit (Workers Paid). */
  cpuConfigurable: boolean;
  gzipBytes: number;
  uncompressedBytes: number;
  assetBytes: number;
  assetFiles: number;
}

export const PLANS: Record<"free" | "paid", DeployLimits> = {
  free: { cpuConfigurable: false, gzipBytes: 3 * MiB, uncompressedBytes: 64 * MiB, assetBytes: 25 * MiB, assetFiles: 20_000 },
  paid: { cpuConfigurable: true, gzipBytes: 10 * MiB, uncompressedBytes: 64 * MiB, assetBytes: 25 * MiB, assetFiles: 100_000 },
};

/** Default CPU limit per invocation, and the most `limits.cpu_ms` may ask. */
const DEFAULT_CPU_MS = 30_000;
const MAX_CPU_MS = 300_000;
const MIN_COMPATIBILITY_DATE = "2026-10-01";

export interface DeployReport {
  problems: string[];
  summary: string[];
}

const root = resolve(import.meta.dirname, "..");
const run = promisify(execFile);

/** `wrangler deploy --dry-run --outdir`: what it said, and whether it wrote the modules it would upload. */
async function dryRun(configPath: string, outdir: string): Promise<{ ok: boolean; output: string }> {
  const wrangler = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" };
  try {
    const { stdout, stderr } = await run(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", outdir, "--config", configPath], { cwd: root, env, maxBuffer: 16 * MiB });
    return { ok: true, output: stdout + stderr };
  } catch (e) {
    const failed = e as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? failed.message}` };
  }
}

/** What wrangler said went wrong: its error lines, without colours. */
const errorsOf = (output: string): string =>
  output
    // biome-ignore lint/suspicious/noControlCharactersInRegex: wrangler's colour codes start with ESC
    .replace(/\x1b\[[0-9;]*m/g, "")
    .split("\n")
    .filter((line) => /ERROR|✘/.test(line))
    .map((line) => line.replace(/^.*?\[ERROR\]\s*/, "").trim())
    .join("; ") || output.trim();

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

/** The names the bundle's main module exports. */
async function exportsOf(module: string): Promise<string[]> {
  const result = await build({ entryPoints: [module], bundle: true, format: "esm", platform: "neutral", external: ["cloudflare:*", "node:*"], metafile: true, write: false, logLevel: "silent" });
  return Object.values(result.metafile.outputs).flatMap((o) => o.exports);
}

function sizeProblems(uploaded: string[], assets: string[], limits: DeployLimits, summary: string[]): string[] {
  const problems: string[] = [];
  const contents = uploaded.map((f) => readFileSync(f));
  const bytes = contents.reduce((n, c) => n + c.length, 0);
  const gzipped = gzipSync(Buffer.concat(contents)).length;
  summary.push(`bundle: ${(bytes / 1024).toFixed(1)} KiB, ${(gzipped / 1024).toFixed(1)} KiB gzipped (limits ${limits.uncompressedBytes / MiB} MiB, ${limits.gzipBytes / MiB} MiB gzipped)`);
  if (gzipped > limits.gzipBytes) problems.push(`the bundle is ${gzipped} bytes gzipped, over the ${limits.gzipBytes}-byte Worker size limit`);
  if (bytes > limits.uncompressedBytes) problems.push(`the bundle is ${bytes} bytes, over the ${limits.uncompressedBytes}-byte uncompressed Worker size limit`);
  summary.push(`assets: ${assets.length} files`);
  if (assets.length > limits.assetFiles) problems.push(`${assets.length} static assets, over the limit of ${limits.assetFiles}`);
  for (const asset of assets) if (statSync(asset).size > limits.assetBytes) problems.push(`static asset ${relative(root, asset)} is over ${limits.assetBytes / MiB} MiB`);
  return problems;
}

interface Migration {
  tag: string;
  new_classes?: string[];
  new_sqlite_classes?: string[];
  renamed_classes?: Array<{ from: string; to: string }>;
  deleted_classes?: string[];
}

/** The classes the migrations leave in existence, and what is wrong with the migrations themselves. */
function migrated(migrations: readonly Migration[]): { classes: Set<string>; problems: string[] } {
  const classes = new Set<string>();
  const problems: string[] = [];
  const tags = new Set<string>();
  for (const m of migrations) {
    if (tags.has(m.tag)) problems.push(`migration tag "${m.tag}" is used twice`);
    tags.add(m.tag);
    for (const c of [...(m.new_classes ?? []), ...(m.new_sqlite_classes ?? [])]) {
      if (classes.has(c)) problems.push(`migration "${m.tag}" creates ${c}, which an earlier migration created`);
      classes.add(c);
    }
    for (const { from, to } of m.renamed_classes ?? []) {
      classes.delete(from);
      classes.add(to);
    }
    for (const c of m.deleted_classes ?? []) classes.delete(c);
  }
  return { classes, problems };
}

/** What the deploy adds to the configuration file: `--var`s, a secrets file's names, the acknowledgement of `AUTH_MODE=none`. */
export interface DeployInputs {
  vars?: Readonly<Record<string, string>>;
  secrets?: readonly string[];
  allowUnauthenticated?: boolean;
}

export async function checkDeploy(configPath: string, limits: DeployLimits, inputs: DeployInputs = {}): Promise<DeployReport> {
  const summary: string[] = [];
  const config = unstable_readConfig({ config: configPath }, { hideWarnings: true });
  const deployed: DeployConfiguration = {
    vars: { ...(config.vars as Record<string, unknown>), ...inputs.vars },
    fetchBindings: new Set([...(config.services ?? []), ...(config.vpc_services ?? [])].map((b) => b.binding)),
    secrets: new Set([...(config.secrets?.required ?? []), ...(inputs.secrets ?? [])]),
    allowUnauthenticated: inputs.allowUnauthenticated ?? false,
  };
  await buildClient();
  const outdir = mkdtempSync(join(tmpdir(), "kwr-deploy-"));
  try {
    const problems: string[] = [];
    const dry = await dryRun(configPath, outdir);
    const reported = /Total Upload: .*/.exec(dry.output)?.[0];
    if (reported) summary.push(`wrangler: ${reported}`);
    const uploaded = files(outdir).filter((f) => /\.(m?js|cjs|wasm|bin|txt|html)$/.test(f) && !f.endsWith("README.md"));
    const main = uploaded.find((f) => /\.m?js$/.test(f));
    if (!dry.ok || !main) problems.push(`wrangler deploy --dry-run failed: ${errorsOf(dry.output)}`);
    const assetsDir = config.assets?.directory ? resolve(root, config.assets.directory) : undefined;
    if (main) problems.push(...sizeProblems(uploaded, assetsDir ? files(assetsDir) : [], limits, summary));

    // Without a bundle, wrangler's own error says what is not exported.
    const exported = main ? new Set(await exportsOf(main)) : undefined;
    const bindings: Array<{ name: string; class_name: string; script_name?: string | undefined }> = config.durable_objects?.bindings ?? [];
    const migrations = (config.migrations ?? []) as Migration[];
    const { classes, problems: migrationProblems } = migrated(migrations);
    problems.push(...migrationProblems);
    for (const binding of bindings) {
      if (binding.script_name) continue; // another Worker's class
      if (exported && !exported.has(binding.class_name))
        problems.push(`binding ${binding.name} names class ${binding.class_name}, which ${relative(root, config.main ?? "the main module")} does not export`);
      if (!classes.has(binding.class_name))
        problems.push(`binding ${binding.name} names class ${binding.class_name}, which no migration creates (add a [[migrations]] entry with new_sqlite_classes = ["${binding.class_name}"])`);
    }
    if (exported) for (const c of classes) if (!exported.has(c)) problems.push(`the migrations create ${c}, which the main module does not export (delete it in a migration, or export it)`);
    summary.push(`Durable Objects: ${bindings.map((b) => `${b.name} → ${b.class_name}`).join(", ")}; migrations ${migrations.map((m) => m.tag).join(", ")}`);

    const cpuMs = config.limits?.cpu_ms ?? DEFAULT_CPU_MS;
    const renewSeconds = Number((config.vars as Record<string, unknown>).WATCH_RENEW_SECONDS ?? DEFAULT_WATCH_RENEW_SECONDS);
    const readMs = renewSeconds * 1000 + HEARTBEAT_MS;
    summary.push(`CPU: ${cpuMs} ms per invocation; an upstream stream is read for at most ${readMs} ms before the heartbeat renews it`);
    if (cpuMs > MAX_CPU_MS) problems.push(`limits.cpu_ms is ${cpuMs}; Workers allow at most ${MAX_CPU_MS}`);
    if (config.limits?.cpu_ms !== undefined && !limits.cpuConfigurable) problems.push("limits.cpu_ms needs Workers Paid: remove it, and set WATCH_RENEW_SECONDS to 0");
    if (readMs > cpuMs) {
      problems.push(
        `an upstream stream may be read for ${readMs} ms (WATCH_RENEW_SECONDS ${renewSeconds} plus the 30 s heartbeat) by one invocation, longer than its CPU limit of ${cpuMs} ms: raise limits.cpu_ms or lower WATCH_RENEW_SECONDS`,
      );
    }
    summary.push(`configuration: ${configurationSummary(deployed)}`);
    problems.push(...configurationProblems(deployed));
    if (!config.compatibility_date || config.compatibility_date < MIN_COMPATIBILITY_DATE) {
      problems.push(`compatibility_date ${config.compatibility_date ?? "(none)"} is before ${MIN_COMPATIBILITY_DATE}, when pending I/O started to keep a Durable Object from eviction`);
    }
    return { problems, summary };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  let inputs: DeployInputs;
  let values: { config: string; plan: string };
  try {
    const args = parseArgs({
      options: {
        config: { type: "string", default: "wrangler.toml" },
        plan: { type: "string", default: "paid" },
        var: { type: "string", multiple: true, default: [] },
        "secrets-file": { type: "string" },
        "allow-unauthenticated": { type: "boolean", default: false },
      },
    }).values;
    if (args.plan !== "paid" && args.plan !== "free") throw new Error(`--plan is free or paid, not ${args.plan}`);
    const file = args["secrets-file"];
    inputs = {
      vars: Object.fromEntries(args.var.map(parseVar)),
      secrets: file === undefined ? [] : secretNames(readFileSync(file, "utf8")),
      allowUnauthenticated: args["allow-unauthenticated"],
    };
    values = args;
  } catch (e) {
    console.error(
      `check:deploy: ${(e as Error).message} (usage: npm run check:deploy -- [--config wrangler.toml] [--plan paid|free] [--var KEY:VALUE]... [--secrets-file FILE] [--allow-unauthenticated])`,
    );
    process.exit(2);
  }
  const plan = values.plan as "paid" | "free";
  const report = await checkDeploy(resolve(values.config), PLANS[plan], inputs);
  for (const line of report.summary) console.log(`check:deploy: ${line}`);
  if (report.problems.length > 0) {
    for (const problem of report.problems) console.error(`check:deploy: ${problem}`);
    process.exit(1);
  }
  console.log(`check:deploy: ok (${plan} plan limits)`);
}
