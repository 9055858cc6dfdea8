/**
 * @module
 * `npm run bench:compare`: the benchmark at a base revision (a git worktree) and on the working
 * tree in alternating pairs, so a drift in the machine's load falls on both; ratios current ÷ base.
 */
import { spawn, type ChildProcess, execFileSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { compareRuns, comparisonTable } from "./comparison.ts";
import type { Row } from "./rows.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const USAGE = `usage: npm run bench:compare -- --base REV [--pairs N] [--out DIR] [bench options]
  --base REV    the revision to compare with (a commit, tag or branch)
  --pairs N     how many base/current pairs to run (default 3)
  --out DIR     where to write comparison.md and every run's results (default: a temporary directory)
  everything else is passed to both benchmarks, e.g. --scenarios keys --systems relay --full
  (profiles are never taken: each run passes --no-profile)`;

let child: ChildProcess | undefined;
let worktree: string | undefined;
/** Set by a signal: the benchmark it stops exits non-zero, which is no failure to report. */
let interrupted = false;

const log = (message: string) => console.log(`[compare] ${message}`);

function runBench(cwd: string, args: readonly string[], out: string, logFile: string): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const output = createWriteStream(logFile);
    child = spawn(process.execPath, ["bench/run.ts", ...args, "--no-profile", "--out", out], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.pipe(output);
    child.stderr?.pipe(output);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      child = undefined;
      if (code !== 0) return reject(new Error(`the benchmark in ${cwd} failed (${signal ?? `exit ${code}`}); its output: ${logFile}`));
      resolve((JSON.parse(readFileSync(join(out, "latest.json"), "utf8")) as { rows: Row[] }).rows);
    });
  });
}

async function main(): Promise<void> {
  const { values, tokens } = parseArgs({
    options: { base: { type: "string" }, pairs: { type: "string", default: "3" }, out: { type: "string" }, help: { type: "boolean", default: false } },
    strict: false,
    tokens: true,
  });
  if (values.help || typeof values.base !== "string") {
    console.log(USAGE);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const pairs = Number(values.pairs);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`--pairs must be a whole number ≥ 1, got ${String(values.pairs)}`);
  const ours = new Set(["base", "pairs", "out", "help"]);
  // Not strict, so an option of the benchmark's is a flag here and its value a positional, in order: passed on as given.
  const passed = tokens.flatMap((t) => (t.kind === "positional" ? [t.value] : t.kind === "option" && !ours.has(t.name) ? [t.inlineValue ? `${t.rawName}=${t.value}` : t.rawName] : []));
  const commit = execFileSync("git", ["rev-parse", "--verify", `${values.base}^{commit}`], { cwd: ROOT, encoding: "utf8" }).trim();

  const out = typeof values.out === "string" ? values.out : mkdtempSync(join(tmpdir(), "kwr-compare-"));
  mkdirSync(out, { recursive: true });
  worktree = mkdtempSync(join(tmpdir(), "kwr-compare-base-"));
  execFileSync("git", ["worktree", "add", "--detach", worktree, commit], { cwd: ROOT, stdio: "ignore" });
  symlinkSync(join(ROOT, "node_modules"), join(worktree, "node_modules"));
  log(`base ${String(values.base)} (${commit.slice(0, 12)}) in ${worktree}; ${pairs} pair(s) of: npm run bench -- ${passed.join(" ")}`);

  const base: Row[][] = [];
  const current: Row[][] = [];
  for (let i = 0; i < pairs; i++) {
    const sides = [
      { name: "base", cwd: worktree, rows: base },
      { name: "current", cwd: ROOT, rows: current },
    ];
    if (i % 2 === 1) sides.reverse();
    for (const side of sides) {
      log(`pair ${i + 1} of ${pairs}: ${side.name}`);
      const dir = join(out, `${side.name}-${i + 1}`);
      side.rows[i] = await runBench(side.cwd, passed, dir, `${dir}.log`);
    }
  }
  const compared = compareRuns(base, current);
  if (compared.length === 0) throw new Error("the two revisions measured nothing alike: check the bench options (both must know them)");
  const table = comparisonTable(compared, "base");
  writeFileSync(join(out, "comparison.md"), `Base ${String(values.base)} (${commit}), ${pairs} pair(s) of \`npm run bench -- ${passed.join(" ")}\`\n\n${table}`);
  console.log(table);
  log(`written: ${join(out, "comparison.md")}`);
}

async function cleanUp(): Promise<void> {
  const running = child;
  if (running) {
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    await exited;
  }
  if (worktree) {
    rmSync(join(worktree, "node_modules"), { force: true });
    execFileSync("git", ["worktree", "remove", "--force", worktree], { cwd: ROOT, stdio: "ignore" });
    worktree = undefined;
  }
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    interrupted = true;
    void cleanUp().finally(() => process.exit(130));
  });
}
main().then(
  () => cleanUp(),
  async (error: unknown) => {
    if (!interrupted) console.error(`[compare] failed: ${error instanceof Error ? error.message : String(error)}`);
    await cleanUp();
    process.exitCode = 1;
  },
);
