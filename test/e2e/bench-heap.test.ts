/**
 * `npm run bench:heap` at its smallest: a relay with a few hubs, opened and then churned, its
 * heap snapshots written and summed, and what holds its window lines named.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("npm run bench:heap -- --keys 3 --objects 5 --churn 5 --seconds 2", () => {
  let out: string;
  let output = "";

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "kwr-heap-test-"));
    const probe = spawn(process.execPath, ["bench/heap-probe.ts", "--keys", "3", "--objects", "5", "--churn", "5", "--seconds", "2", "--out", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    probe.stdout.on("data", (d: Buffer) => (output += d.toString()));
    probe.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const [code] = (await once(probe, "exit")) as [number | null];
    if (code !== 0) throw new Error(`bench:heap exited with ${code}:\n${output}`);
  }, 180_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("opens every hub, then churns, reading the heap after a collection", () => {
    // The simulator's namespace may hold more than asked for: it only grows to the count.
    expect(Number(/(\d+) pods; the relay's heap [\d.]+ MB; opening 3 hubs/.exec(output)?.[1])).toBeGreaterThanOrEqual(5);
    expect(output).toMatch(/3 of 3 hubs have sent their initial state/);
    expect(output).toMatch(/churn, 5 changes\/s: heap [\d.]+ MB/);
  });

  it("writes a snapshot after each, and sums it: by constructor, and the window's lines by the tail entries that hold them", () => {
    for (const name of ["opened", "churned"]) {
      const file = join(out, `${name}.heapsnapshot`);
      expect(existsSync(file), file).toBe(true);
      const heap = JSON.parse(readFileSync(file, "utf8")) as { nodes: number[] };
      expect(heap.nodes.length).toBeGreaterThan(0);
    }
    const churned = output.slice(output.indexOf("heap snapshot churned"));
    expect(churned).toMatch(/by constructor:\n\s+[\d.]+ MB\s+\d+ {2}string/);
    // A line is a flat string or one made by concatenation, held by its tail's entry either way.
    expect(churned).toMatch(/Object\.line ← Object\.entry ← Array\.\[\]/);
  });
});
