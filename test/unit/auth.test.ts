import { sign } from "hono/jwt";
import { describe, expect, it } from "vitest";
import type { Access } from "../../src/auth/access.ts";
import { verifyJwt } from "../../src/auth/jwt.ts";
import { allows, parseRules, type Rule } from "../../src/auth/rules.ts";
import { bearerToken, tokenId } from "../../src/auth/token.ts";

const access = (a: Partial<Access>): Access => ({ cluster: "default", verb: "watch", group: "", resource: "pods", namespace: "dev", ...a });

describe("JWT rules", () => {
  const rules: Rule[] = [
    { apiGroups: [""], resources: ["pods"], namespaces: ["dev"] },
    { clusters: ["prod"], apiGroups: ["apps"], resources: ["*"], namespaces: ["*"] },
  ];
  it.each([
    ["pods in dev", access({}), true],
    ["pods in another namespace", access({ namespace: "ops" }), false],
    ["pods in every namespace (needs *)", access({ namespace: undefined }), false],
    ["configmaps in dev", access({ resource: "configmaps" }), false],
    ["deployments on prod, any namespace", access({ cluster: "prod", group: "apps", resource: "deployments", namespace: undefined }), true],
    ["deployments on another cluster", access({ cluster: "staging", group: "apps", resource: "deployments" }), false],
  ])("%s → %s", (_, a, expected) => {
    expect(allows(rules, a)).toBe(expected);
  });

  it("cluster-scoped resources need namespaces: ['*']", () => {
    expect(allows([{ apiGroups: [""], resources: ["nodes"], namespaces: ["dev"] }], access({ resource: "nodes", namespace: undefined }))).toBe(false);
    expect(allows([{ apiGroups: [""], resources: ["nodes"], namespaces: ["*"] }], access({ resource: "nodes", namespace: undefined }))).toBe(true);
  });

  it("subresources as RBAC matches them: pods/log, */log or *, never pods alone", () => {
    const log = access({ verb: "get", subresource: "log", name: "web-1" });
    const grant = (resources: string[]) => allows([{ apiGroups: [""], resources, namespaces: ["dev"] }], log);
    expect([grant(["pods/log"]), grant(["*/log"]), grant(["*"]), grant(["pods"]), grant(["pods/exec"]), grant(["*/exec"])]).toEqual([true, true, true, false, false, false]);
    expect(allows([{ apiGroups: [""], resources: ["pods/log"], namespaces: ["dev"] }], access({ verb: "get", name: "web-1" }))).toBe(false);
  });

  it("malformed rules are refused with the reason, not guessed at", () => {
    expect(parseRules(undefined)).toEqual([]);
    expect(parseRules({})).toBe("the rules claim must be a list");
    expect(parseRules([{ apiGroups: [""], resources: "pods", namespaces: [] }])).toMatch(/rules\[0\] needs apiGroups/);
    expect(parseRules([{ clusters: "a", apiGroups: [], resources: [], namespaces: [] }])).toMatch(/clusters must be a list/);
  });
});

describe("JWT verification", () => {
  const secret = "a-secret-of-reasonable-length-for-hs256";
  const now = () => Math.floor(Date.now() / 1000);
  it("accepts sub, exp and rules", async () => {
    const t = await sign({ sub: "alice", exp: now() + 60, rules: [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }] }, secret, "HS256");
    expect(await verifyJwt(t, secret)).toMatchObject({ subject: "alice", rules: [{ resources: ["pods"] }] });
  });
  it.each([
    ["an expired token", { sub: "a", exp: -1 }, secret, "the bearer token has expired"],
    ["no exp", { sub: "a" }, secret, "the bearer token has no exp claim"],
    ["no sub", { exp: 1 }, secret, "no sub claim"],
    ["another secret", { sub: "a", exp: 1 }, "some-other-secret-for-signing-tokens", "not a valid token for this relay"],
    ["bad rules", { sub: "a", exp: 1, rules: "all" }, secret, "rules claim must be a list"],
  ])("refuses %s", async (_, payload, signingSecret, reason) => {
    const claims = { ...payload, ...("exp" in payload ? { exp: now() + 60 * (payload.exp as number) } : {}) };
    const t = await sign(claims, signingSecret, "HS256");
    expect(await verifyJwt(t, secret)).toEqual({ refused: expect.stringContaining(reason) });
  });
});

describe("bearer tokens", () => {
  const b64url = (s: string) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(s)))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  const upgrade = (protocols: string) => new Request("http://x/", { headers: { upgrade: "websocket", "sec-websocket-protocol": protocols } });
  const refused = (reason: string) => ({ ok: false, reason: expect.stringContaining(reason) });

  it("come from the Authorization header or, on a WebSocket upgrade, the bearer subprotocol beside another", () => {
    expect(bearerToken(new Request("http://x/", { headers: { authorization: "Bearer abc.def" } }))).toEqual({ ok: true, token: "abc.def" });
    expect(bearerToken(upgrade(`base64.binary.k8s.io, base64url.bearer.authorization.k8s.io.${b64url("eyJ.x-y_z")}`))).toEqual({ ok: true, token: "eyJ.x-y_z" });
    expect(bearerToken(new Request("http://x/"))).toEqual({ ok: true, token: undefined });
    expect(bearerToken(upgrade("base64.binary.k8s.io"))).toEqual({ ok: true, token: undefined });
    expect(bearerToken(new Request("http://x/", { headers: { authorization: "Basic YTpi" } }))).toEqual(refused("not a bearer token"));
    expect(bearerToken(upgrade("x, base64url.bearer.authorization.k8s.io.!!"))).toEqual(refused("does not hold base64url"));
  });

  it("count in a subprotocol only on a WebSocket upgrade, as the API server's protocol authenticator", () => {
    const plain = new Request("http://x/", { headers: { "sec-websocket-protocol": `x, base64url.bearer.authorization.k8s.io.${b64url("stolen")}` } });
    expect(bearerToken(plain)).toEqual({ ok: true, token: undefined });
  });

  it("refuse a token subprotocol alone or twice, as the API server does", () => {
    expect(bearerToken(upgrade(`base64url.bearer.authorization.k8s.io.${b64url("t")}`))).toEqual(refused("needs one other subprotocol beside it"));
    expect(bearerToken(upgrade(`x, base64url.bearer.authorization.k8s.io.${b64url("a")}, base64url.bearer.authorization.k8s.io.${b64url("b")}`))).toEqual(refused("more than one bearer-token"));
  });

  it.each([
    ["non-ASCII", "tök€n"],
    ["a newline", "tok\nen"],
    ["a NUL", "tok\0en"],
    ["a space", "tok en"],
    ["DEL", "tok\x7fen"],
  ])("refuse a token with %s before anything is sent with it", (_, token) => {
    expect(bearerToken(upgrade(`x, base64url.bearer.authorization.k8s.io.${b64url(token)}`))).toEqual(refused("must be printable ASCII"));
  });

  it("refuse a header token the runtime would re-encode (bytes above 0x7f)", () => {
    expect(bearerToken(new Request("http://x/", { headers: { authorization: "Bearer tok\u00e9n" } }))).toEqual(refused("must be printable ASCII"));
  });

  it("are identified by a hash, not themselves", async () => {
    const id = await tokenId("secret-token");
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).toBe(await tokenId("secret-token"));
    expect(id).not.toBe(await tokenId("secret-token2"));
  });
});
