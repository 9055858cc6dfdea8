/**
 * The benchmark at its smallest (`--smoke`: every system and scenario, a few subscribers, a
 * few seconds), so it cannot rot: it must run, measure real deliveries, hold the relay's
 * invariants it reports on, write its outputs where it is told, and leave nothing running.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FanoutRow, KeysRow, Results, SnapshotRow, StormRow } from "../../bench/rows.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LATEST = join(ROOT, "bench", "results", "latest.json");

/** Alive and not a zombie (a container's init may never reap what it inherits). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

describe("npm run bench -- --smoke", () => {
  let out: string;
  let output = "";
  let results: Results;
  const latestBefore = existsSync(LATEST) ? statSync(LATEST).mtimeMs : undefined;
  const rows = <T extends Results["rows"][number]>(scenario: T["scenario"]) => results.rows.filter((r): r is T => r.scenario === scenario);

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "kwr-bench-smoke-"));
    const bench = spawn(process.execPath, ["bench/run.ts", "--smoke", "--out", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    bench.stdout.on("data", (d: Buffer) => (output += d.toString()));
    bench.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const [code] = (await once(bench, "exit")) as [number | null];
    if (code !== 0) throw new Error(`the bench exited with ${code}:\n${output}`);
    results = JSON.parse(readFileSync(join(out, "latest.json"), "utf8")) as Results;
  }, 90_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("measures every system in every scenario it applies to", () => {
    expect(results.mode).toBe("smoke");
    expect(new Set(rows<FanoutRow>("fanout").map((r) => r.system))).toEqual(new Set(["relay", "relay-batched", "relay-proxied", "workerd-floor", "direct", "node-relay", "raw-ws"]));
    expect(new Set(rows<StormRow>("storm").map((r) => r.system))).toEqual(new Set(["relay", "relay-batched", "direct", "node-relay", "raw-ws"]));
    expect(new Set(rows<KeysRow>("keys").map((r) => r.system))).toEqual(new Set(["relay", "relay-batched", "direct", "node-relay"]));
    expect(new Set(rows<SnapshotRow>("snapshot").map((r) => r.system))).toEqual(new Set(["relay", "direct"]));
    expect(results.machine.workerd).toMatch(/^workerd /);
  });

  it("delivers live events to every system's subscribers, latency measured from the upstream write", () => {
    for (const row of rows<FanoutRow>("fanout")) {
      expect(row.upstreamEventsPerSec, row.system).toBeGreaterThan(0);
      // Every subscriber got (nearly) every event: a window edge can cut one off.
      expect(row.deliveredPct, row.system).toBeGreaterThan(50);
      expect(row.p50Ms, row.system).not.toBeNull();
      expect(row.p99Ms, row.system).toBeGreaterThanOrEqual(row.p50Ms ?? 0);
      // Measured from outside for every row (a tiny run may round to 0 clock ticks).
      expect(Number.isFinite(row.loadGenCpuPct), row.system).toBe(true);
    }
  });

  it("delivers the relay's batches to subscribers that opt in, split into events, and one event per message to the others", () => {
    const fanout = rows<FanoutRow>("fanout");
    const batched = fanout.find((r) => r.system === "relay-batched");
    expect(batched?.deliveredPct).toBeGreaterThan(50);
    expect(batched?.deliveredPerSec).toBeGreaterThan(0);
    // A message holds at least one event; at this size, rarely more.
    expect(batched?.eventsPerMessage).toBeGreaterThanOrEqual(1);
    expect(fanout.find((r) => r.system === "relay")?.eventsPerMessage).toBe(1);
    // HTTP watches have no messages to count.
    expect(fanout.find((r) => r.system === "direct")?.eventsPerMessage).toBeNull();
    expect(rows<KeysRow>("keys").find((r) => r.system === "relay-batched")?.deliveredPct).toBeGreaterThan(50);
  });

  it("measures idle memory per subscriber, resident and JS heap, for every system", () => {
    for (const row of rows<FanoutRow>("fanout")) {
      expect(row.memAfterMB, row.system).toBeGreaterThan(0);
      expect(row.heapPerSubscriberKB, row.system).not.toBeNull();
    }
  });

  it("holds one upstream watch for the relay however many subscribers, one each for direct", () => {
    const fanout = rows<FanoutRow>("fanout");
    expect(fanout.find((r) => r.system === "relay")?.upstreamConnections).toBe(1);
    // Opened before the window and kept: no watch request during it.
    expect(fanout.find((r) => r.system === "relay")?.upstreamWatchRequests).toBe(0);
    expect(fanout.find((r) => r.system === "relay-proxied")?.upstreamConnections).toBe(1);
    expect(fanout.find((r) => r.system === "relay-batched")?.upstreamConnections).toBe(1);
    const direct = fanout.find((r) => r.system === "direct");
    expect(direct?.upstreamConnections).toBe(direct?.subscribers);
    const keys = rows<KeysRow>("keys").find((r) => r.system === "relay");
    expect(keys?.upstreamWatches).toBe(keys?.keys);
  });

  it("resumes a storm from the relay's window with no upstream request, in either framing; direct resumes upstream", () => {
    const storm = rows<StormRow>("storm");
    const relay = storm.find((r) => r.system === "relay");
    for (const mode of ["relay", "relay-batched"]) {
      const row = storm.find((r) => r.system === mode);
      expect(row?.upstreamRequests, mode).toBe(0);
      expect(row?.caughtUp, mode).toBe(row?.subscribers);
      expect(row?.catchUpMs, mode).not.toBeNull();
    }
    const direct = storm.find((r) => r.system === "direct");
    expect(direct?.upstreamWatches).toBe(direct?.subscribers);
    expect(storm.find((r) => r.system === "node-relay")?.upstreamLists).toBe(relay?.subscribers);
  });

  it("lists the same collection from the relay's cache as from the API server, without going upstream", () => {
    const [relay, direct] = ["relay", "direct"].map((s) => rows<SnapshotRow>("snapshot").find((r) => r.system === s));
    expect(relay?.objects).toBe(direct?.objects);
    expect(relay?.upstreamRequests).toBe(0);
    expect(relay?.bytes).toBeGreaterThan(0);
  });

  it("profiles the relay's isolate under fan-out and many-keys load, tracing its time to source modules", () => {
    expect(results.profiles.map((p) => p.workload.name)).toEqual(["fan-out", "many keys"]);
    for (const profile of results.profiles) {
      expect(profile.isolateBusyMs, profile.workload.name).toBeGreaterThan(0);
      expect(profile.processCpuMs, profile.workload.name).toBeGreaterThan(0);
      expect(profile.deliveredPerSec, profile.workload.name).toBeGreaterThan(0);
      expect(profile.modules.some((m) => m.module.startsWith("src/hub/")), profile.workload.name).toBe(true);
    }
    expect(existsSync(join(out, "relay-profile-fan-out.cpuprofile"))).toBe(true);
  });

  it("writes the report and charts where it is told, leaving bench/results alone", () => {
    const report = readFileSync(join(out, "BENCHMARKS.md"), "utf8");
    expect(report).toContain("npm run bench");
    expect(report).toMatch(/!\[[^\]]+\]\(fanout-throughput-20\.svg\)/);
    // One size in a smoke run: one point per system, no lines.
    expect(readFileSync(join(out, "fanout-throughput-20.svg"), "utf8")).toMatch(/^<svg[^>]*>[\s\S]*<circle[\s\S]*<\/svg>\n$/);
    expect(readFileSync(join(out, "fanout-p99-20.svg"), "utf8")).toContain("relay");
    expect(existsSync(LATEST) ? statSync(LATEST).mtimeMs : undefined).toBe(latestBefore);
  });

  it("leaves none of its processes running", () => {
    expect(results.processes.length).toBeGreaterThanOrEqual(7);
    expect(results.processes.filter((p) => running(p.pid))).toEqual([]);
  });
});
