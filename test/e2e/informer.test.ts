/**
 * @module
 * `@kubernetes/client-node` informers, unchanged, against `npm start`'s relay. Three informers
 * on one collection sync, stay in sync through a minute's worth of churn, accelerated (750 pod
 * changes at 50/s: about 15 s of wall time, a minute of a busy namespace at ~12/s), and end with
 * caches equal to the simulated cluster's own list — uids and resourceVersions, read from the
 * simulator directly. The upstream sees one watch for the collection, however many informers.
 */
import { CoreV1Api, KubeConfig, makeInformer, type Informer, type ObjectCache, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRelay, type RunningRelay } from "./harness.ts";
import { setChurn, simGet, simulatorUrl } from "./kube.ts";

const NAMESPACE = "team-a";
const PATH = `/api/v1/namespaces/${NAMESPACE}/pods`;
const INFORMERS = 3;
const CHANGES = 750;
const RATE_PER_SEC = 50;

let relay: RunningRelay;
let sim: string;

beforeAll(async () => {
  relay = await startRelay({ SIM_CHURN: "0" });
  sim = simulatorUrl(relay);
});
afterAll(async () => {
  await setChurn(sim, { ratePerSec: 0 }).catch(() => undefined);
  await relay?.stop();
});

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses a plain http:// server unless skipTLSVerify is set.
    clusters: [{ name: "relay", server, skipTLSVerify: true }],
    users: [{ name: "relay-user" }],
    contexts: [{ name: "relay", cluster: "relay", user: "relay-user" }],
    currentContext: "relay",
  });
  return kc;
}

type PodInformer = Informer<V1Pod> & ObjectCache<V1Pod>;

/** What an informer holds, comparable with the upstream's list: `uid@resourceVersion`, sorted. */
const snapshot = (pods: ReadonlyArray<{ metadata?: { uid?: string; resourceVersion?: string } }>): string[] => pods.map((p) => `${p.metadata?.uid}@${p.metadata?.resourceVersion}`).sort();

const upstreamSnapshot = async (): Promise<string[]> => snapshot((await simGet(sim, PATH)).items);

/** Resolves once the informer's cache equals `expected`, checking again on every change it sees. */
function converged(informer: PodInformer, expected: string[]): Promise<void> {
  const want = JSON.stringify(expected);
  return new Promise<void>((resolve) => {
    const check = () => {
      if (JSON.stringify(snapshot(informer.list())) !== want) return;
      informer.off("change", check);
      resolve();
    };
    informer.on("change", check);
    check();
  });
}

const upstreamWatches = async () => (await simGet<{ activeWatches: Array<{ path: string }> }>(sim, "/_sim/stats")).activeWatches.filter((w) => w.path === PATH);

describe("@kubernetes/client-node informers through the relay", () => {
  it(`${INFORMERS} informers sync, follow ${CHANGES} changes at ${RATE_PER_SEC}/s, and end equal to the upstream`, { timeout: 120_000 }, async () => {
    const kc = kubeConfig(relay.url);
    const api = kc.makeApiClient(CoreV1Api);
    const informers: PodInformer[] = Array.from({ length: INFORMERS }, () => makeInformer<V1Pod>(kc, PATH, () => api.listNamespacedPod({ namespace: NAMESPACE })));
    const errors: unknown[] = [];
    for (const informer of informers) informer.on("error", (e) => errors.push(e));
    await Promise.all(informers.map((i) => i.start()));
    try {
      const synced = await upstreamSnapshot();
      for (const informer of informers) expect(snapshot(informer.list())).toEqual(synced);

      let seen = 0;
      const churned = new Promise<void>((resolve) => informers[0]!.on("change", () => ++seen === CHANGES && resolve()));
      await setChurn(sim, { ratePerSec: RATE_PER_SEC, namespaces: [NAMESPACE] });
      await churned;
      await setChurn(sim, { ratePerSec: 0 });

      // Churn has stopped (the simulator applies each change synchronously): this is the final state.
      const final = await upstreamSnapshot();
      await Promise.all(informers.map((i) => converged(i, final)));
      for (const informer of informers) expect(snapshot(informer.list())).toEqual(final);
      expect(final).not.toEqual(synced);
      expect(errors).toEqual([]);
      expect(await upstreamWatches()).toHaveLength(1);
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  });
});
