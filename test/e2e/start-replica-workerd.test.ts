/**
 * `REPLICA_WORKERD=1 npm start`: a hot key's replica hubs in a second workerd, a thread of their
 * own as each hub has deployed (scripts/runtime.ts). A replica there serves its subscriber the
 * root's history exactly; the root's subscribers go on while that workerd is stopped; both
 * workerds stop with the launcher, kill -9 included, and the dev registry a killed launcher left
 * behind is removed by the next start.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HubIndexEntry } from "../../src/metrics/report.ts";
import { openWatch, type WatchReader } from "../kit/lines.ts";
import { jwtFor } from "../kit/tokens.ts";
import { eventually } from "../kit/wait.ts";
import { processExit, running, startRelay } from "./harness.ts";

const PODS = "/api/v1/namespaces/default/pods";
const SECRET = "replica-workerd-secret-long-enough-for-hs256";

/** What identifies an event in a history. */
const step = (line: string) => {
  const event = JSON.parse(line) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
  return `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`;
};
const rvOf = (line: string) => Number(step(line).split(" ")[2]);

describe.concurrent("npm start with REPLICA_WORKERD=1", () => {
  it("in jwt mode, a replica hub runs in the second workerd: its subscriber gets the root's history while the root's goes on without it, and both workerds stop with npm start", async () => {
    // In jwt mode: the second workerd has the first's secrets, and a replica serves the grant its subscriber's token carried.
    const relay = await startRelay({ AUTH_MODE: "jwt", AUTH_JWT_SECRET: SECRET, SUBSCRIBERS_PER_HUB: "1", REPLICA_WORKERD: "1", SIM_CHURN: "20" });
    const readers: WatchReader[] = [];
    try {
      const auth = { authorization: `Bearer ${await jwtFor("ops", [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }], { secret: SECRET })}` };
      const get = (path: string) => fetch(`${relay.url}${path}`, { headers: auth });
      const replicasPid = relay.pids.replicas;
      expect(replicasPid).toBeDefined();
      expect(replicasPid).not.toBe(relay.pids.workerd);
      const stats = async (replica?: string) => {
        const response = await get(`/_relay/stats${PODS}${replica === undefined ? "" : `?replica=${encodeURIComponent(replica)}`}`);
        expect(response.status).toBe(200);
        return (await response.json()) as { subscribers: number; watching: boolean };
      };
      /** A watch from where a list just now stood, and that resourceVersion. */
      const fromNow = async () => {
        const { metadata } = (await (await get(PODS)).json()) as { metadata: { resourceVersion: string } };
        return { url: `${relay.url}${PODS}?watch=1&resourceVersion=${metadata.resourceVersion}`, rv: Number(metadata.resourceVersion) };
      };
      // The first is the root's own (its share is one); the root sends the next to a replica.
      const onRoot = await openWatch((await fromNow()).url, auth);
      readers.push(onRoot);
      await eventually(async () => (await stats()).subscribers === 1, "the root to count its subscriber");
      const root = await eventually(async () => {
        const { hubs } = (await (await get("/_relay/hubs")).json()) as { hubs: HubIndexEntry[] };
        return hubs.find((hub) => hub.root === undefined)?.hub;
      }, "the root in the hub index");
      const replica = `${root}#local-1`;
      // A first watch makes the replica. One not caught up with its root within 3 s sends a watch
      // back to the root (a cold second workerd on a busy machine may not be): the measured
      // subscriber comes once the replica watches.
      const warm = await openWatch(`${relay.url}${PODS}?watch=1`, auth);
      await eventually(async () => (await stats(replica)).watching, "the replica to watch its root", 30_000);
      warm.close();
      const from = await fromNow();
      const onReplica = await openWatch(from.url, auth);
      readers.push(onReplica);
      await eventually(async () => (await stats(replica)).subscribers === 1, "the replica to hold the measured subscriber alone");
      await onReplica.nextLine("the replica's first event", 30_000);

      // The replicas' workerd stopped: the root's subscriber goes on, the replica's cannot.
      process.kill(replicasPid!, "SIGSTOP");
      try {
        // What was on its way from the replicas' workerd has arrived once the root's has had 10 more.
        const more = async (n: number) => {
          const target = onRoot.lines.length + n;
          await eventually(() => onRoot.lines.length >= target, `${n} more events on the root`);
        };
        await more(10);
        const held = onReplica.lines.length;
        await more(30);
        expect(onReplica.lines.length).toBe(held);
        expect(rvOf(onRoot.lines.at(-1)!)).toBeGreaterThan(rvOf(onReplica.lines.at(-1)!));
      } finally {
        process.kill(replicasPid!, "SIGCONT");
      }

      // Back: the replica's subscriber has every event the root's had since it began, in the same order, once.
      const head = rvOf(onRoot.lines.at(-1)!);
      await onReplica.untilLine((line) => rvOf(line) >= head, "the replica's subscriber to catch up", 30_000);
      const upTo = (lines: string[]) => lines.filter((line) => rvOf(line) > from.rv && rvOf(line) <= head).map(step);
      expect(upTo(onRoot.lines).length).toBeGreaterThan(30);
      expect(upTo(onReplica.lines)).toEqual(upTo(onRoot.lines));
      expect(new Set(upTo(onRoot.lines)).size).toBe(upTo(onRoot.lines).length);
    } finally {
      for (const reader of readers) reader.close();
      await relay.stop();
    }
    expect(running(relay.pids.workerd)).toBe(false);
    expect(running(relay.pids.replicas!)).toBe(false);
  });

  it("kill -9 of the launcher: both workerds exit, and the next start removes the dev registry it left behind", async () => {
    // A temporary directory of its own, so the registries in it are this test's relays' alone.
    const temp = mkdtempSync(join(tmpdir(), "relay-replica-tmp-"));
    const registries = () => readdirSync(temp).filter((name) => name.startsWith("relay-registry-"));
    try {
      const killed = await startRelay({ REPLICA_WORKERD: "1", SIM_CHURN: "0", TMPDIR: temp });
      let left: string[];
      try {
        left = registries();
        expect(left).toHaveLength(1);
        process.kill(killed.pids.launcher, "SIGKILL");
        await Promise.all([processExit(killed.pids.workerd, 10_000), processExit(killed.pids.replicas!, 10_000)]);
        expect(registries()).toEqual(left);
      } finally {
        await killed.stop();
      }
      const next = await startRelay({ REPLICA_WORKERD: "1", SIM_CHURN: "0", TMPDIR: temp });
      try {
        const now = registries();
        expect(now).toHaveLength(1);
        expect(now).not.toEqual(left);
        // The live relay's own registry serves it: a hub's list answers.
        expect((await fetch(`${next.url}${PODS}`)).status).toBe(200);
      } finally {
        await next.stop();
      }
      expect(registries()).toEqual([]);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  });
});
