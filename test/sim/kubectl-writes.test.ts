/**
 * @module
 * A real kubectl writing to the simulator, verb by verb, as a person trying the demo would:
 * create (the typed client's protobuf, and -f), apply (client-side, which reads the published
 * OpenAPI, with the server's field validation), delete (cascading to what a Deployment owns),
 * scale, label, annotate, edit, patch (merge, JSON and strategic), rollout restart, namespaces
 * and explain; with the controllers keeping Deployments, ReplicaSets and Pods consistent.
 * Skipped, loudly, without kubectl (on CI, a failure).
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/k8s/types.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { have } from "../kit/tools.ts";
import { eventually } from "../kit/wait.ts";

const hasKubectl = have("kubectl", "the simulator's kubectl write tests");
const run = promisify(execFile);

let sim: Simulator;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sim = await startSimulator({ seed: 33, openapi: true, controllers: true });
  home = mkdtempSync(join(tmpdir(), "sim-kubectl-writes-"));
  writeFileSync(join(home, "kubeconfig"), "");
  env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: join(home, "kubeconfig") };
});
afterAll(async () => {
  await sim.close();
  rmSync(home, { recursive: true, force: true });
});

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run("kubectl", ["--server", sim.url, "--cache-dir", join(home, "cache"), "--request-timeout", "20s", ...args], { env, timeout: 30_000 });
  return stdout.trim();
}

/** What kubectl says when it fails (its stderr). */
async function refused(...args: string[]): Promise<string> {
  const error = await kubectl(...args).then(
    () => undefined,
    (e: { stderr?: string }) => e.stderr ?? "",
  );
  expect(error, `kubectl ${args.join(" ")} should fail`).toBeDefined();
  return error!.trim();
}

const file = (name: string, text: string): string => {
  const path = join(home, name);
  writeFileSync(path, text);
  return path;
};

const deployment = (name: string) => sim.get("deployments", "default", name) as KubeObject & { spec: any; status: any; metadata: any };

/** The Deployment's status has caught up with its spec, every pod of it ready. */
const settled = (name: string, replicas: number) =>
  eventually(() => {
    const d = deployment(name);
    const s = d?.status ?? {};
    return s.observedGeneration === d?.metadata.generation && s.replicas === replicas && s.readyReplicas === replicas && s.updatedReplicas === replicas && d;
  }, `deployment ${name} to have ${replicas} ready replicas`);

const podsOf = (app: string) => sim.list("pods", "default").filter((p) => p.metadata?.labels?.app === app && !p.metadata?.deletionTimestamp);

describe.skipIf(!hasKubectl)("kubectl writes to the simulator", { timeout: 60_000 }, () => {
  it("create: configmap, secret, namespace, service and deployment (protobuf bodies) become the objects kubectl meant", async () => {
    expect(await kubectl("create", "configmap", "x", "--from-literal=a=b")).toBe("configmap/x created");
    expect(sim.get("configmaps", "default", "x")?.data).toEqual({ a: "b" });
    await kubectl("create", "secret", "generic", "s", "--from-literal=user=me");
    expect(sim.get("secrets", "default", "s")).toMatchObject({ data: { user: Buffer.from("me").toString("base64") }, type: "Opaque" });
    expect(await kubectl("create", "namespace", "conformance")).toBe("namespace/conformance created");
    expect(sim.get("namespaces", undefined, "conformance")?.status).toEqual({ phase: "Active" });
    for (const args of [
      ["service", "clusterip", "front", "--tcp=80:8080"],
      ["deployment", "made", "--image=nginx:1.27", "--replicas=2", "--port=80"],
    ]) {
      const meant = JSON.parse(await kubectl("create", ...args, "--dry-run=client", "-o", "json"));
      await kubectl("create", ...args);
      const made = sim.get(args[0] === "service" ? "services" : "deployments", "default", args[1] === "clusterip" ? args[2]! : args[1]!);
      expect(made?.spec).toMatchObject(JSON.parse(JSON.stringify(meant.spec, (k, v) => (k === "creationTimestamp" ? undefined : v))));
    }
  });

  it("create -f and apply: with the published OpenAPI, the server's strict field validation, and a three-way strategic merge", async () => {
    const manifest = (image: string, extra = "") =>
      file(
        "hello.yaml",
        `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  replicas: 2${extra}
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
      - name: hello
        image: ${image}
        env: [{name: A, value: "1"}]
`,
      );
    expect(await kubectl("apply", "-f", manifest("nginx:1.27"))).toBe("deployment.apps/hello created");
    await settled("hello", 2);
    const typo = await refused("apply", "-f", manifest("nginx:1.27", "\n  replica: 3"));
    expect(typo).toContain('strict decoding error: unknown field "spec.replica"');
    expect(await kubectl("apply", "-f", manifest("nginx:1.28"))).toBe("deployment.apps/hello configured");
    // The container merged by name: its env kept, its image changed; and a new ReplicaSet rolled out.
    expect(deployment("hello").spec.template.spec.containers).toEqual([expect.objectContaining({ name: "hello", image: "nginx:1.28", env: [{ name: "A", value: "1" }] })]);
    await settled("hello", 2);
    expect(podsOf("hello").map((p) => (p.spec as { containers: Array<{ image: string }> }).containers[0]?.image)).toEqual(["nginx:1.28", "nginx:1.28"]);
    expect(await refused("create", "-f", manifest("nginx:1.28"))).toContain('deployments.apps "hello" already exists');
  });

  it("scale: through the scale subresource, and the pods follow", async () => {
    await kubectl("create", "deployment", "web2", "--image=nginx");
    await settled("web2", 1);
    expect(await kubectl("scale", "deploy/web2", "--replicas=3")).toBe("deployment.apps/web2 scaled");
    await settled("web2", 3);
    expect(podsOf("web2")).toHaveLength(3);
    expect(await kubectl("get", "deploy", "web2", "-o", "jsonpath={.status.readyReplicas}/{.spec.replicas}")).toBe("3/3");
    await kubectl("scale", "deploy/web2", "--replicas=1");
    await settled("web2", 1);
    await eventually(() => podsOf("web2").length === 1, "the surplus pods to go");
    expect(await refused("scale", "deploy/web2", "--replicas=-1")).toContain("--replicas=COUNT");
  });

  it("label and annotate", async () => {
    expect(await kubectl("label", "deploy", "web2", "tier=front")).toBe("deployment.apps/web2 labeled");
    expect(await kubectl("annotate", "deploy", "web2", "note=hi")).toBe("deployment.apps/web2 annotated");
    expect(deployment("web2").metadata.labels).toMatchObject({ app: "web2", tier: "front" });
    expect(deployment("web2").metadata.annotations).toMatchObject({ note: "hi" });
    await kubectl("label", "deploy", "web2", "tier-");
    expect(deployment("web2").metadata.labels.tier).toBeUndefined();
  });

  it("patch: strategic (by merge key), merge and JSON", async () => {
    await kubectl("patch", "deploy", "hello", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"hello","env":[{"name":"B","value":"2"}]}]}}}}');
    expect(deployment("hello").spec.template.spec.containers[0]).toMatchObject({
      image: "nginx:1.28",
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
    });
    await kubectl("patch", "deploy", "hello", "--type=merge", "-p", '{"metadata":{"labels":{"team":"a"}}}');
    await kubectl("patch", "deploy", "hello", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":1}]');
    expect([deployment("hello").metadata.labels.team, deployment("hello").spec.replicas]).toEqual(["a", 1]);
    expect(await refused("patch", "deploy", "hello", "--type=json", "-p", '[{"op":"test","path":"/spec/replicas","value":5}]')).toContain("testing value /spec/replicas failed: test failed");
  });

  it("edit: what the editor saved is patched in", async () => {
    const editor = file("editor.sh", '#!/bin/sh\nsed -i "s/replicas: 1$/replicas: 2/" "$1"\n');
    chmodSync(editor, 0o755);
    const { stdout } = await run("kubectl", ["--server", sim.url, "--cache-dir", join(home, "cache"), "edit", "deploy", "web2"], { env: { ...env, KUBE_EDITOR: editor }, timeout: 30_000 });
    expect(stdout.trim()).toBe("deployment.apps/web2 edited");
    await settled("web2", 2);
  });

  it("rollout restart rolls a new ReplicaSet, and rollout status sees it finish", async () => {
    const before = deployment("web2").metadata.annotations["deployment.kubernetes.io/revision"];
    expect(await kubectl("rollout", "restart", "deploy/web2")).toBe("deployment.apps/web2 restarted");
    expect(await kubectl("rollout", "status", "deploy/web2", "--timeout=30s")).toContain('deployment "web2" successfully rolled out');
    expect(Number(deployment("web2").metadata.annotations["deployment.kubernetes.io/revision"])).toBe(Number(before) + 1);
    const sets = sim.list("replicasets", "default").filter((rs) => rs.metadata?.labels?.app === "web2");
    expect(sets.map((rs) => (rs.spec as { replicas: number }).replicas).sort()).toEqual([0, 2]);
  });

  it("delete: a Deployment takes its ReplicaSets and Pods with it; a namespace its contents", async () => {
    expect(await kubectl("delete", "deploy", "web2")).toBe('deployment.apps "web2" deleted');
    expect(sim.list("replicasets", "default").filter((rs) => rs.metadata?.labels?.app === "web2")).toEqual([]);
    expect(sim.list("pods", "default").filter((p) => p.metadata?.labels?.app === "web2")).toEqual([]);
    await kubectl("create", "configmap", "inside", "-n", "conformance");
    expect(await kubectl("delete", "namespace", "conformance")).toBe('namespace "conformance" deleted');
    expect(sim.get("configmaps", "conformance", "inside")).toBeUndefined();
    expect(await refused("delete", "cm", "x", "--dry-run=server")).toContain("--dry-run=client");
    expect(sim.get("configmaps", "default", "x")).toBeDefined();
  });

  it("run: a bare pod is scheduled and starts", async () => {
    expect(await kubectl("run", "solo", "--image=busybox")).toBe("pod/solo created");
    await eventually(() => (sim.get("pods", "default", "solo")?.status as { phase?: string } | undefined)?.phase === "Running", "the pod to run");
    expect(await kubectl("get", "pod", "solo", "-o", "jsonpath={.spec.nodeName}")).toMatch(/^sim-node-\d$/);
  });

  it("explain reads the published schemas", async () => {
    const out = await kubectl("explain", "deployment.spec.template.spec.containers.env");
    expect(out).toContain("KIND:       Deployment");
    expect(out).toMatch(/FIELD: env <\[\]EnvVar>/);
    expect(out).toContain("name\t<string> -required-");
    expect(await kubectl("explain", "widgets.spec")).toContain("What the widget should be.");
    expect(await refused("explain", "pods.spec.nope")).toContain('field "nope" does not exist');
  });
});
