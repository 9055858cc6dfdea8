/**
 * @module
 * `npm run conformance`, as a user runs it, against the simulated API server and against
 * `npm start` relaying it (writes through the simulator, the relay being read-only), the
 * simulator bookmarking once a minute as an API server does: every check passes or does not
 * apply for the reason it should, and the suite exits 0.
 * And against a proxy that leaves a gap in every resume, the resume check fails and the suite
 * exits 1: it can tell; declared, that failure is expected and the suite exits 0.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS } from "../../conformance/checks/index.ts";
import { parseEventLine } from "../../src/k8s/event.ts";
import { LineSplitter } from "../../src/k8s/ndjson.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { startRelay, type RunningRelay } from "./harness.ts";

interface Report {
  results: Array<{ id: string; verdict: "pass" | "fail" | "n/a" | "xfail" | "xpass"; reason: string }>;
  fail: number;
}

/** The suite as a user runs it: its exit code and its JSON report. */
async function conformance(args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> {
  const child = spawn("npm", ["run", "-s", "conformance", "--", ...args, "--json"], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  let report: Report;
  try {
    report = JSON.parse(stdout) as Report;
  } catch {
    throw new Error(`npm run conformance exited ${code} without a JSON report:\n${stdout}\n${stderr}`);
  }
  return { code, report, stderr };
}

/** Every check ran and passed, but those `notApplicable` names, which do not apply for the reason given. */
function expectConformant(report: Report, notApplicable: Record<string, string>): void {
  for (const result of report.results) {
    const why = `${result.id}: ${result.verdict} ${result.reason}`;
    const reason = notApplicable[result.id];
    expect(result.verdict, why).toBe(reason ? "n/a" : "pass");
    if (reason) expect(result.reason, why).toContain(reason);
  }
  expect(report.results.map((r) => r.id)).toEqual(CHECKS.map((c) => c.id));
}

/** A bookmark wait short enough for CI, long enough for a relay's hub to ask its upstream how far it has got first. */
const QUICK = ["--bookmark-seconds", "6"];

describe("the conformance suite", () => {
  let sim: Simulator;
  let relay: RunningRelay;
  let state: string;

  beforeAll(async () => {
    // Bookmarks once a minute, as an API server sends them: none comes during a check's watch.
    sim = await startSimulator({ initial: { namespaces: ["default"], podsPerNamespace: 2, nodes: 1, deployments: 0 } });
    state = mkdtempSync(join(tmpdir(), "relay-conformance-"));
    relay = await startRelay({ UPSTREAM_URL: sim.url, PERSIST_DIR: state });
  });
  afterAll(async () => {
    await relay?.stop();
    await sim?.close();
    rmSync(state, { recursive: true, force: true });
  });

  it("passes against the simulated API server, which takes writes and has no WebSocket watch", async () => {
    const { code, report } = await conformance(["--server", sim.url, "--namespace", "default", "--allow-writes", ...QUICK]);
    expectConformant(report, { "read-only": "the server takes writes", websocket: "does not take the WebSocket upgrade" });
    expect(code).toBe(0);
    // It cleans up after itself.
    expect(sim.list("configmaps", "default").filter((c) => c.metadata?.labels?.["conformance.kube-watch-relay.dev/suite"])).toEqual([]);
  });

  it("passes against the relay in front of it, whose upstream watch lags, writing through the simulator", async () => {
    // Every change reaches the relay's hubs 300 ms after it is made, as from an API server whose
    // watch cache is behind etcd: the other checks wait for what they wrote, and consistent-read
    // holds the relay to reads that see a write still on its way to its hub (DESIGN.md, invariant 8).
    sim.configure({ watchDelayMs: 300 });
    try {
      const { code, report } = await conformance(["--server", relay.url, "--writer-server", sim.url, "--namespace", "default", "--allow-writes", ...QUICK]);
      expectConformant(report, {});
      expect(code).toBe(0);
    } finally {
      sim.configure({ watchDelayMs: 0 });
    }
  });

  it("fails, exiting 1, against a proxy that leaves a gap in resumed watches", async () => {
    const proxy = await gapProxy(sim.url);
    try {
      const { code, report } = await conformance(["--server", proxy.url, "--writer-server", sim.url, "--namespace", "default", "--allow-writes", "--only", "watch-resume"]);
      expect(report.results).toEqual([
        {
          id: "watch-resume",
          title: expect.any(String),
          verdict: "fail",
          reason: expect.stringMatching(/^a watch from \d+ got MODIFIED conformance-watch-resume-x@\d+, .*, not ADDED conformance-watch-resume-x, MODIFIED/),
          ms: expect.any(Number),
        },
      ]);
      expect(code).toBe(1);
      // Declared, the same failure is expected: the suite exits 0.
      const declared = await conformance(["--server", proxy.url, "--writer-server", sim.url, "--namespace", "default", "--allow-writes", "--only", "watch-resume", "--expect-fail", "watch-resume"]);
      expect(declared.report.results.map((r) => [r.id, r.verdict])).toEqual([["watch-resume", "xfail"]]);
      expect(declared.code).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it("reads only unless told it may write, and says which checks need writes", async () => {
    const { code, report } = await conformance(["--server", relay.url, "--only", "consistent-read,selector-transitions,status-errors"]);
    expect(report.results.map((r) => [r.id, r.verdict])).toEqual([
      ["consistent-read", "n/a"],
      ["selector-transitions", "n/a"],
      ["status-errors", "pass"],
    ]);
    expect(report.results[0]?.reason).toContain("--allow-writes --namespace");
    expect(code).toBe(0);
  });
});

/**
 * A proxy in front of `upstream` that breaks exact resume: of a watch from a resourceVersion, it
 * drops the first change.
 */
async function gapProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? "/", upstream);
    const resumed = url.searchParams.has("watch") && /^[1-9][0-9]*$/.test(url.searchParams.get("resourceVersion") ?? "");
    const forwarded = request(url, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!resumed || answer.statusCode !== 200) return void answer.pipe(outgoing);
      const lines = new LineSplitter();
      let dropped = false;
      answer.on("data", (chunk: Buffer) => {
        for (const line of lines.push(chunk)) {
          const type = parseEventLine(line)?.type;
          if (!dropped && (type === "ADDED" || type === "MODIFIED" || type === "DELETED")) dropped = true;
          else outgoing.write(`${line}\n`);
        }
      });
      answer.on("end", () => outgoing.end());
      outgoing.on("close", () => answer.destroy());
    });
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  };
}
