/**
 * @module
 * kubectl, unchanged, against `npm start`'s relay: the commands a user types, with the columns a
 * real cluster prints (Tables made by the relay), live `-w` events, and a mistaken `apply`
 * that fails with the relay's read-only message. Churn is off while lists are compared with the
 * simulated cluster's own (so they are exact) and on for the watch.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { have } from "../kit/tools.ts";
import { eventually } from "../kit/wait.ts";
import { Kubectl, rows, setChurn, simGet, simulatorUrl } from "./kube.ts";

const hasKubectl = have("kubectl", "the end-to-end kubectl tests");

let relay: RunningRelay;
let sim: string;
let kubectl: Kubectl;

beforeAll(async () => {
  if (!hasKubectl) return;
  relay = await startRelay({ SIM_CHURN: "0" });
  sim = simulatorUrl(relay);
  kubectl = new Kubectl(relay.url);
});
afterAll(async () => {
  await relay?.stop();
  kubectl?.cleanup();
});

const names = (objects: KubeObject[], namespaced = true) =>
  objects.map((o) => (namespaced ? [o.metadata?.namespace, o.metadata?.name] : [o.metadata?.name])).sort((a, b) => a.join("/").localeCompare(b.join("/")));

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl.run(...args);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

describe.skipIf(!hasKubectl)("kubectl through the relay", () => {
  it("get pods -A: every pod, with the server-side columns", async () => {
    const out = await ok("get", "pods", "-A");
    expect(out.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    const printed = rows(out);
    expect(printed.map((r) => [r[0], r[1]])).toEqual(names((await simGet(sim, "/api/v1/pods")).items));
    expect(printed.every((r) => /^\d+\/\d+$/.test(r[2]!) && r[3] !== "")).toBe(true);
  });

  it("get deployments.apps -A, get nodes (cluster-scoped), get widgets -A (a custom resource)", async () => {
    const deployments = await ok("get", "deployments.apps", "-A");
    expect(deployments.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(rows(deployments).map((r) => [r[0], r[1]])).toEqual(names((await simGet(sim, "/apis/apps/v1/deployments")).items));

    const nodes = await ok("get", "nodes");
    expect(nodes.split("\n")[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(rows(nodes).map((r) => [r[0]])).toEqual(names((await simGet(sim, "/api/v1/nodes")).items, false));
    expect(rows(nodes).every((r) => r[1] === "Ready")).toBe(true);

    const widgets = await ok("get", "widgets", "-A");
    expect(widgets.split("\n")[0]).toMatch(/^NAMESPACE\s+NAME\s+AGE$/);
    expect(rows(widgets).map((r) => [r[0], r[1]])).toEqual(names((await simGet(sim, "/apis/example.com/v1/widgets")).items));
  });

  it("get pod NAME -n NS: one row, wide columns on request", async () => {
    const pod = (await simGet(sim, "/api/v1/namespaces/team-b/pods")).items[0]!;
    const out = await ok("get", "pod", pod.metadata!.name!, "-n", "team-b", "-o", "wide");
    expect(out.split("\n")[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    const printed = rows(out);
    expect(printed).toHaveLength(1);
    const status = (pod as { status?: { podIP?: string } }).status;
    expect([printed[0]![0], printed[0]![5], printed[0]![6]]).toEqual([pod.metadata!.name, status?.podIP, (pod as { spec?: { nodeName?: string } }).spec?.nodeName]);
  });

  it("get cm -n NS and get cm -A of ConfigMaps of 1.2 MB (Helm's release records are such): every one, listed as kubectl lists them (limit=500)", async () => {
    const ns = "big-configmaps";
    const created: string[] = [];
    for (let i = 0; i < 9; i++) {
      const name = `release-v${i}`;
      const body = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { release: "x".repeat(1_200_000) } });
      const response = await fetch(`${sim}/api/v1/namespaces/${ns}/configmaps`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(response.status).toBe(201);
      created.push(name);
    }
    try {
      // Before the relay listed a page by bytes, both were an empty reply: "Unable to connect to the server: EOF".
      expect(rows(await ok("get", "cm", "-n", ns)).map((r) => r[0])).toEqual(created);
      expect(
        rows(await ok("get", "cm", "-A"))
          .filter((r) => r[0] === ns)
          .map((r) => r[1]),
      ).toEqual(created);
    } finally {
      for (const name of created) await fetch(`${sim}/api/v1/namespaces/${ns}/configmaps/${name}`, { method: "DELETE" });
    }
  });

  it("get pods -A -o json and @kubernetes/client-node's list take the list gzip-coded (both ask for gzip), one compression of the page for both", async () => {
    type Gzip = { compressed: number; shared: number };
    const coded = async () => ((await (await fetch(`${relay.url}/_relay/stats/api/v1/pods`)).json()) as { listsGzip: Gzip }).listsGzip;
    // The hub made and its first list whole: a cold key's first list is read as the hub stages it, uncoded.
    await ok("get", "pods", "-A", "-o", "name");
    const before = await coded();
    const listed = JSON.parse(await ok("get", "pods", "-A", "-o", "json")) as { items: KubeObject[] };
    const expected = names((await simGet(sim, "/api/v1/pods")).items);
    expect(names(listed.items)).toEqual(expected);
    const kc = new KubeConfig();
    // (client-node refuses a plain http:// server unless skipTLSVerify is set.)
    kc.loadFromOptions({
      clusters: [{ name: "relay", server: relay.url, skipTLSVerify: true }],
      users: [{ name: "none" }],
      contexts: [{ name: "relay", cluster: "relay", user: "none" }],
      currentContext: "relay",
    });
    const fromNode = await kc.makeApiClient(CoreV1Api).listPodForAllNamespaces({ limit: 500 });
    expect(names(fromNode.items as KubeObject[])).toEqual(expected);
    const after = await coded();
    // Churn is off: both read the same page, compressed at most once between them.
    expect(after.compressed + after.shared - before.compressed - before.shared).toBe(2);
    expect(after.compressed - before.compressed).toBeLessThanOrEqual(1);
  });

  it("a mistaken apply fails with the relay's read-only message", async () => {
    const manifest = join(kubectl.home, "pod.yaml");
    writeFileSync(manifest, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: mistaken\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: nginx\n");
    const result = await kubectl.run("apply", "-f", manifest);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toBe(`Error from server (MethodNotAllowed): error when creating "${manifest}": the relay is read-only: POST is not allowed (only get, list and watch)`);
    expect((await simGet(sim, "/api/v1/namespaces/default/pods")).items.map((p) => p.metadata?.name)).not.toContain("mistaken");
  });

  it("get pods -n NS -w: the list, then churn events as they happen, in the Table's columns", async () => {
    const initial = (await simGet(sim, "/api/v1/namespaces/team-c/pods")).items.length;
    const watch = kubectl.follow("get", "pods", "-n", "team-c", "-w");
    try {
      // Header and one row per pod: the list. kubectl then watches from the list's resourceVersion,
      // so every change made from here on reaches it through the watch, whenever the watch opens.
      await watch.waitFor((l) => l.length >= 1 + initial, "the initial list");
      expect(watch.lines[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      await setChurn(sim, { ratePerSec: 20, namespaces: ["team-c"] });
      await watch.waitFor((l) => l.length >= 1 + initial + 10, "10 live events");
    } finally {
      await setChurn(sim, { ratePerSec: 0 });
      watch.stop();
    }
    const live = watch.lines.slice(1 + initial).map((l) => l.trim().split(/\s{2,}/));
    // READY and STATUS are the relay's Table cells: without a Table kubectl prints only NAME and AGE.
    for (const row of live) {
      expect(row).toHaveLength(5);
      expect(row[1]).toMatch(/^\d+\/\d+$/);
      expect(row[2]).toMatch(/^[A-Z][\w:/.-]*$/);
    }
  });

  /** A pod of one container, made on the simulated cluster. */
  async function createPod(namespace: string, name: string): Promise<void> {
    const created = await fetch(`${sim}/api/v1/namespaces/${namespace}/pods`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } }),
    });
    expect(created.status).toBe(201);
  }

  it("describe pod costs the API server at most what it costs without the relay: two gets of the pod and one list of its Events, no watch", async () => {
    const ns = "e2e-describe-cost";
    await createPod(ns, "described");
    /** What `kubectl describe` asked of the simulated cluster about the namespace, through `server`. */
    const describe = async (...server: string[]) => {
      const { next } = await simGet<{ next: number }>(sim, "/_sim/requests?path=/nothing");
      expect(await ok(...server, "describe", "pod", "described", "-n", ns)).toMatch(/^Name:\s+described\n/);
      const { requests } = await simGet<{ requests: Array<{ verb: string; path: string; query: string }> }>(sim, `/_sim/requests?since=${next}&path=/api/v1/namespaces/${ns}/`);
      // kubectl writes a field selector's terms in a Go map's order, which changes from run to run.
      const terms = (selector: string | null) => (selector ?? "").split(",").filter(Boolean).sort().join(",");
      return requests.map((r) => `${r.verb} ${r.path}?${terms(new URLSearchParams(r.query).get("fieldSelector"))}`);
    };
    const direct = await describe("--server", sim);
    expect(direct).toEqual([
      `get /api/v1/namespaces/${ns}/pods/described?`,
      `get /api/v1/namespaces/${ns}/pods/described?`,
      expect.stringMatching(new RegExp(`^list /api/v1/namespaces/${ns}/events\\?involvedObject.name=described,involvedObject.namespace=${ns},involvedObject.uid=`)),
    ]);
    // Through the relay, no more than that: a get a live hub can answer (the all-namespaces pods an
    // earlier test listed) costs nothing, and nothing is watched.
    const relayed = await describe();
    expect(relayed.length).toBeGreaterThan(0);
    for (const request of relayed) expect(direct).toContainEqual(request);
    expect(relayed.filter((r) => r === direct[0]).length).toBeLessThanOrEqual(2);
  });

  it("describe pod: the Events the simulated cluster recorded about a pod its controllers started", async () => {
    const ns = "e2e-describe";
    // npm start's simulated cluster records Events (its churn's `events`): the scheduler's and the kubelet's.
    await createPod(ns, "started");
    // Scheduled, its image pulled, its container created and started.
    const isRunning = (p: KubeObject) => (p as { status?: { phase?: string } }).status?.phase === "Running";
    const running = await eventually(
      async () => {
        const pod = await simGet<KubeObject>(sim, `/api/v1/namespaces/${ns}/pods/started`);
        return isRunning(pod) && pod;
      },
      "the pod to be started",
      30_000,
    );
    const out = await ok("describe", "pod", running.metadata!.name!, "-n", ns);
    const events = out.slice(out.indexOf("\nEvents:"));
    expect(events).toMatch(/^\nEvents:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/);
    expect(events).toMatch(new RegExp(`Normal\\s+Scheduled\\s+\\S+\\s+default-scheduler\\s+Successfully assigned ${ns}/${running.metadata!.name} to sim-node-\\d`));
    expect(events).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container \S+/);
  });
});
