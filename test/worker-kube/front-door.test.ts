/**
 * AUTH_MODE=kube at the front door: cluster names cannot be probed without a token the cluster
 * accepts, tokens that are not valid header values never leave the relay, a token subprotocol
 * counts only on a WebSocket upgrade, and clusters older than 1.28 (no SelfSubjectReview) work.
 * These tests use the `other` cluster's simulator, whose users no other test file sets.
 */
import { describe, expect, it } from "vitest";
import { hashedSubject } from "../../src/auth/kube.ts";
import { tokenId } from "../../src/auth/token.ts";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";

const sim = new Sim("other");
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const upgrade = (protocols: string) => ({ upgrade: "websocket", "sec-websocket-protocol": protocols });

async function users(ns: string, ...names: string[]) {
  await sim.setUsers(names.map((name) => ({ name, tokens: [`${name}-token`], rules: [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"], namespaces: [ns] }] })));
}

/** Status and body of a request; a WebSocket that opened is closed again. */
async function answer(path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const response = await relay(path, { headers });
  if (response.webSocket) {
    response.webSocket.accept();
    response.webSocket.close();
    return { status: response.status, body: undefined };
  }
  if (response.status < 400) {
    await response.body?.cancel();
    return { status: response.status, body: undefined };
  }
  return { status: response.status, body: await response.json() };
}

/** Requests the simulator got for reviews (both kinds) from `since` on. */
async function reviewsSince(since: number): Promise<Array<{ path: string; status: number }>> {
  const { requests } = await sim.requests("/apis/", since);
  return requests.filter((r) => r.path.endsWith("reviews")).map((r) => ({ path: r.path, status: r.status }));
}
const mark = async () => (await sim.requests("/_none_")).next;

describe("cluster names cannot be probed before authentication", () => {
  it("an unknown cluster answers exactly as a known one does to a token it refuses: none, a bad one, one valid on another cluster", async () => {
    const ns = uniqueNamespace("probe");
    await users(ns, "pat");
    const ws = (token: string) => upgrade(`base64.binary.k8s.io, ${bearerProtocol(token)}`);
    // What the known cluster answers to each refused credential; an unknown one must answer the same to it, or to a valid one.
    const cases: Array<[known: Record<string, string>, unknown: Record<string, string>]> = [
      [{}, {}],
      [bearer("not-a-token"), bearer("not-a-token")],
      [bearer("not-a-token"), bearer("pat-token")],
      [ws("not-a-token"), ws("pat-token")],
      [{ authorization: "Basic YTpi" }, { authorization: "Basic YTpi" }],
    ];
    for (const [knownHeaders, unknownHeaders] of cases) {
      const known = await answer(`/clusters/other/api/v1/namespaces/${ns}/pods?watch=1`, knownHeaders);
      expect(known.status).toBe(401);
      for (const name of ["nowhere", "constructor"]) {
        const unknown = await answer(`/clusters/${name}/api/v1/namespaces/${ns}/pods?watch=1`, unknownHeaders);
        expect({ name, ...unknown }).toEqual({ name, ...known });
      }
    }
  });

  it("a prototype property is never taken for a configured cluster (no 5xx)", async () => {
    const response = await relay("/clusters/constructor/api/v1/pods", { headers: bearer("whoever") });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "Unauthorized", message: "Unauthorized: the cluster does not accept this bearer token" });
  });
});

describe("tokens", () => {
  it.each([
    ["non-ASCII", "tok€n"],
    ["Latin-1", "tokén"],
    ["a newline", "tok\nen"],
  ])("a token with %s is refused with 401 before anything is sent upstream with it", async (_, token) => {
    const since = await mark();
    const response = await relay("/clusters/other/api/v1/pods?watch=1", { headers: upgrade(`base64.binary.k8s.io, ${bearerProtocol(token)}`) });
    expect(response.status).toBe(401);
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ kind: "Status", code: 401, message: "Unauthorized: the bearer token is malformed: it must be printable ASCII" });
    expect(body).not.toContain(token);
    expect(await reviewsSince(since)).toEqual([]);
  });

  it("a token subprotocol counts only on a WebSocket upgrade, as the API server's", async () => {
    const ns = uniqueNamespace("plain");
    await users(ns, "quinn");
    const path = `/clusters/other/api/v1/namespaces/${ns}/pods`;
    expect((await answer(path, upgrade(`base64.binary.k8s.io, ${bearerProtocol("quinn-token")}`))).status).toBe(200); // a list: no upgrade to make
    expect(await answer(path, { "sec-websocket-protocol": `base64.binary.k8s.io, ${bearerProtocol("quinn-token")}` })).toEqual({
      status: 401,
      body: expect.objectContaining({ message: expect.stringContaining("Unauthorized: no bearer token") }),
    });
    expect((await answer(`${path}?watch=1`, upgrade(`base64.binary.k8s.io, ${bearerProtocol("quinn-token")}`))).status).toBe(101);
  });

  it("a token subprotocol alone is refused (401), as the API server refuses it, so no client is left without a protocol back", async () => {
    const ns = uniqueNamespace("alone");
    await users(ns, "rory");
    const alone = await answer(`/clusters/other/api/v1/namespaces/${ns}/pods?watch=1`, upgrade(bearerProtocol("rory-token")));
    expect(alone).toEqual({ status: 401, body: expect.objectContaining({ message: expect.stringContaining("needs one other subprotocol beside it") }) });
  });
});

describe("clusters without SelfSubjectReview (before Kubernetes 1.28)", () => {
  it("authenticate with a SelfSubjectAccessReview alone, naming the subject by the token's hash", async () => {
    const ns = uniqueNamespace("legacy");
    await users(ns, "sam");
    await sim.configure({ selfSubjectReviews: false });
    try {
      const since = await mark();
      expect((await answer(`/clusters/other/api/v1/namespaces/${ns}/pods?watch=1`, bearer("sam-token"))).status).toBe(200);
      const reviews = await reviewsSince(since);
      expect(reviews[0]).toEqual({ path: "/apis/authentication.k8s.io/v1/selfsubjectreviews", status: 404 });
      expect(reviews.slice(1).every((r) => r.path === "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" && r.status === 201)).toBe(true);

      const denied = await answer(`/clusters/other/api/v1/namespaces/elsewhere/pods`, bearer("sam-token"));
      expect(denied.status).toBe(403);
      const subject = hashedSubject(await tokenId("sam-token"));
      expect(subject).toMatch(/^token-sha256:[0-9a-f]{32}$/);
      expect(denied.body).toMatchObject({ message: `pods is forbidden: User "${subject}" cannot list resource "pods" in API group "" in the namespace "elsewhere"` });
      expect(JSON.stringify(denied.body)).not.toContain("sam-token");

      expect((await answer(`/clusters/other/api/v1/namespaces/${ns}/pods`, bearer("stolen-legacy-token"))).status).toBe(401);
    } finally {
      await sim.configure({ selfSubjectReviews: true });
    }
  });
});
