/**
 * AUTH_MODE=jwt and pod logs: `pods/log` is its own grant (as in RBAC, `pods` alone does not give
 * it), asked before the options are read; a follow counts against the subject's subscriptions;
 * a followed log ends when its token does.
 */
import { describe, expect, it } from "vitest";
import type { Rule } from "../../src/auth/rules.ts";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { jwtFor } from "../kit/tokens.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { followHttp, followSocket, runningPod } from "../worker/log-helpers.ts";

const sim = new Sim("logs");
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const logs = (namespace: string): Rule => ({ clusters: ["logs"], apiGroups: [""], resources: ["pods/log"], namespaces: [namespace] });

describe("pod logs in jwt mode", () => {
  it("are granted by pods/log, */log or *, never by pods alone, and asked before the options are read", async () => {
    const ns = uniqueNamespace("jl");
    await runningPod(sim, ns, "web");
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log`;
    const status = async (resources: string[], query = "tailLines=1") => {
      const token = await jwtFor("alice", [{ apiGroups: [""], resources, namespaces: [ns] }]);
      const response = await relay(`${path}?${query}`, { headers: bearer(token) });
      return [response.status, response.status === 200 ? "" : ((await response.json()) as { message: string }).message];
    };
    expect(await status(["pods/log"])).toEqual([200, ""]);
    expect(await status(["*/log"])).toEqual([200, ""]);
    expect(await status(["*"])).toEqual([200, ""]);
    const forbidden = `pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "${ns}"`;
    expect(await status(["pods"])).toEqual([403, forbidden]);
    expect(await status(["pods/exec"])).toEqual([403, forbidden]);
    // Not allowed: refused before its options are read, as the API server does.
    expect(await status(["pods"], "tailLines=-1")).toEqual([403, forbidden]);
    expect(await status(["pods/log"], "tailLines=-1")).toEqual([422, 'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0']);
  });

  it("a follow is a subscription: the subject's fifth and sixth (MAX_SUBSCRIPTIONS_PER_SUBJECT is 5)", async () => {
    const ns = uniqueNamespace("jq");
    await runningPod(sim, ns, "web", { intervalMs: 50 });
    const token = await jwtFor("quota-logs", [logs(ns)]);
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log?follow=true&tailLines=1`;
    const followers = await Promise.all(Array.from({ length: 5 }, () => followHttp(path, bearer(token))));
    const sixth = await relay(path, { headers: bearer(token) });
    expect([sixth.status, ((await sixth.json()) as { message: string }).message]).toEqual([429, '"quota-logs" already holds 5 watches through this relay (MAX_SUBSCRIPTIONS_PER_SUBJECT is 5)']);
    for (const follower of followers) follower.close();
  });

  it("a followed log ends when its token expires: the WebSocket with 4401, the HTTP stream", async () => {
    const ns = uniqueNamespace("je");
    await runningPod(sim, ns, "web", { intervalMs: 50 });
    const token = await jwtFor("brief", [logs(ns)], { ttlSeconds: 2 });
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log?follow=true&tailLines=1`;
    const socket = await followSocket(path, ["binary.k8s.io", bearerProtocol(token)]);
    const http = await followHttp(path, bearer(token));
    expect(await socket.end()).toMatchObject({ code: 4401, reason: "credentials expired or no longer accepted" });
    expect((await http.end()).error).toBeUndefined();
    expect(http.lines.length).toBeGreaterThan(0);
  });
});
