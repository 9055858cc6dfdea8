/**
 * @module
 * `npm run bench:heap -- [--keys N] [--objects M] [--churn R] [--seconds S] [--out DIR]`: what the
 * heap of a relay with `N` hubs of `M` pods holds, and why (it found docs/decisions/0013).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { summarise, summaryText, type HeapSnapshot } from "./heap-snapshot.ts";
import { BIG_POD_ANNOTATIONS } from "./scenarios/big.ts";
import { keySelector } from "./scenarios/keys.ts";
import { until } from "./scenarios/own.ts";
import { podsOf } from "./scenarios/scenario.ts";
import { Sim } from "./sim.ts";
import { startRelay, type Relay } from "./systems/workerd.ts";

const { values } = parseArgs({
  options: {
    keys: { type: "string", default: "1000" },
    objects: { type: "string", default: "100" },
    churn: { type: "string", default: "5" },
    seconds: { type: "string", default: "30" },
    out: { type: "string" },
  },
});
const [keys, objects, churn, seconds] = [values.keys, values.objects, values.churn, values.seconds].map(Number) as [number, number, number, number];
const out = values.out ?? mkdtempSync(join(tmpdir(), "kwr-heap-"));
mkdirSync(out, { recursive: true });
const NAMESPACE = "heap";
/** A hub waiting its turn for a list page answers 503: a subscriber asks again, as clients do. */
const RETRIES = 300;
/** How long after the churn every hub has to hold some of it. */
const CHURN_WAIT_MS = 30_000;

const started = Date.now();
const say = (line: string) => console.log(`[heap ${Math.round((Date.now() - started) / 1000)}s] ${line}`);

const heapMB = async (relay: Relay) => (await relay.relay.heapBytes()) / 2 ** 20;

async function snapshot(relay: Relay, name: string): Promise<void> {
  const chunks: string[] = [];
  relay.inspector.on("HeapProfiler.addHeapSnapshotChunk", (params) => chunks.push((params as { chunk: string }).chunk));
  await relay.inspector.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  const text = chunks.join("");
  const file = join(out, `${name}.heapsnapshot`);
  writeFileSync(file, text);
  say(`heap snapshot ${name}: ${file}\n${summaryText(summarise(JSON.parse(text) as HeapSnapshot))}`);
}

/** A watch of one key; resolves once its initial state has arrived. */
function subscribe(relay: Relay, key: number, sockets: WebSocket[]): Promise<void> {
  const url = `${relay.info.url.replace(/^http/, "ws")}${podsOf(NAMESPACE)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=${encodeURIComponent(keySelector(key))}`;
  const attempt = () =>
    new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(url);
      sockets.push(socket);
      let received = 0;
      let acked = 0;
      let synced = false;
      socket.on("message", (data: Buffer) => {
        // Unacknowledged, a subscriber is held to its budget.
        received += data.length;
        if (received - acked >= 256 * 1024) {
          acked = received;
          socket.send(`{"type":"ACK","received":${received}}`);
        }
        if (!synced && data.includes("initial-events-end")) {
          synced = true;
          resolve();
        }
      });
      socket.on("unexpected-response", (_, response) => reject(new Error(`HTTP ${response.statusCode}`)));
      socket.on("error", reject);
      socket.on("close", (code) => {
        if (!synced) reject(new Error(`closed (${code}) before its initial state`));
      });
    });
  const from = (tries: number): Promise<void> =>
    attempt().catch(async (e: unknown) => {
      if (tries >= RETRIES) throw e;
      await sleep(1000);
      return from(tries + 1);
    });
  return from(1);
}

const sim = await Sim.start({ namespaces: [NAMESPACE], slimPodNamespaces: [] }, out, "sim");
let relay: Relay | undefined;
const sockets: WebSocket[] = [];
const stop = async () => {
  for (const socket of sockets) socket.terminate();
  await relay?.stop();
  await sim.stop();
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stop().finally(() => process.exit(130)));
try {
  relay = await startRelay(sim, out, { name: "relay" });
  const held = await sim.populate(NAMESPACE, objects, BIG_POD_ANNOTATIONS);
  say(`${held} pods; the relay's heap ${(await heapMB(relay)).toFixed(1)} MB; opening ${keys} hubs, a subscriber on each`);
  let synced = 0;
  const opened = Promise.all(Array.from({ length: keys }, (_, key) => subscribe(relay as Relay, key, sockets).then(() => void synced++)));
  for (let done = false; !done; ) {
    done = await Promise.race([opened.then(() => true), sleep(10_000).then(() => false)]);
    say(`${synced} of ${keys} hubs have sent their initial state; heap ${(await heapMB(relay)).toFixed(1)} MB`);
  }
  await snapshot(relay, "opened");
  if (churn > 0 && seconds > 0) {
    const heads = () => Promise.all(Array.from({ length: keys }, (_, key) => (relay as Relay).relay.head(podsOf(NAMESPACE), keySelector(key))));
    const before = await heads();
    await sim.churn(churn, NAMESPACE);
    for (let at = 0; at < seconds; at += 2) {
      await sleep(2000);
      say(`churn, ${churn} changes/s: heap ${(await heapMB(relay)).toFixed(1)} MB`);
    }
    // Every hub holds some of the churn before the snapshot that is to show it.
    if (!(await until(async () => (await heads()).every((head, key) => head > (before[key] as number)), CHURN_WAIT_MS))) {
      throw new Error(`a hub took none of the churn within ${CHURN_WAIT_MS / 1000} s of it: heads ${(await heads()).join(", ")}, from ${before.join(", ")}`);
    }
    await snapshot(relay, "churned");
    await sim.churn(0);
  }
  say(`done; logs and snapshots in ${out}`);
} finally {
  await stop();
}
