/**
 * @module
 * Bearer-token authentication, users with RBAC-style rules (reviews, 403s, rules changed at run
 * time), and HTTPS.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { get } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthenticationV1Api, AuthorizationV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator, type User } from "../../src/sim/index.ts";
import { openWatch } from "../kit/lines.ts";
import { podManifest, request, sendJson } from "./helpers.ts";
import { have } from "../kit/tools.ts";

const sims: Simulator[] = [];
afterAll(async () => {
  for (const s of sims) await s.close();
});

const opensslPresent = have("openssl", "the simulator TLS test");

describe("authentication", () => {
  it("requires the bearer token on Kubernetes paths when one is configured, never on /_sim/", async () => {
    const sim = await startSimulator({ token: "s3cret" });
    sims.push(sim);
    const denied = await request(`${sim.url}/api/v1/pods`);
    expect(denied.status).toBe(401);
    expect(denied.text).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n');
    expect((await request(`${sim.url}/api`, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    const allowed = await request(`${sim.url}/api/v1/pods`, { headers: { Authorization: "Bearer s3cret" } });
    expect(allowed.status).toBe(200);
    expect((await request(`${sim.url}/_sim/stats`)).status).toBe(200);
  });

  it.skipIf(!opensslPresent)("serves HTTPS with the given certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-tls-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
        ],
        { stdio: "ignore" },
      );
      const cert = readFileSync(join(dir, "cert.pem"), "utf8");
      const sim = await startSimulator({ tls: { key: readFileSync(join(dir, "key.pem"), "utf8"), cert } });
      sims.push(sim);
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const body = await new Promise<string>((resolve, reject) => {
        get(`${sim.url}/version`, { ca: cert }, (res) => {
          let text = "";
          res.on("data", (d) => (text += d)).on("end", () => resolve(text));
        }).on("error", reject);
      });
      expect(JSON.parse(body).gitVersion).toBe("v1.34.0");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const ALICE: User = {
  name: "alice",
  groups: ["dev-team"],
  tokens: ["alice-token", "alice-second-token"],
  rules: [
    { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"], namespaces: ["dev"] },
    { verbs: ["*"], apiGroups: ["apps"], resources: ["*"] },
    { verbs: ["list"], apiGroups: ["*"], resources: ["configmaps"], namespaces: ["*"] },
  ],
};
const BOB: User = { name: "bob", tokens: ["bob-token"], rules: [] };

const SSR_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const UNAUTHORIZED = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n';

async function started(options: Parameters<typeof startSimulator>[0]): Promise<Simulator> {
  const sim = await startSimulator(options);
  sims.push(sim);
  return sim;
}

const bearer = (token: string | undefined): Record<string, string> => (token ? { Authorization: `Bearer ${token}` } : {});

const post = (sim: Simulator, path: string, token: string | undefined, body: unknown) =>
  request(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...bearer(token) }, body: JSON.stringify(body) });

const whoami = (sim: Simulator, token: string | undefined) => post(sim, SSR_PATH, token, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });

const canI = (sim: Simulator, token: string | undefined, resourceAttributes: Record<string, string>) =>
  post(sim, SSAR_PATH, token, { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes } });

/** `[allowed, reason]` of a review. */
async function verdict(sim: Simulator, token: string, resourceAttributes: Record<string, string>): Promise<[boolean, string | undefined]> {
  const res = await canI(sim, token, resourceAttributes);
  expect(res.status).toBe(201);
  return [res.body.status.allowed, res.body.status.reason];
}

describe("users and RBAC", () => {
  it("maps each token to its user in a SelfSubjectReview; the relay's token is its ServiceAccount", async () => {
    const sim = await started({ token: "relay-secret", users: [ALICE, BOB] });
    const before = Date.now();
    const alice = await whoami(sim, "alice-second-token");
    expect(alice.status).toBe(201);
    expect(alice.body).toEqual({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) },
      status: { userInfo: { username: "alice", groups: ["dev-team", "system:authenticated"] } },
    });
    expect(Date.parse(alice.body.metadata.creationTimestamp)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Object.keys(alice.body)).toEqual(["kind", "apiVersion", "metadata", "status"]);
    expect((await whoami(sim, "bob-token")).body.status.userInfo).toEqual({ username: "bob", groups: ["system:authenticated"] });
    expect((await whoami(sim, "relay-secret")).body.status.userInfo).toEqual({
      username: "system:serviceaccount:kube-watch-relay:relay",
      groups: ["system:serviceaccounts", "system:serviceaccounts:kube-watch-relay", "system:authenticated"],
    });
  });

  it("answers 401 to unknown or missing tokens; without a token option, no credentials means no limits but no review", async () => {
    const guarded = await started({ token: "relay-secret", users: [ALICE] });
    for (const token of ["nobody", undefined]) {
      for (const res of [await whoami(guarded, token), await canI(guarded, token, { verb: "get", resource: "pods" }), await request(`${guarded.url}/api/v1/pods`, { headers: bearer(token) })]) {
        expect([res.status, res.text]).toEqual([401, UNAUTHORIZED]);
      }
    }
    const open = await started({ users: [ALICE] });
    expect((await request(`${open.url}/api/v1/pods`)).status).toBe(200);
    expect((await request(`${open.url}/api/v1/pods`, { headers: bearer("nobody") })).status).toBe(401);
    expect((await whoami(open, undefined)).status).toBe(401);
    expect((await whoami(open, "alice-token")).body.status.userInfo.username).toBe("alice");
  });

  it("evaluates SelfSubjectAccessReviews against the caller's rules: verbs, groups, wildcards, namespaces", async () => {
    const sim = await started({ users: [ALICE, BOB] });
    const res = await canI(sim, "alice-token", { verb: "watch", group: "", resource: "pods", namespace: "dev" });
    expect(res.status).toBe(201);
    expect(res.text).toBe(
      '{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{},"spec":{"resourceAttributes":{"namespace":"dev","verb":"watch","resource":"pods"}},' +
        '"status":{"allowed":true,"reason":"RBAC: allowed by RoleBinding \\"sim:alice/dev\\" of ClusterRole \\"sim:alice\\" to User \\"alice\\""}}\n',
    );
    const denied = await canI(sim, "alice-token", { verb: "watch", group: "", resource: "pods", namespace: "prod" });
    expect(denied.body.status).toEqual({ allowed: false });

    const cases: Array<[Record<string, string>, boolean]> = [
      // Namespaced rule: only its namespace, never all namespaces.
      [{ verb: "list", resource: "pods", namespace: "dev" }, true],
      [{ verb: "list", resource: "pods", namespace: "" }, false],
      [{ verb: "delete", resource: "pods", namespace: "dev" }, false],
      [{ verb: "get", resource: "pods", subresource: "log", namespace: "dev" }, false],
      [{ verb: "watch", group: "apps", resource: "pods", namespace: "dev" }, true],
      // Cluster-wide rule with wildcard verbs and resources: any namespace, all namespaces.
      [{ verb: "deletecollection", group: "apps", resource: "deployments", namespace: "" }, true],
      [{ verb: "watch", group: "apps", resource: "replicasets", namespace: "prod" }, true],
      [{ verb: "watch", group: "batch", resource: "jobs", namespace: "prod" }, false],
      // namespaces ["*"] and apiGroups ["*"]: everywhere, in every group.
      [{ verb: "list", resource: "configmaps", namespace: "" }, true],
      [{ verb: "list", group: "example.com", resource: "configmaps", namespace: "prod" }, true],
      [{ verb: "watch", resource: "configmaps", namespace: "prod" }, false],
      [{ verb: "list", resource: "nodes" }, false],
    ];
    for (const [attributes, allowed] of cases) expect([attributes, (await verdict(sim, "alice-token", attributes))[0]]).toEqual([attributes, allowed]);
    expect(await verdict(sim, "alice-token", { verb: "watch", group: "apps", resource: "deployments", namespace: "dev" })).toEqual([
      true,
      'RBAC: allowed by ClusterRoleBinding "sim:alice" of ClusterRole "sim:alice" to User "alice"',
    ]);
    // Every authenticated user may ask, and read discovery (the bootstrap policy).
    expect(await verdict(sim, "bob-token", { verb: "create", group: "authorization.k8s.io", resource: "selfsubjectaccessreviews" })).toEqual([
      true,
      'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"',
    ]);
    const nonResource = await post(sim, SSAR_PATH, "bob-token", { kind: "SelfSubjectAccessReview", spec: { nonResourceAttributes: { verb: "get", path: "/apis/apps/v1" } } });
    expect(nonResource.body.spec).toEqual({ nonResourceAttributes: { path: "/apis/apps/v1", verb: "get" } });
    expect(nonResource.body.status.reason).toBe('RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"');
    expect((await verdict(sim, "bob-token", { verb: "get", resource: "pods", namespace: "dev" }))[0]).toBe(false);
  });

  it("answers SelfSubjectRulesReviews: the rules that hold in the namespace, cluster-wide ones included, flattened", async () => {
    const sim = await started({ users: [ALICE, BOB] });
    const rules = (token: string, namespace?: string) =>
      post(sim, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", token, {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectRulesReview",
        spec: namespace === undefined ? {} : { namespace },
      });
    const everyone = {
      resourceRules: [
        { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"] },
        { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] },
      ],
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"] }],
    };
    const dev = await rules("alice-token", "dev");
    expect(dev.status).toBe(201);
    expect(dev.body).toEqual({
      kind: "SelfSubjectRulesReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: {},
      spec: {},
      status: {
        resourceRules: [
          { verbs: ["*"], apiGroups: ["apps"], resources: ["*"] },
          { verbs: ["list"], apiGroups: ["*"], resources: ["configmaps"] },
          ...everyone.resourceRules,
          { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] },
        ],
        nonResourceRules: everyone.nonResourceRules,
        incomplete: false,
      },
    });
    // The namespace's RoleBinding holds only there.
    expect((await rules("alice-token", "prod")).body.status.resourceRules).not.toContainEqual({ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] });
    expect((await rules("bob-token", "dev")).body.status).toEqual({ ...everyone, incomplete: false });
    const none = await rules("bob-token");
    expect([none.status, none.body.message]).toEqual([400, "no namespace on request"]);
  });

  it("rejects a review without exactly one kind of attributes (422) or of another kind (400)", async () => {
    const sim = await started({ users: [BOB] });
    const empty = await post(sim, SSAR_PATH, "bob-token", { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: {} });
    expect(empty.status).toBe(422);
    expect(empty.body).toMatchObject({
      reason: "Invalid",
      message:
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      details: { group: "authorization.k8s.io", kind: "SelfSubjectAccessReview" },
    });
    const both = await post(sim, SSAR_PATH, "bob-token", { spec: { resourceAttributes: { verb: "get" }, nonResourceAttributes: { path: "/api", verb: "get" } } });
    expect(both.body.message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/api", Verb:"get"}: cannot be specified in combination with resourceAttributes',
    );
    expect((await post(sim, SSAR_PATH, "bob-token", { kind: "SelfSubjectReview" })).status).toBe(400);
    expect((await request(`${sim.url}${SSAR_PATH}`)).status).toBe(405);
    // Authorization comes first: to bob, a GET is a list he may not do.
    expect((await request(`${sim.url}${SSAR_PATH}`, { headers: bearer("bob-token") })).body.message).toBe(
      'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "bob" cannot list resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
    );
  });

  it("applies rules changed at run time to the next review, over the control API and programmatically", async () => {
    const sim = await started({ users: [BOB] });
    const devPods = { verb: "watch", resource: "pods", namespace: "dev" };
    expect((await verdict(sim, "bob-token", devPods))[0]).toBe(false);
    const put = await sendJson(`${sim.url}/_sim/users`, "PUT", [{ ...BOB, rules: [{ verbs: ["watch"], apiGroups: [""], resources: ["pods"], namespaces: ["dev"] }] }]);
    expect(put.status).toBe(200);
    expect((await verdict(sim, "bob-token", devPods))[0]).toBe(true);
    expect((await request(`${sim.url}/_sim/users`)).body).toEqual([{ name: "bob", tokens: ["bob-token"], rules: [{ verbs: ["watch"], apiGroups: [""], resources: ["pods"], namespaces: ["dev"] }] }]);
    sim.setUsers([ALICE]);
    expect(sim.users()).toEqual([ALICE]);
    expect((await canI(sim, "bob-token", devPods)).status).toBe(401);
    expect((await verdict(sim, "alice-token", devPods))[0]).toBe(true);
    // Users outlive a reset, like the token.
    sim.reset();
    expect((await verdict(sim, "alice-token", devPods))[0]).toBe(true);
    const bad = await sendJson(`${sim.url}/_sim/users`, "PUT", [ALICE, { name: "carol", tokens: ["alice-token"], rules: [] }]);
    expect([bad.status, bad.body.message]).toEqual([400, 'user "carol": token "alice-token" is already in use']);
    expect((await sendJson(`${sim.url}/_sim/users`, "PUT", [{ name: "carol", tokens: [], rules: [{ verbs: "get" }] }])).body.message).toBe(
      "users[0].rules[0].verbs must be a list of non-empty strings",
    );
    expect(sim.users()).toEqual([ALICE]);
  });

  it("logs reviews as creates, so tests can count how often they are asked", async () => {
    const sim = await started({ users: [ALICE] });
    const since = sim.requests().next;
    await whoami(sim, "alice-token");
    await canI(sim, "alice-token", { verb: "list", resource: "pods", namespace: "dev" });
    await canI(sim, "nobody", { verb: "list", resource: "pods", namespace: "dev" });
    const logged = sim.requests({ since, path: "/apis/" }).requests.map((r) => [r.method, r.verb, r.path, r.status]);
    expect(logged).toEqual([
      ["POST", "create", SSR_PATH, 201],
      ["POST", "create", SSAR_PATH, 201],
      ["POST", "create", SSAR_PATH, 401],
    ]);
    expect(sim.stats().counts.write).toBe(3);
  });

  it("plays a cluster before 1.28 on request: SelfSubjectReview is a 404, SelfSubjectAccessReview still answers", async () => {
    const sim = await started({ users: [ALICE] });
    expect((await sendJson(`${sim.url}/_sim/config`, "POST", { selfSubjectReviews: false })).body).toMatchObject({ selfSubjectReviews: false });
    const missing = await whoami(sim, "alice-token");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: "Status", reason: "NotFound", message: "the server could not find the requested resource" });
    expect(await verdict(sim, "alice-token", { verb: "list", resource: "pods", namespace: "dev" })).toEqual([true, expect.any(String)]);
    expect((await canI(sim, "nobody", { verb: "list", resource: "pods" })).status).toBe(401);
    sim.configure({ selfSubjectReviews: true });
    expect((await whoami(sim, "alice-token")).status).toBe(201);
    expect((await sendJson(`${sim.url}/_sim/config`, "POST", { selfSubjectReviews: "no" })).status).toBe(400);
  });

  it("plays a cluster behind a client-certificate kubectl proxy on request: every token, a made-up one too, is the certificate's user", async () => {
    const sim = await started({ users: [ALICE] });
    expect((await sendJson(`${sim.url}/_sim/config`, "POST", { clientCertificateUser: "kubernetes-admin" })).body).toMatchObject({ clientCertificateUser: "kubernetes-admin" });
    for (const token of ["alice-token", "made-up-token", undefined]) {
      const review = await whoami(sim, token);
      expect([review.status, review.body.status?.userInfo]).toEqual([201, { username: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] }]);
    }
    expect(await verdict(sim, "made-up-token", { verb: "list", resource: "secrets" })).toEqual([true, expect.stringContaining('Group "system:masters"')]);
    sim.configure({ clientCertificateUser: null });
    expect((await whoami(sim, "made-up-token")).status).toBe(401);
    expect((await sendJson(`${sim.url}/_sim/config`, "POST", { clientCertificateUser: "" })).status).toBe(400);
  });

  it("lists the reviews in discovery, create-only and cluster-scoped", async () => {
    const sim = await started({});
    expect((await request(`${sim.url}/apis/authentication.k8s.io/v1`)).text).toBe(
      '{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"authentication.k8s.io/v1","resources":[{"name":"selfsubjectreviews","singularName":"selfsubjectreview","namespaced":false,"kind":"SelfSubjectReview","verbs":["create"]}]}\n',
    );
    expect((await request(`${sim.url}/apis/authorization.k8s.io/v1`)).body.resources).toEqual([
      { name: "selfsubjectaccessreviews", singularName: "selfsubjectaccessreview", namespaced: false, kind: "SelfSubjectAccessReview", verbs: ["create"] },
      { name: "selfsubjectrulesreviews", singularName: "selfsubjectrulesreview", namespaced: false, kind: "SelfSubjectRulesReview", verbs: ["create"] },
    ]);
    expect((await request(`${sim.url}/apis/authorization.k8s.io`)).body).toMatchObject({ kind: "APIGroup", preferredVersion: { groupVersion: "authorization.k8s.io/v1" } });
    const aggregated = await request(`${sim.url}/apis`, { headers: { Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" } });
    const group = (name: string) => aggregated.body.items.find((i: any) => i.metadata.name === name).versions[0].resources;
    expect(group("authentication.k8s.io")).toEqual([
      { resource: "selfsubjectreviews", responseKind: { group: "", version: "", kind: "SelfSubjectReview" }, scope: "Cluster", singularResource: "selfsubjectreview", verbs: ["create"] },
    ]);
    expect(group("authorization.k8s.io")).toEqual([
      {
        resource: "selfsubjectaccessreviews",
        responseKind: { group: "", version: "", kind: "SelfSubjectAccessReview" },
        scope: "Cluster",
        singularResource: "selfsubjectaccessreview",
        verbs: ["create"],
      },
      {
        resource: "selfsubjectrulesreviews",
        responseKind: { group: "", version: "", kind: "SelfSubjectRulesReview" },
        scope: "Cluster",
        singularResource: "selfsubjectrulesreview",
        verbs: ["create"],
      },
    ]);
  });

  it("enforces a user's rules on direct requests with RBAC's 403; the relay's identity may do anything", async () => {
    const sim = await started({ token: "relay-secret", users: [ALICE] });
    const get = (path: string, token = "alice-token") => request(`${sim.url}${path}`, { headers: bearer(token) });
    expect((await get("/api/v1/namespaces/dev/pods")).status).toBe(200);
    const forbidden = await get("/api/v1/namespaces/prod/pods?watch=1");
    expect(forbidden.status).toBe(403);
    expect(forbidden.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \\"alice\\" cannot watch resource \\"pods\\" in API group \\"\\" in the namespace \\"prod\\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}\n',
    );
    expect((await get("/api/v1/pods")).body.message).toBe('pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope');
    expect((await get("/api/v1/namespaces/prod/pods/web-0")).body).toMatchObject({
      message: 'pods "web-0" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "prod"',
      details: { name: "web-0", kind: "pods" },
    });
    expect((await get("/api/v1/namespaces/prod/pods?fieldSelector=metadata.name%3Dweb-1")).body.message).toMatch(/^pods "web-1" is forbidden: User "alice" cannot list/);
    expect((await get("/api/v1/namespaces/prod")).body.message).toBe('namespaces "prod" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "prod"');
    expect((await get("/apis/example.com/v1/widgets")).body.details).toEqual({ group: "example.com", kind: "widgets" });
    expect((await get("/apis/apps/v1/deployments")).status).toBe(200);
    const watch = await openWatch(`${sim.url}/api/v1/namespaces/dev/pods?watch=1`, bearer("alice-token"));
    expect(watch.status).toBe(200);
    watch.close();
    // Writes are judged too: alice may only read pods.
    const create = await request(`${sim.url}/api/v1/namespaces/dev/pods`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer("alice-token") },
      body: JSON.stringify(podManifest("dev", "mine")),
    });
    expect([create.status, create.body.message]).toEqual([403, 'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "dev"']);
    // Discovery is everyone's; other paths are not.
    expect((await get("/apis")).status).toBe(200);
    expect((await get("/metrics")).body).toMatchObject({ code: 403, message: 'forbidden: User "alice" cannot get path "/metrics"', details: {} });
    for (const path of ["/api/v1/pods", "/api/v1/namespaces/prod/pods/web-0", "/api/v1/nodes", "/metrics"]) {
      expect([path, (await get(path, "relay-secret")).status]).toEqual([path, path === "/api/v1/namespaces/prod/pods/web-0" || path === "/metrics" ? 404 : 200]);
    }
  });

  it("answers @kubernetes/client-node's typed review calls", async () => {
    const sim = await started({ users: [ALICE] });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // client-node refuses plain http:// unless skipTLSVerify is set.
      clusters: [{ name: "sim", server: sim.url, skipTLSVerify: true }],
      users: [{ name: "alice", token: "alice-token" }],
      contexts: [{ name: "sim", cluster: "sim", user: "alice" }],
      currentContext: "sim",
    });
    const whoami = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } });
    expect(whoami.status?.userInfo).toEqual({ username: "alice", groups: ["dev-team", "system:authenticated"] });
    expect(whoami.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const review = (namespace: string) =>
      authz.createSelfSubjectAccessReview({
        body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes: { verb: "watch", resource: "pods", namespace } } },
      });
    expect((await review("dev")).status).toEqual({ allowed: true, reason: 'RBAC: allowed by RoleBinding "sim:alice/dev" of ClusterRole "sim:alice" to User "alice"' });
    expect((await review("prod")).status).toEqual({ allowed: false });
  });
});
