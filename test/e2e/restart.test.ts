/**
 * The relay process killed without warning and started again (invariant 4, end to end): the
 * hub comes back from its persisted state, and a subscriber that resumes with its last
 * resourceVersion gets exactly what it missed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WatchEvent } from "../../src/k8s/types.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { Inbox } from "../kit/inbox.ts";
import { freePort, startRelay, type RunningRelay } from "./harness.ts";

/** How long a wait for the relay's events may take: it starts (or resumes) a hub first. */
const WAIT_MS = 30_000;

/** A WebSocket watch from Node; its events, and then its close code, arrive in an inbox. */
function subscribe(url: string) {
  const socket = new WebSocket(url);
  const events = new Inbox<WatchEvent>();
  socket.addEventListener("message", (m) => events.push(JSON.parse(m.data as string) as WatchEvent));
  socket.addEventListener("close", (e) => events.end({ code: e.code }));
  return {
    take: (n: number) => events.take(n, `${n} events`, WAIT_MS),
    closed: () => events.closed("the socket to close", WAIT_MS),
    close: () => socket.close(),
  };
}

const rv = (e: WatchEvent | { metadata?: { resourceVersion?: string } }) => Number(("object" in e ? e.object : e).metadata?.resourceVersion);

describe("relay process killed and restarted", () => {
  let sim: Simulator;
  let state: string;
  let relay: RunningRelay | undefined;
  beforeAll(async () => {
    sim = await startSimulator({ initial: { namespaces: ["app"], podsPerNamespace: 2, nodes: 1, deployments: 1 } });
    state = mkdtempSync(join(tmpdir(), "relay-state-"));
  });
  afterAll(async () => {
    await relay?.stop();
    await sim?.close();
    rmSync(state, { recursive: true, force: true });
  });

  it("a subscriber resumes across the crash without loss", async () => {
    const port = await freePort();
    const env = { UPSTREAM_URL: sim.url, PERSIST_DIR: state, PORT: String(port) };
    relay = await startRelay(env);
    const ws = `${relay.url.replace("http:", "ws:")}/api/v1/namespaces/app/pods?watch=1`;
    const first = subscribe(ws);
    await first.take(2);
    const touch = (label: string) => rv(sim.patch("pods", "app", sim.list("pods", "app")[0]!.metadata!.name!, { metadata: { labels: { step: label } } }));
    const before = [touch("b0"), touch("b1")];
    expect((await first.take(2)).map(rv)).toEqual(before);

    // Kill the relay itself (its workerd), without warning.
    process.kill(relay.pids.workerd, "SIGKILL");
    expect((await first.closed()).code).toBe(1006);
    await relay.stop();
    const missed = [touch("m0"), touch("m1"), touch("m2")];

    relay = await startRelay(env);
    const resumed = subscribe(`${ws}&resourceVersion=${before.at(-1)}`);
    try {
      expect((await resumed.take(3)).map(rv)).toEqual(missed);
    } finally {
      resumed.close();
    }
  });
});
