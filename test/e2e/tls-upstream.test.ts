/**
 * @module
 * A direct HTTPS API server, as a real cluster's is: the simulated server over TLS with a
 * certificate from a private CA made here with openssl (skipped, loudly, without it; on CI a failure), and a
 * required bearer token. `npm start` relays it with `UPSTREAM_URL=https://...`,
 * `UPSTREAM_TOKEN` and `NODE_EXTRA_CA_CERTS` (which the local runtime trusts; deployed Workers
 * cannot trust a private CA and reach such a server through a VPC binding or a Tunnel instead).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { openWatch } from "../kit/lines.ts";
import { have } from "../kit/tools.ts";
import { makeCertificates } from "./certificates.ts";
import { startRelay, type RunningRelay } from "./harness.ts";

const opensslPresent = have("openssl", "the TLS upstream tests (they make their own CA)");

const TOKEN = "relay-test-token-8c1f";
let dir: string;
let sim: Simulator;
let relay: RunningRelay;

beforeAll(async () => {
  if (!opensslPresent) return;
  dir = mkdtempSync(join(tmpdir(), "relay-tls-"));
  const { caFile, key, cert } = makeCertificates(dir);
  sim = await startSimulator({ tls: { key, cert }, token: TOKEN, initial: { namespaces: ["default", "team-a"], podsPerNamespace: 3, nodes: 1, deployments: 1 } });
  relay = await startRelay({ UPSTREAM_URL: sim.url, UPSTREAM_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: caFile, PERSIST_DIR: join(dir, "state") });
});
afterAll(async () => {
  await relay?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const uids = (objects: KubeObject[]) => objects.map((o) => o.metadata?.uid).sort();

describe.skipIf(!opensslPresent)("an HTTPS upstream with a private CA and a bearer token", () => {
  it("is what the relay says it relays, and the upstream requires the token", () => {
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(relay.output()).toContain(`relaying the cluster at ${sim.url}`);
    expect(relay.output()).not.toContain(TOKEN);
  });

  it("lists through the relay", async () => {
    const response = await fetch(`${relay.url}/api/v1/pods`);
    expect(response.status).toBe(200);
    const list = (await response.json()) as { kind: string; items: KubeObject[] };
    expect(list.kind).toBe("PodList");
    expect(uids(list.items)).toEqual(uids(sim.list("pods")));
  });

  it("watches through the relay: the current state, then a live change", async () => {
    const watch = await openWatch(`${relay.url}/api/v1/namespaces/team-a/pods?watch=1`);
    try {
      expect(watch.status).toBe(200);
      const existing = sim.list("pods", "team-a");
      const initial: WatchEvent[] = [];
      for (let i = 0; i < existing.length; i++) initial.push(await watch.next("the current state"));
      expect(initial.map((e) => [e.type, e.object.metadata?.uid])).toEqual(existing.map((p) => ["ADDED", p.metadata?.uid]));
      const created = sim.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "over-tls", namespace: "team-a" }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } });
      const live = await watch.next("the live change");
      expect([live.type, live.object.metadata?.name, live.object.metadata?.resourceVersion]).toEqual(["ADDED", "over-tls", created.metadata?.resourceVersion]);
    } finally {
      watch.close();
    }
    // Every request the relay made carried the token: the upstream refused none of them.
    const made = sim.requests({ path: "/api" }).requests;
    expect(made.length).toBeGreaterThan(0);
    expect(made.filter((r) => r.status === 401)).toEqual([]);
  });
});
