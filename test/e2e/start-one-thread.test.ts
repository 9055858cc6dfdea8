/**
 * On one machine a hot key stays one hub (scripts/one-thread.ts): `npm start` runs every Durable
 * Object on workerd's one thread, where a replica hub adds work and no capacity. Past the
 * deployed threshold (500 subscribers a hub) the key has no replicas; `SUBSCRIBERS_PER_HUB` set
 * still makes them.
 */
import { describe, expect, it } from "vitest";
import type { HubIndexEntry } from "../../src/metrics/report.ts";
import { eventually } from "../kit/wait.ts";
import { startRelay, type RunningRelay } from "./harness.ts";

const PODS = "/api/v1/namespaces/default/pods";

/** `n` HTTP watches of the key, each attached to its hub when this resolves; open until `close`. */
async function watches(relay: RunningRelay, n: number): Promise<{ close(): Promise<void> }> {
  const opened = await Promise.all(
    Array.from({ length: n }, async () => {
      const response = await fetch(`${relay.url}${PODS}?watch=1`);
      expect(response.status).toBe(200);
      return response.body as ReadableStream<Uint8Array>;
    }),
  );
  return { close: async () => void (await Promise.all(opened.map((body) => body.cancel().catch(() => undefined)))) };
}

/** The key's hub's numbers, or one of its replicas' (a replica that does not exist has none). */
async function stats(relay: RunningRelay, replica?: string): Promise<{ subscribers: number; replicas: unknown[] }> {
  const query = replica === undefined ? "" : `?replica=${encodeURIComponent(replica)}`;
  const response = await fetch(`${relay.url}/_relay/stats${PODS}${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { subscribers: number; replicas: unknown[] };
}

/** The root's subscribers reach `n`, and then one more subscribes: where the root places it, and the root's name. */
async function oneMoreAfter(relay: RunningRelay, n: number): Promise<{ root: string; close(): Promise<void> }> {
  const first = await watches(relay, n);
  await eventually(async () => (await stats(relay)).subscribers === n, `the root to count ${n} subscribers`);
  const last = await watches(relay, 1);
  const root = await eventually(async () => {
    const { hubs } = (await (await fetch(`${relay.url}/_relay/hubs`)).json()) as { hubs: HubIndexEntry[] };
    return hubs.find((hub) => hub.root === undefined)?.hub;
  }, "the root in the hub index");
  return { root, close: async () => void (await Promise.all([first.close(), last.close()])) };
}

describe.concurrent("npm start: a hot key on one thread", () => {
  it("the 501st subscriber of a key, past the deployed threshold of 500 a hub, goes to its one hub, not to a replica", async () => {
    const relay = await startRelay({ SIM_CHURN: "0", MAX_SUBSCRIPTIONS_PER_SUBJECT: "1000" });
    try {
      const { root, close } = await oneMoreAfter(relay, 500);
      expect((await stats(relay, `${root}#local-1`)).subscribers).toBe(0);
      expect(await stats(relay)).toMatchObject({ subscribers: 501, replicas: [] });
      await close();
    } finally {
      await relay.stop();
    }
  });

  it("SUBSCRIBERS_PER_HUB set: past it, the key's next subscriber goes to a replica, as deployed", async () => {
    const relay = await startRelay({ SIM_CHURN: "0", SUBSCRIBERS_PER_HUB: "2" });
    try {
      const { root, close } = await oneMoreAfter(relay, 2);
      expect((await stats(relay, `${root}#local-1`)).subscribers).toBe(1);
      await close();
    } finally {
      await relay.stop();
    }
  });
});
