/**
 * The client over one relay socket (`relaySocket()`, `watchMany()`): watches and informers of
 * several collections and clusters share one WebSocket; each lists (as a watch-list, in pages),
 * resumes from its own resourceVersion when the socket drops, and fails alone.
 */
import { describe, expect, it } from "vitest";
import { relaySocket, watchMany, type NamedUpdate } from "../../src/client/index.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { Inbox } from "../kit/inbox.ts";
import { Sim, uniqueNamespace } from "./helpers.ts";
import { collect, TestNetwork } from "./network.ts";

const sim = new Sim();
const other = new Sim("other");
const FAST = { initialMs: 20, maxMs: 200, random: () => 0.5 };

describe("the client over one relay socket", () => {
  it("informers of two clusters share one socket, list in pages over it, and all resume once it drops, each exactly once", async () => {
    const a = uniqueNamespace("sc-a");
    const b = uniqueNamespace("sc-b");
    for (let i = 0; i < 9; i++) await sim.createPod(a, `a${i}`);
    await other.createPod(b, "b0");
    const network = new TestNetwork();
    const socket = relaySocket("http://relay.test", { transport: network, pageSize: 4 });
    const changes = new Inbox<string>();
    const statuses = new Inbox<string>();
    const track = (name: string) => ({
      backoff: FAST,
      onAdd: (o: KubeObject) => changes.push(`${name} add ${o.metadata?.name}`),
      onUpdate: (o: KubeObject) => changes.push(`${name} update ${o.metadata?.name}`),
      onDelete: (o: KubeObject) => changes.push(`${name} delete ${o.metadata?.name}`),
      onStatus: (s: { type: string }) => statuses.push(`${name} ${s.type}`),
    });
    const pods = socket.informer(`http://relay.test/api/v1/namespaces/${a}/pods`, track("a"));
    const far = socket.informer(`http://relay.test/clusters/other/api/v1/namespaces/${b}/pods`, track("b"));
    await Promise.all([pods.synced, far.synced]);
    expect(changes.drain().sort()).toEqual(["a add a0", "a add a1", "a add a2", "a add a3", "a add a4", "a add a5", "a add a6", "a add a7", "a add a8", "b add b0"]);
    // One socket, no HTTP list: the lists were watch-lists on it, at most 4 objects a message.
    expect(network.sockets).toHaveLength(1);
    expect(network.lists).toBe(0);
    expect(Math.max(...pageSizes(network.sockets[0]!.messages))).toBeLessThanOrEqual(4);

    await sim.createPod(a, "live");
    expect(await changes.next()).toBe("a add live");

    // The relay goes away (as in a restart); the cluster moves meanwhile.
    const release = network.hold();
    network.drop();
    await sim.createPod(a, "missed");
    await sim.deletePod(a, "a0");
    await other.createPod(b, "b1");
    release();
    const seen = await changes.take(3, "the missed changes");
    expect(seen.sort()).toEqual(["a add missed", "a delete a0", "b add b1"]);
    const resumed = await takeUntilBoth(statuses, "resumed");
    expect(resumed.filter((s) => s.endsWith("relisted"))).toEqual([]);
    expect(network.sockets).toHaveLength(2);
    await sim.createPod(a, "after");
    expect(await changes.next()).toBe("a add after");
    expect(changes.drain()).toEqual([]);
    pods.stop();
    far.stop();
    await Promise.all([pods.done, far.done]);
    socket.close();
  });

  it("offers the socket's gzip framing by default: the same state and events as without, binary messages read in order, acknowledged as the text they hold", async () => {
    const ns = uniqueNamespace("sc-gz");
    for (let i = 0; i < 200; i += 25) await Promise.all(Array.from({ length: 25 }, (_, j) => sim.createPod(ns, `p${i + j}`, { app: "web" })));
    const run = async (compressed: boolean | undefined) => {
      const network = new TestNetwork();
      const socket = relaySocket("http://relay.test", { transport: network, pageSize: 50, ...(compressed === undefined ? {} : { compressed }) });
      const changes = new Inbox<string>();
      const pods = socket.informer(`http://relay.test/api/v1/namespaces/${ns}/pods`, {
        backoff: FAST,
        onAdd: (o: KubeObject) => changes.push(`add ${o.metadata?.name}`),
        onUpdate: (o: KubeObject) => changes.push(`update ${o.metadata?.name} ${o.metadata?.annotations?.note?.length}`),
      });
      await pods.synced;
      return { network, socket, changes, pods };
    };
    const [gzip, plain] = await Promise.all([run(undefined), run(false)]);
    expect(gzip.network.accepted).toEqual([GZIP_BATCH_PROTOCOL]);
    expect(plain.network.accepted).toEqual([BATCH_PROTOCOL]);
    expect(gzip.changes.drain().sort()).toEqual(plain.changes.drain().sort());
    expect(gzip.network.sockets[0]!.binary).toBeGreaterThanOrEqual(4);
    expect(plain.network.sockets[0]!.binary).toBe(0);

    await sim.patchPod(ns, "p0", { metadata: { annotations: { note: "x".repeat(3000) } } });
    for (const run of [gzip, plain]) expect(await run.changes.next("the change")).toBe("update p0 3000");
    // Its ACKs count the text, so at rest the last one is all that arrived (the wire's bytes are far fewer).
    const socket = gzip.network.sockets[0]!;
    const total = () => socket.received.reduce((n, r) => n + r, 0);
    await socket.sent.until((ack) => (JSON.parse(ack) as { received: number }).received === total(), "an ACK of everything received");
    for (const run of [gzip, plain]) {
      run.pods.stop();
      await run.pods.done;
      run.socket.close();
    }
  });

  it("watchMany: several collections, named; a forbidden or unknown one fails alone", async () => {
    const ns = uniqueNamespace("sc-m");
    await sim.createPod(ns, "p0");
    const network = new TestNetwork();
    const stop = new AbortController();
    const updates = collect<NamedUpdate<KubeObject>>(
      watchMany<KubeObject>(
        {
          pods: `http://relay.test/api/v1/namespaces/${ns}/pods`,
          widgets: `http://relay.test/api/v1/namespaces/${ns}/widgets`,
          nodes: "http://relay.test/clusters/other/api/v1/nodes",
        },
        { transport: network, backoff: FAST, signal: stop.signal },
      ),
    );
    const failed = await updates.until((u) => u.type === "failed", "the unknown resource's failure");
    expect(failed.at(-1)).toMatchObject({ name: "widgets", type: "failed", error: { code: 404 } });
    const listed = new Set<string>();
    while (listed.size < 2) {
      const u = await updates.next();
      if (u.type === "listed") listed.add(u.name);
    }
    await sim.createPod(ns, "p1");
    const added = await updates.until((u) => u.type === "ADDED", "the new pod");
    expect(added.at(-1)).toMatchObject({ name: "pods", type: "ADDED", object: { metadata: { name: "p1" } } });
    expect(network.sockets).toHaveLength(1);
    stop.abort();
    await updates.closed();
  });
});

function pageSizes(messages: readonly string[]): number[] {
  return messages.map((m) => m.split("\n").filter((l) => l.includes('"type":"ADDED"')).length);
}

/** Statuses until both watches (`a`, `b`) have reported `type`. */
async function takeUntilBoth(statuses: Inbox<string>, type: string): Promise<string[]> {
  const seen: string[] = [];
  const done = new Set<string>();
  while (done.size < 2) {
    const status = await statuses.next(`both watches ${type}`);
    seen.push(status);
    if (status.endsWith(` ${type}`)) done.add(status.split(" ")[0]!);
  }
  return seen;
}
