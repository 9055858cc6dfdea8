/**
 * AUTH_MODE=jwt: who may watch what, decided before any hub is touched; streams end when their
 * token does; origins, never-relayed resources and quotas.
 */
import { env } from "cloudflare:workers";
import { listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { Rule } from "../../src/auth/rules.ts";
import { bearerProtocol as tokenProtocol } from "../../src/k8s/websocket.ts";
import { eventually, relay, rvOf, Sim, uniqueNamespace, wsWatch } from "../worker/helpers.ts";
import { jwtFor, TEST_JWT_SECRET } from "../kit/tokens.ts";

const sim = new Sim();

async function token(sub: string, rules: Rule[], ttlSeconds = 600, secret = TEST_JWT_SECRET): Promise<string> {
  return jwtFor(sub, rules, { secret, ttlSeconds });
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const bearerProtocol = (t: string) => ({ "sec-websocket-protocol": `base64.binary.k8s.io, ${tokenProtocol(t)}` });

/** Status of a list, an HTTP watch and a WebSocket watch of `path` with `token`. */
async function attempt(path: string, t: string | undefined): Promise<[number, number, number]> {
  const list = await relay(path, { headers: t ? bearer(t) : {} });
  await list.body?.cancel();
  const watch = await relay(`${path}${path.includes("?") ? "&" : "?"}watch=1`, { headers: t ? bearer(t) : {} });
  await watch.body?.cancel();
  const ws = await relay(`${path}${path.includes("?") ? "&" : "?"}watch=1`, { headers: { upgrade: "websocket", ...(t ? bearerProtocol(t) : {}) } });
  ws.webSocket?.accept();
  ws.webSocket?.close();
  await ws.body?.cancel();
  return [list.status, watch.status, ws.status];
}

describe("authorization matrix", async () => {
  const all = [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }];
  const tokens: Record<string, string | undefined> = {
    none: undefined,
    teamA: await token("alice", [{ apiGroups: [""], resources: ["pods"], namespaces: ["team-a"] }]),
    wildcard: await token("root", all),
    apps: await token("deployer", [{ apiGroups: ["apps"], resources: ["deployments"], namespaces: ["*"] }]),
    otherCluster: await token("visitor", [{ clusters: ["other"], ...all[0]! }]),
    expired: await token("late", all, -60),
    forged: await token("mallory", all, 600, "some-other-secret-entirely-different"),
  };
  const paths = {
    namespaced: "/api/v1/namespaces/team-a/pods",
    otherNamespace: "/api/v1/namespaces/team-b/pods",
    allNamespaces: "/api/v1/pods",
    clusterScoped: "/api/v1/nodes",
    grouped: "/apis/apps/v1/deployments",
    otherCluster: "/clusters/other/api/v1/namespaces/team-a/pods",
    secrets: "/api/v1/namespaces/team-a/secrets",
  };
  // Expected status per token and path, for list / HTTP watch (and 101 instead of 200 for WebSocket).
  const expected: Record<string, Record<keyof typeof paths, number>> = {
    none: { namespaced: 401, otherNamespace: 401, allNamespaces: 401, clusterScoped: 401, grouped: 401, otherCluster: 401, secrets: 401 },
    teamA: { namespaced: 200, otherNamespace: 403, allNamespaces: 403, clusterScoped: 403, grouped: 403, otherCluster: 200, secrets: 403 },
    wildcard: { namespaced: 200, otherNamespace: 200, allNamespaces: 200, clusterScoped: 200, grouped: 200, otherCluster: 200, secrets: 403 },
    apps: { namespaced: 403, otherNamespace: 403, allNamespaces: 403, clusterScoped: 403, grouped: 200, otherCluster: 403, secrets: 403 },
    otherCluster: { namespaced: 403, otherNamespace: 403, allNamespaces: 403, clusterScoped: 403, grouped: 403, otherCluster: 200, secrets: 403 },
    expired: { namespaced: 401, otherNamespace: 401, allNamespaces: 401, clusterScoped: 401, grouped: 401, otherCluster: 401, secrets: 401 },
    forged: { namespaced: 401, otherNamespace: 401, allNamespaces: 401, clusterScoped: 401, grouped: 401, otherCluster: 401, secrets: 401 },
  };

  for (const [tokenName, t] of Object.entries(tokens)) {
    it(`${tokenName} token`, async () => {
      const got: Record<string, [number, number, number]> = {};
      const want: Record<string, [number, number, number]> = {};
      for (const [pathName, path] of Object.entries(paths)) {
        got[pathName] = await attempt(path, t);
        const code = expected[tokenName]![pathName as keyof typeof paths];
        want[pathName] = [code, code, code === 200 ? 101 : code];
      }
      expect(got).toEqual(want);
    });
  }

  it("refusals are Kubernetes Status objects that name the check, and leak no token", async () => {
    const response = await relay("/api/v1/namespaces/team-b/pods?watch=1", { headers: bearer(tokens.teamA!) });
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "team-b"',
      reason: "Forbidden",
      details: { kind: "pods" },
      code: 403,
    });
    expect(body).not.toContain(tokens.teamA!);
    const unauthorized = await relay("/api/v1/pods", { headers: bearer(tokens.expired!) });
    expect(await unauthorized.json()).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401, message: "Unauthorized: the bearer token has expired" });
    const secrets = await relay("/api/v1/namespaces/team-a/secrets", { headers: bearer(tokens.wildcard!) });
    expect(await secrets.json()).toMatchObject({ reason: "Forbidden", message: "secrets is forbidden: the relay never relays secrets (DENY_RESOURCES)" });
  });

  it("logs name the subject and the decision, never a token (LOG_LEVEL=debug: accesses allowed too)", async () => {
    const log = vi.spyOn(console, "log");
    const debug = vi.spyOn(console, "debug");
    try {
      for (const t of Object.values(tokens)) await attempt("/api/v1/namespaces/team-a/pods", t);
      const lines = [...log.mock.calls, ...debug.mock.calls].map((c) => String(c[0]));
      for (const t of Object.values(tokens)) if (t) expect(lines.filter((l) => l.includes(t))).toEqual([]);
      const decisions = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => String(l.msg).startsWith("access "));
      expect(decisions).toContainEqual(expect.objectContaining({ msg: "access allowed", subject: "alice", verb: "watch", resource: "pods", namespace: "team-a" }));
      expect(decisions).toContainEqual(expect.objectContaining({ msg: "access denied", subject: "deployer", resource: "pods" }));
    } finally {
      log.mockRestore();
      debug.mockRestore();
    }
  });

  it("a get is allowed by the token's rules as a get; refused, the upstream is not asked for the object", async () => {
    const [mine, theirs] = await Promise.all(["team-a", "team-b"].map(async (ns) => (await sim.createPod(ns, uniqueNamespace("get"))).metadata!.name!));
    const { next } = await sim.requests("/nothing");
    const allowed = await relay(`/api/v1/namespaces/team-a/pods/${mine}`, { headers: bearer(tokens.teamA!) });
    expect([allowed.status, ((await allowed.json()) as { metadata: { name: string } }).metadata.name]).toEqual([200, mine]);
    const refused = await relay(`/api/v1/namespaces/team-b/pods/${theirs}`, { headers: bearer(tokens.teamA!) });
    expect(await refused.json()).toMatchObject({ code: 403, message: `pods "${theirs}" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"` });
    expect((await sim.requests("/api/v1/namespaces/team-b/pods", next)).requests).toEqual([]);
  });

  it("refused requests create no hub", async () => {
    const before = (await listDurableObjectIds(env.WATCH_HUB)).length;
    await attempt("/api/v1/namespaces/team-b/pods", tokens.teamA);
    await attempt("/api/v1/pods", tokens.forged);
    expect((await listDurableObjectIds(env.WATCH_HUB)).length).toBe(before);
  });

  it("a WebSocket gets its other subprotocol echoed, never the token one", async () => {
    const response = await relay("/api/v1/namespaces/team-a/pods?watch=1", { headers: { upgrade: "websocket", ...bearerProtocol(tokens.teamA!) } });
    expect(response.status).toBe(101);
    expect(response.headers.get("sec-websocket-protocol")).toBe("base64.binary.k8s.io");
    response.webSocket!.accept();
    response.webSocket!.close();
  });
});

describe("streams end when their token does", () => {
  it("an expiring token closes the WebSocket (4401) and the HTTP watch, each with a 401 Status event", async () => {
    const ns = uniqueNamespace("exp");
    await sim.createPod(ns, "p");
    const short = await token("brief", [{ apiGroups: [""], resources: ["pods"], namespaces: [ns] }], 2);
    const ws = await wsWatch(`/api/v1/namespaces/${ns}/pods?watch=1`, bearerProtocol(short));
    const response = await relay(`/api/v1/namespaces/${ns}/pods?watch=1`, { headers: bearer(short) });
    expect(response.status).toBe(200);
    expect((await ws.events.next()).type).toBe("ADDED");
    const closed = await ws.events.closed();
    expect(closed).toMatchObject({ code: 4401 });
    const last = ws.events.drain().at(-1)!;
    expect(last).toMatchObject({ type: "ERROR", object: { code: 401, reason: "Unauthorized" } });
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ type: "ERROR", object: { code: 401 } });
  });
});

describe("through a hot key's replica hubs", () => {
  const hot = new Sim("hot");
  const all = [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }];
  it("a subject's quota holds across the root and its replicas, and an expiring token ends its streams on each", async () => {
    const ns = uniqueNamespace("hot");
    await hot.createPod(ns, "p");
    const path = `/clusters/hot/api/v1/namespaces/${ns}/pods?watch=1`;
    // MAX_SUBSCRIPTIONS_PER_SUBJECT is 5 in this project; the hot cluster spreads past 2 subscribers.
    const brief = await token("hot-reader", all, 3);
    const subs = [];
    for (let i = 0; i < 5; i++) {
      const sub = await wsWatch(path, bearerProtocol(brief));
      expect((await sub.events.next()).type).toBe("ADDED");
      subs.push(sub);
    }
    const sixth = await relay(path, { headers: bearer(brief) });
    expect(sixth.status).toBe(429);
    await sixth.body?.cancel();
    for (const sub of subs) {
      expect(await sub.events.closed()).toMatchObject({ code: 4401 });
      expect(sub.events.drain().at(-1)).toMatchObject({ type: "ERROR", object: { code: 401 } });
    }
  });
});

describe("origins", async () => {
  const t = await token("alice", [{ apiGroups: [""], resources: ["pods"], namespaces: ["team-a"] }]);
  const open = (origin?: string) => relay("/api/v1/namespaces/team-a/pods?watch=1", { headers: { upgrade: "websocket", ...bearerProtocol(t), ...(origin ? { origin } : {}) } });

  it.each([
    ["an allowed origin", "https://dashboard.example", 101],
    ["the relay's own origin", "http://relay.test", 101],
    ["no origin (a tool)", undefined, 101],
    ["any other origin", "https://evil.example", 403],
  ])("%s → %i", async (_, origin, status) => {
    const response = await open(origin);
    expect(response.status).toBe(status);
    if (status === 101) {
      response.webSocket!.accept();
      response.webSocket!.close();
    } else {
      expect(await response.json()).toMatchObject({ kind: "Status", reason: "Forbidden", message: expect.stringContaining("origin https://evil.example") });
    }
  });
});

describe("quotas against amplification", () => {
  const quotaSim = new Sim("quota");
  const all = [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }];

  it("one subject starts at most MAX_HUBS_PER_SUBJECT hubs, lists included; other subjects are not locked out", async () => {
    // The quota cluster allows 3 hubs, so a subject's share is 1.
    const ns = uniqueNamespace("share");
    await quotaSim.createPod(ns, "p", { a: "1", b: "1" });
    const path = (label: string) => `/clusters/quota/api/v1/namespaces/${ns}/pods?labelSelector=${label}%3D1`;
    const lister = await token("lister", all);
    expect((await relay(path("a"), { headers: bearer(lister) })).status).toBe(200);
    const second = await relay(path("b"), { headers: bearer(lister) });
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ reason: "TooManyRequests", message: expect.stringContaining('"lister" already keeps 1 distinct keys watched') });
    expect((await quotaSim.watchesOn(`/api/v1/namespaces/${ns}/pods`)).map((w) => w.labelSelector)).toEqual(["a=1"]);
    expect((await relay(path("b"), { headers: bearer(await token("someone-else", all)) })).status).toBe(200);
    // Idle hubs stop and give their shares back, for the tests after this one.
    await eventually(async () => (await quotaSim.watchesOn(`/api/v1/namespaces/${ns}/pods`)).length === 0, "the listed keys' hubs to stop");
  });

  it("what a subject made the relay store counts against its share until the stopped hub deletes it", async () => {
    const ns = uniqueNamespace("kept");
    await quotaSim.createPod(ns, "p", { a: "1", b: "1" });
    const path = (label: string) => `/clusters/quota/api/v1/namespaces/${ns}/pods?labelSelector=${label}%3D1`;
    const keeper = await token("keeper", all);
    expect((await relay(path("a"), { headers: bearer(keeper) })).status).toBe(200);
    await eventually(async () => (await quotaSim.watchesOn(`/api/v1/namespaces/${ns}/pods`)).length === 0, "the listed key's hub to stop");
    // Its watch stopped, its state is stored: the subject's one share is still taken.
    const refused = await relay(path("b"), { headers: bearer(keeper) });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ message: expect.stringContaining("HUB_RETENTION_SECONDS") });
    // HUB_RETENTION_SECONDS is 8 in tests: the stored state goes, and the share with it.
    await eventually(
      async () => {
        const retry = await relay(path("b"), { headers: bearer(keeper) });
        await retry.body?.cancel();
        return retry.status === 200;
      },
      "the stored key's share to come back",
      30_000,
    );
    // Idle hubs stop and give the cluster's shares back, for the tests after this one.
    await eventually(async () => (await quotaSim.watchesOn(`/api/v1/namespaces/${ns}/pods`)).length === 0, "the listed key's hub to stop");
  });

  it("MAX_HUBS + 1 distinct keys: the last gets 429 with Retry-After and the upstream sees no extra watch", async () => {
    const ns = uniqueNamespace("q");
    await quotaSim.createPod(ns, "p", { a: "1", b: "1", c: "1", d: "1" });
    const path = (label: string) => `/clusters/quota/api/v1/namespaces/${ns}/pods?watch=1&labelSelector=${label}%3D1`;
    const subs = [];
    // One subject per key: each has a share of one hub.
    for (const label of ["a", "b", "c"]) {
      const sub = await wsWatch(path(label), bearerProtocol(await token(`user-${label}`, all)));
      expect(rvOf(await sub.events.next())).toBeGreaterThan(0);
      subs.push(sub);
    }
    const t = await token("user-d", all);
    const fourth = await relay(path("d"), { headers: bearer(t) });
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await fourth.json()).toMatchObject({ kind: "Status", reason: "TooManyRequests", code: 429, message: expect.stringContaining("MAX_HUBS") });
    expect((await quotaSim.watchesOn(`/api/v1/namespaces/${ns}/pods`)).map((w) => w.labelSelector).sort()).toEqual(["a=1", "b=1", "c=1"]);
    // A hub that stops (idle) gives its share back.
    subs[0]!.close();
    await eventually(async () => {
      const retry = await relay(path("d"), { headers: bearer(t) });
      await retry.body?.cancel();
      return retry.status === 200;
    }, "a freed share to admit the fourth key");
    subs.slice(1).forEach((s) => s.close());
  });

  it("watches opened at the same moment cannot pass MAX_SUBSCRIPTIONS_PER_SUBJECT", async () => {
    const t = await token("eager", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
    const namespaces = [uniqueNamespace("c"), uniqueNamespace("c")];
    for (const ns of namespaces) await sim.createPod(ns, "p");
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => relay(`/api/v1/namespaces/${namespaces[i % 2]}/pods?watch=1`, { headers: bearer(t) })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });

  it("a subject holds at most MAX_SUBSCRIPTIONS_PER_SUBJECT watches across hubs; leaving frees one", async () => {
    const t = await token("greedy", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
    const namespaces = Array.from({ length: 3 }, () => uniqueNamespace("g"));
    for (const ns of namespaces) await sim.createPod(ns, "p");
    const subs = [];
    for (let i = 0; i < 5; i++) {
      const sub = await wsWatch(`/api/v1/namespaces/${namespaces[i % 3]}/pods?watch=1`, bearerProtocol(t));
      await sub.events.next();
      subs.push(sub);
    }
    const sixth = await relay(`/api/v1/namespaces/${namespaces[0]}/pods?watch=1`, { headers: bearer(t) });
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toMatchObject({ reason: "TooManyRequests", message: expect.stringContaining('"greedy" already holds 5 watches') });
    // Another subject is not affected.
    const other = await wsWatch(`/api/v1/namespaces/${namespaces[0]}/pods?watch=1`, bearerProtocol(await token("modest", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }])));
    await other.events.next();
    subs[0]!.close();
    await eventually(async () => {
      const retry = await relay(`/api/v1/namespaces/${namespaces[1]}/pods?watch=1`, { headers: bearer(t) });
      await retry.body?.cancel();
      return retry.status === 200;
    }, "the subject's freed watch to be usable again");
    [...subs.slice(1), other].forEach((s) => s.close());
  });
});

describe("live views, as watches of their collection", () => {
  it("are allowed where a watch is, count against the subject's watches, and end when the token does", async () => {
    const ns = uniqueNamespace("view");
    await sim.createPod(ns, "p");
    const mine = await token("viewer", [{ apiGroups: [""], resources: ["pods"], namespaces: [ns] }], 3);
    const page = await relay(`/api/v1/namespaces/${ns}/pods?view=1`, { headers: bearer(mine) });
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ type: "VIEW", count: 1 });
    const elsewhere = await relay("/api/v1/namespaces/team-b/pods?view=1&watch=1", { headers: bearer(mine) });
    expect(elsewhere.status).toBe(403);
    await elsewhere.body?.cancel();
    const live = await relay(`/api/v1/namespaces/${ns}/pods?view=1&watch=1`, { headers: bearer(mine) });
    expect(live.status).toBe(200);
    // The token's expiry ends it as it ends a watch: a 401 Status, then the end of the stream.
    const lines = (await live.text())
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { type: string; object?: { code: number } });
    expect(lines[0]).toMatchObject({ type: "VIEW", count: 1 });
    expect(lines.at(-1)).toMatchObject({ type: "ERROR", object: { code: 401 } });
  });

  it("a subject's views and watches together stop at MAX_SUBSCRIPTIONS_PER_SUBJECT", async () => {
    const t = await token("dashboards", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
    const ns = uniqueNamespace("view");
    await sim.createPod(ns, "p");
    const open = [];
    for (let i = 0; i < 5; i++) {
      const response = await relay(`/api/v1/namespaces/${ns}/pods?${i % 2 ? "watch=1" : `view=1&watch=1&limit=${i + 1}`}`, { headers: bearer(t) });
      expect(response.status).toBe(200);
      open.push(response);
    }
    const sixth = await relay(`/api/v1/namespaces/${ns}/pods?view=1&watch=1`, { headers: bearer(t) });
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toMatchObject({ reason: "TooManyRequests" });
    await Promise.all(open.map((r) => r.body?.cancel()));
  });
});
