/**
 * The replicas' dev registry directory (scripts/dev-registry.ts), with real processes: a
 * launcher killed with kill -9 leaves its directory behind, and the next registry made removes
 * it; a live launcher's directory, and anything not a registry's, are left alone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDevRegistry } from "../../scripts/dev-registry.ts";
import { LineReader } from "../kit/lines.ts";

const MODULE = new URL("../../scripts/dev-registry.ts", import.meta.url).href;

/** A launcher that makes a registry in `parent`, prints its path, and runs until killed. */
async function launcher(parent: string): Promise<{ child: ChildProcess; registry: string }> {
  const script = `const { makeDevRegistry } = await import(${JSON.stringify(MODULE)}); console.log(makeDevRegistry(${JSON.stringify(parent)})); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = new LineReader(child.stdout!, () => child.kill("SIGKILL"));
  return { child, registry: await lines.nextLine() };
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await once(child, "exit");
}

describe("the replicas' dev registry directory", () => {
  const parent = mkdtempSync(join(tmpdir(), "relay-registry-test-"));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it("a dead launcher's is removed by the next registry made; a live launcher's, and other directories, are kept", async () => {
    const dead = await launcher(parent);
    const live = await launcher(parent);
    try {
      await kill9(dead.child);
      // Not a registry of this form (an older launcher's, or someone else's): its owner is unknown.
      const other = join(parent, "relay-registry-abc123");
      mkdirSync(other);
      expect(existsSync(dead.registry)).toBe(true);

      const mine = makeDevRegistry(parent);
      expect(readdirSync(parent).sort()).toEqual([live.registry, mine, other].map((path) => path.slice(parent.length + 1)).sort());
    } finally {
      await kill9(live.child);
    }
    // Now dead too: the next one made removes it.
    makeDevRegistry(parent);
    expect(existsSync(live.registry)).toBe(false);
  });
});
