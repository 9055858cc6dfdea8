/**
 * @module
 * Unchanged clients on a merged key (`--server …/clusters/*`): a `@kubernetes/client-node`
 * informer holds every object of every cluster, though the two clusters have pods of the same
 * namespace and name, and follows changes in both; kubectl lists them with their cluster, and
 * gets one by its merged name, and `kubectl top` reads every cluster's metrics (DESIGN.md, "One
 * watch across clusters").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, makeInformer, type Informer, type ObjectCache, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { freePort, startRelay, type RunningRelay } from "./harness.ts";
import { Kubectl, rows, simGet } from "./kube.ts";

const NAMESPACE = "shop";
let home: Simulator;
let east: Simulator;
let relay: RunningRelay | undefined;
let state: string;

async function write(sim: Simulator, method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(sim.url + path, {
    method,
    headers: { "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
}

const createPod = (sim: Simulator, name: string) =>
  write(sim, "POST", `/api/v1/namespaces/${NAMESPACE}/pods`, { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: NAMESPACE }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });

beforeAll(async () => {
  home = await startSimulator({ seed: 5, bookmarkIntervalMs: 1000 });
  east = await startSimulator({ seed: 6, bookmarkIntervalMs: 1000 });
  for (const sim of [home, east]) for (const name of ["web", "db"]) await createPod(sim, name);
  state = mkdtempSync(join(tmpdir(), "relay-fleet-state-"));
  relay = await startRelay({ UPSTREAM_URL: home.url, CLUSTERS: JSON.stringify({ east: { url: east.url } }), PERSIST_DIR: state, PORT: String(await freePort()) });
});

afterAll(async () => {
  await relay?.stop();
  await home?.close();
  await east?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

type PodInformer = Informer<V1Pod> & ObjectCache<V1Pod>;

/** What an informer holds: `name@cluster`, sorted. */
const held = (informer: PodInformer) =>
  informer
    .list()
    .map((p) => `${p.metadata?.name}@${p.metadata?.annotations?.["kube-watch-relay.dev/cluster"]}`)
    .sort();

/** Resolves once `ready` holds of the informer, checked again on every change it sees. */
function until(informer: PodInformer, ready: () => boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    const check = () => {
      if (!ready()) return;
      informer.off("change", check);
      informer.off("add", check);
      resolve();
    };
    informer.on("change", check);
    informer.on("add", check);
    check();
  });
}

describe("an informer on /clusters/*", () => {
  it("holds every pod of every cluster under names that never collide, and follows both clusters' changes", { timeout: 120_000 }, async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // client-node refuses a plain http:// server unless skipTLSVerify is set.
      clusters: [{ name: "fleet", server: `${relay!.url}/clusters/*`, skipTLSVerify: true }],
      users: [{ name: "user" }],
      contexts: [{ name: "fleet", cluster: "fleet", user: "user" }],
      currentContext: "fleet",
    });
    const api = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, `/api/v1/namespaces/${NAMESPACE}/pods`, () => api.listNamespacedPod({ namespace: NAMESPACE })) as PodInformer;
    const errors: unknown[] = [];
    informer.on("error", (e) => errors.push(e));
    await informer.start();
    try {
      expect(held(informer)).toEqual(["default:db@default", "default:web@default", "east:db@east", "east:web@east"]);
      await createPod(east, "cache");
      await write(home, "PATCH", `/api/v1/namespaces/${NAMESPACE}/pods/web`, { metadata: { labels: { tier: "front" } } });
      await until(informer, () => held(informer).length === 5 && informer.get("default:web", NAMESPACE)?.metadata?.labels?.tier === "front");
      expect(held(informer)).toEqual(["default:db@default", "default:web@default", "east:cache@east", "east:db@east", "east:web@east"]);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it("is listed by kubectl --server …/clusters/*, each pod with its cluster, and a pod got by its merged name", { timeout: 60_000 }, async () => {
    const kubectl = new Kubectl(`${relay!.url}/clusters/*`);
    try {
      const { code, stdout, stderr } = await kubectl.run("get", "pods", "-n", NAMESPACE);
      expect(code, stderr).toBe(0);
      expect(stdout.split("\n")[0]).toMatch(/^NAME\s+CLUSTER\s+READY/);
      expect(rows(stdout).map((r) => [r[0], r[1]])).toEqual(
        expect.arrayContaining([
          ["default:web", "default"],
          ["east:web", "east"],
        ]),
      );
      // One pod by its merged name: its own cluster's get, renamed.
      const got = await kubectl.run("get", "pod", "east:web", "-n", NAMESPACE);
      expect(got.code, got.stderr).toBe(0);
      expect(rows(got.stdout).map((r) => [r[0], r[1]])).toEqual([["east:web", "east"]]);
    } finally {
      kubectl.cleanup();
    }
  });

  it("answers kubectl top pods on /clusters/*: every cluster's running pods, under their merged names", { timeout: 60_000 }, async () => {
    const kubectl = new Kubectl(`${relay!.url}/clusters/*`);
    try {
      const { code, stdout, stderr } = await kubectl.run("top", "pods", "-n", "team-a");
      expect(code, stderr).toBe(0);
      expect(stdout.split("\n")[0]).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*$/);
      const running = async (sim: Simulator, cluster: string) =>
        (await simGet(sim.url, "/api/v1/namespaces/team-a/pods")).items.filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Running").map((p) => `${cluster}:${p.metadata?.name}`);
      const expected = [...(await running(home, "default")), ...(await running(east, "east"))];
      expect(expected.length).toBeGreaterThan(0);
      expect(rows(stdout).map((r) => r[0])).toEqual(expected);
      for (const r of rows(stdout)) expect(`${r[1]} ${r[2]}`).toMatch(/^\d+m \d+Mi$/);
    } finally {
      kubectl.cleanup();
    }
  });
});
