/**
 * `npm run bench:compare` at its smallest: the benchmark at a base revision (here HEAD, in a
 * worktree of its own) and on the working tree, in alternating pairs, each figure set against
 * the base's of its pair; and afterwards no worktree left behind.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const worktrees = () => execFileSync("git", ["worktree", "list", "--porcelain"], { cwd: ROOT, encoding: "utf8" });

describe("npm run bench:compare -- --base HEAD --pairs 2 --smoke", () => {
  let out: string;
  let output = "";
  const before = worktrees();

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "kwr-compare-test-"));
    const compare = spawn(process.execPath, ["bench/compare.ts", "--base", "HEAD", "--pairs", "2", "--out", out, "--smoke", "--scenarios", "keys", "--systems", "relay"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    compare.stdout.on("data", (d: Buffer) => (output += d.toString()));
    compare.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const [code] = (await once(compare, "exit")) as [number | null];
    if (code !== 0) throw new Error(`bench:compare exited with ${code}:\n${output}`);
  }, 300_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("runs base and current in alternating order, each with the options given", () => {
    const order = [...output.matchAll(/pair (\d) of 2: (base|current)/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(order).toEqual(["1 base", "1 current", "2 current", "2 base"]);
    for (const run of ["base-1", "current-1", "current-2", "base-2"]) {
      const rows = (JSON.parse(readFileSync(join(out, run, "latest.json"), "utf8")) as { rows: { scenario: string; system: string }[] }).rows;
      expect(rows.map((r) => `${r.scenario} ${r.system}`)).toEqual(["keys relay"]);
    }
  });

  it("writes each figure of each measurement with both pairs and the median ratio", () => {
    const table = readFileSync(join(out, "comparison.md"), "utf8");
    expect(table).toMatch(/^Base HEAD \([0-9a-f]{40}\), 2 pair\(s\) of `npm run bench -- --smoke --scenarios keys --systems relay`/);
    for (const figure of ["delivered/s", "CPU µs/event", "p99 ms"]) {
      const line = table.split("\n").find((l) => l.startsWith("| keys, relay, ws,") && l.includes(`| ${figure} |`));
      expect(line, figure).toMatch(/\| [\d,.]+ → [\d,.]+ \([\d.]+×\); [\d,.]+ → [\d,.]+ \([\d.]+×\) \| [\d.]+× \|$/);
    }
  });

  it("leaves no worktree behind", () => {
    expect(worktrees()).toBe(before);
    expect(output).toMatch(/in (\S+kwr-compare-base-\S+);/);
    expect(existsSync(/in (\S+kwr-compare-base-\S+);/.exec(output)?.[1] ?? "")).toBe(false);
  });
});
