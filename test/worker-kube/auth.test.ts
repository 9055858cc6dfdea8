/**
 * AUTH_MODE=kube: subscribers bring their own Kubernetes tokens; the cluster decides (the
 * simulated API server enforces RBAC rules a test can change), and live streams are checked
 * again, so access revoked mid-watch ends the watch.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RELAY_GROUP } from "../../src/auth/operator.ts";
import { REVIEW_LIMITS } from "../../src/auth/review-limiter.ts";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace, wsWatch } from "../worker/helpers.ts";
import { requestMark } from "../worker/kube-helpers.ts";

const sim = new Sim();
const read = ["get", "list", "watch"];
const ws = (token: string) => ({ "sec-websocket-protocol": `base64.binary.k8s.io, ${bearerProtocol(token)}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function grant(ns: string, users: Record<string, string[] | "all" | "none">) {
  await sim.setUsers(
    Object.entries(users).map(([name, namespaces]) => ({
      name,
      tokens: [`${name}-token`],
      rules: namespaces === "none" ? [] : [{ verbs: read, apiGroups: [""], resources: ["pods"], ...(namespaces === "all" ? {} : { namespaces }) }],
    })),
  );
  await sim.createPod(ns, "p");
}

async function statuses(path: string, headers: Record<string, string>): Promise<number[]> {
  const list = await relay(path, { headers });
  await list.body?.cancel();
  const watch = await relay(`${path}?watch=1`, { headers });
  await watch.body?.cancel();
  return [list.status, watch.status];
}

describe("the cluster decides", () => {
  it("a user may read what its RBAC allows, nothing else; unknown tokens get 401", async () => {
    const ns = uniqueNamespace("k");
    await grant(ns, { alice: [ns], admin: "all" });
    expect(await statuses(`/api/v1/namespaces/${ns}/pods`, bearer("alice-token"))).toEqual([200, 200]);
    expect(await statuses(`/api/v1/namespaces/other/pods`, bearer("alice-token"))).toEqual([403, 403]);
    expect(await statuses(`/api/v1/pods`, bearer("alice-token"))).toEqual([403, 403]);
    expect(await statuses(`/api/v1/pods`, bearer("admin-token"))).toEqual([200, 200]);
    expect(await statuses(`/api/v1/pods`, bearer("stolen"))).toEqual([401, 401]);
    expect(await statuses(`/api/v1/pods`, {})).toEqual([401, 401]);
    const denied = await relay(`/api/v1/namespaces/other/pods?watch=1`, { headers: bearer("alice-token") });
    expect(await denied.json()).toMatchObject({ code: 403, message: 'pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "other"' });
    const socket = await relay(`/api/v1/namespaces/${ns}/pods?watch=1`, { headers: { upgrade: "websocket", ...ws("alice-token") } });
    expect(socket.status).toBe(101);
    socket.webSocket!.accept();
    socket.webSocket!.close();
  });

  it("a get is the cluster's to allow, as a get; refused, the upstream is not asked for the object", async () => {
    const ns = uniqueNamespace("g");
    await grant(ns, { alice: [ns] });
    const { next } = await sim.requests("/nothing");
    const allowed = await relay(`/api/v1/namespaces/${ns}/pods/p`, { headers: bearer("alice-token") });
    expect([allowed.status, ((await allowed.json()) as { metadata: { name: string } }).metadata.name]).toEqual([200, "p"]);
    const refused = await relay(`/api/v1/namespaces/${ns}-other/pods/p`, { headers: bearer("alice-token") });
    expect(await refused.json()).toMatchObject({ code: 403, message: `pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "${ns}-other"` });
    const asked = async (path: string) => (await sim.requests(path, next)).requests.map((r) => `${r.verb} ${r.path}`);
    // One get upstream, or none where a hub that watches the pod (another test's of every namespace) answers it; never a list or a watch.
    const gets = await asked(`/api/v1/namespaces/${ns}/pods`);
    expect(gets.length).toBeLessThanOrEqual(1);
    expect(gets.filter((r) => r !== `get /api/v1/namespaces/${ns}/pods/p`)).toEqual([]);
    expect(await asked(`/api/v1/namespaces/${ns}-other/pods`)).toEqual([]);
  });

  it("decisions are cached per token and access for a short while", async () => {
    const ns = uniqueNamespace("c");
    await grant(ns, { carol: [ns] });
    const before = await sim.requests("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    for (let i = 0; i < 3; i++) expect(await statuses(`/api/v1/namespaces/${ns}/pods`, bearer("carol-token"))).toEqual([200, 200]);
    const reviews = (await sim.requests("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", before.next)).requests;
    expect(reviews).toHaveLength(2); // one for list, one for watch
  });

  it("fails closed: when the cluster cannot be asked, nothing is served", async () => {
    const response = await relay("/clusters/down/api/v1/pods", { headers: bearer("alice-token") });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ reason: "ServiceUnavailable", message: expect.stringContaining("cannot verify the bearer token") });
  });
});

describe("what tokens the cluster does not accept cost it", () => {
  // A cluster no other test file uses, so the reviews in its request log are this file's own.
  const reviewing = new Sim("reviews");
  const pods = "/clusters/reviews/api/v1/pods";
  const reviewsSince = async (mark: number) => (await reviewing.requests("/apis/authentication.k8s.io/v1/selfsubjectreviews", mark)).requests;
  /** Each test its own client, so one test's limits are not another's. */
  let address = 0;
  const client = () => ({ "cf-connecting-ip": `198.51.100.${++address}` });
  // The isolate's first request to the cluster checks its upstream with a made-up token's review: before the counts start.
  beforeAll(async () => (await relay(pods, { headers: { ...bearer("warm-up"), ...client() } })).body?.cancel());

  it("a refused token is remembered: many requests with it, at once or one after another, cost one review", async () => {
    const from = client();
    const mark = await requestMark(reviewing);
    const headers = { ...bearer(`garbage-${Date.now()}`), ...from };
    const together = await Promise.all(Array.from({ length: 50 }, () => relay(pods, { headers })));
    for (let i = 0; i < 50; i++) together.push(await relay(`${pods}?watch=1`, { headers }));
    for (const response of together) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ kind: "Status", code: 401, message: expect.stringContaining("does not accept this bearer token") });
    }
    expect(await reviewsSince(mark)).toHaveLength(1);
  });

  it("new tokens from one client: a burst is reviewed, the rest get 429 with Retry-After and cost nothing; a known token is not held back", async () => {
    const from = client();
    const mark = await requestMark(reviewing);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => relay(pods, { headers: { ...bearer(`made-up-${Date.now()}-${i}`), ...from } })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(REVIEW_LIMITS.perClientBurst);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - REVIEW_LIMITS.perClientBurst);
    const limited = answers.find((r) => r.status === 429)!;
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(await limited.json()).toMatchObject({
      kind: "Status",
      reason: "TooManyRequests",
      code: 429,
      details: { retryAfterSeconds: 1 },
      message: expect.stringContaining("too many tokens to review"),
    });
    expect(await reviewsSince(mark)).toHaveLength(REVIEW_LIMITS.perClientBurst);
    // Another client's new token is reviewed; and a token the relay knows needs no review, whoever sends it.
    await reviewing.setUsers([{ name: "lee", tokens: ["lee-token"], rules: [{ verbs: read, apiGroups: [""], resources: ["pods"] }] }]);
    expect((await relay(pods, { headers: { ...bearer("lee-token"), ...client() } })).status).toBe(200);
    expect((await relay(pods, { headers: { ...bearer("lee-token"), ...from } })).status).toBe(200);
  });

  it("reviews in one isolate are bounded across clients, in flight and a second: beyond, 429 at once", async () => {
    const mark = await requestMark(reviewing);
    const answers = await Promise.all(Array.from({ length: REVIEW_LIMITS.inFlight + 10 }, (_, i) => relay(pods, { headers: { ...bearer(`spread-${Date.now()}-${i}`), ...client() } })));
    expect(answers.filter((r) => r.status === 429)).toHaveLength(10);
    expect(await answers.find((r) => r.status === 429)!.json()).toMatchObject({ message: expect.stringContaining(`at most ${REVIEW_LIMITS.inFlight} new tokens at a time`) });
    expect(await reviewsSince(mark)).toHaveLength(REVIEW_LIMITS.inFlight);
  });
});

describe("live streams are checked again", () => {
  it("access revoked mid-watch ends the stream with 403 (close 4403) within the re-check interval", async () => {
    const ns = uniqueNamespace("r");
    await grant(ns, { dave: [ns] });
    const sub = await wsWatch(`/api/v1/namespaces/${ns}/pods?watch=1`, ws("dave-token"));
    expect((await sub.events.next()).type).toBe("ADDED");
    const revokedAt = Date.now();
    await grant(uniqueNamespace("elsewhere"), { dave: "none" });
    const closed = await sub.events.closed();
    expect(closed).toMatchObject({ code: 4403, reason: "access revoked" });
    expect(Date.now() - revokedAt).toBeLessThan(10_000); // AUTH_RECHECK_SECONDS is 1 in tests
    expect(sub.events.drain().at(-1)).toMatchObject({ type: "ERROR", object: { code: 403, reason: "Forbidden", message: expect.stringContaining("access was revoked during the watch") } });
  });

  it("a token the cluster stops accepting ends the stream with 401 (close 4401)", async () => {
    const ns = uniqueNamespace("t");
    await grant(ns, { erin: [ns] });
    const sub = await wsWatch(`/api/v1/namespaces/${ns}/pods?watch=1`, ws("erin-token"));
    await sub.events.next();
    await sim.setUsers([]);
    expect(await sub.events.closed()).toMatchObject({ code: 4401 });
    expect(sub.events.drain().at(-1)).toMatchObject({ type: "ERROR", object: { code: 401 } });
  });
});

describe("operator endpoints: the cluster's RBAC on the relay's own resources", () => {
  it("/metrics and /_relay/hubs need get metrics and list hubs in relay.kube-watch-relay.dev", async () => {
    await sim.setUsers([
      { name: "reader", tokens: ["reader-token"], rules: [{ verbs: read, apiGroups: [""], resources: ["pods"] }] },
      {
        name: "ops",
        tokens: ["ops-token"],
        rules: [
          { verbs: ["get"], apiGroups: [RELAY_GROUP], resources: ["metrics"] },
          { verbs: ["list"], apiGroups: [RELAY_GROUP], resources: ["hubs"] },
        ],
      },
    ]);
    const status = async (path: string, token?: string) => {
      const response = await relay(path, { headers: token ? bearer(token) : {} });
      await response.body?.cancel();
      return response.status;
    };
    for (const path of ["/metrics", "/_relay/hubs"]) {
      expect([path, await status(path)]).toEqual([path, 401]);
      expect([path, await status(path, "reader-token")]).toEqual([path, 403]);
      expect([path, await status(path, "ops-token")]).toEqual([path, 200]);
    }
  });
});
