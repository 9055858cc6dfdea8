/**
 * AUTH_MODE=jwt on the relay socket: the socket's token is verified when it opens, each watch
 * is authorised by the token's rules exactly as a standalone watch, and the token's expiry
 * ends every watch and then the socket.
 */
import { describe, expect, it } from "vitest";
import type { Rule } from "../../src/auth/rules.ts";
import { BATCH_PROTOCOL, bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { names, relaySocket, untilClosed } from "../worker/socket-helpers.ts";
import { jwtFor } from "../kit/tokens.ts";

const sim = new Sim();
const other = new Sim("other");

const token = (sub: string, rules: Rule[], ttlSeconds = 600) => jwtFor(sub, rules, { ttlSeconds });
const offer = (t: string) => ({ "sec-websocket-protocol": `${BATCH_PROTOCOL}, ${bearerProtocol(t)}` });

describe("the relay socket with AUTH_MODE=jwt", () => {
  it("refuses a socket without a valid token, as a watch WebSocket is refused", async () => {
    const upgrade = { upgrade: "websocket" };
    expect((await relay("/_relay/socket", { headers: { ...upgrade, "sec-websocket-protocol": BATCH_PROTOCOL } })).status).toBe(401);
    const expired = await token("late", [], -60);
    expect((await relay("/_relay/socket", { headers: { ...upgrade, ...offer(expired) } })).status).toBe(401);
    const good = await token("alice", []);
    // The token protocol alone: the API server's 401; from a foreign origin: 403.
    expect((await relay("/_relay/socket", { headers: { ...upgrade, "sec-websocket-protocol": bearerProtocol(good) } })).status).toBe(401);
    expect((await relay("/_relay/socket", { headers: { ...upgrade, ...offer(good), origin: "https://evil.example" } })).status).toBe(403);
    const allowed = await relay("/_relay/socket", { headers: { ...upgrade, ...offer(good), origin: "https://dashboard.example" } });
    expect(allowed.status).toBe(101);
    expect(allowed.headers.get("sec-websocket-protocol")).toBe(BATCH_PROTOCOL);
    allowed.webSocket!.accept();
    allowed.webSocket!.close();
  });

  it("authorises each watch by the token's rules: a forbidden one fails alone with the standalone watch's 403", async () => {
    const ns = uniqueNamespace("jm");
    await sim.createPod(ns, "p0");
    await other.createPod(ns, "o0");
    const t = await token("alice", [
      { apiGroups: [""], resources: ["pods"], namespaces: [ns] },
      { clusters: ["other"], apiGroups: [""], resources: ["pods"], namespaces: [ns] },
    ]);
    const socket = await relaySocket(offer(t), null);
    socket.send({ op: "watch", id: "mine", path: `/api/v1/namespaces/${ns}/pods` });
    socket.send({ op: "watch", id: "theirs", path: "/api/v1/namespaces/team-a/pods" });
    socket.send({ op: "watch", id: "nodes", path: "/api/v1/nodes" });
    socket.send({ op: "watch", id: "secrets", path: `/api/v1/namespaces/${ns}/secrets` });
    socket.send({ op: "watch", id: "other", path: `/clusters/other/api/v1/namespaces/${ns}/pods` });
    const standalone = (await (await relay(`/api/v1/namespaces/team-a/pods?watch=1`, { headers: { authorization: `Bearer ${t}` } })).json()) as object;
    const [theirs, theirsClosed] = await untilClosed(socket.lines("theirs"));
    expect(theirs).toEqual({ id: "theirs", type: "ERROR", object: standalone });
    expect(theirs!.object).toMatchObject({ code: 403, message: expect.stringContaining('User "alice" cannot watch resource "pods"') });
    expect(theirsClosed).toMatchObject({ type: "CLOSED" });
    expect((await untilClosed(socket.lines("nodes")))[0]).toMatchObject({ type: "ERROR", object: { code: 403 } });
    expect((await untilClosed(socket.lines("secrets")))[0]).toMatchObject({ type: "ERROR", object: { code: 403, message: expect.stringContaining("DENY_RESOURCES") } });
    expect(await names(socket.lines("mine"), 1)).toEqual(["ADDED p0"]);
    expect(await names(socket.lines("other"), 1)).toEqual(["ADDED o0"]);
    await sim.createPod(ns, "p1");
    expect(await names(socket.lines("mine"), 1)).toEqual(["ADDED p1"]);
    socket.close();
  });

  it("ends every watch, then the socket, when the socket's token expires", async () => {
    const ns = uniqueNamespace("jx");
    await sim.createPod(ns, "p0");
    const all = [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }];
    const socket = await relaySocket(offer(await token("brief", all, 3)));
    socket.send({ op: "watch", id: "a", path: `/api/v1/namespaces/${ns}/pods` });
    socket.send({ op: "watch", id: "b", path: "/api/v1/pods", labelSelector: "none=here" });
    expect(await names(socket.lines("a"), 1)).toEqual(["ADDED p0"]);
    for (const id of ["a", "b"]) {
      const lines = (await untilClosed(socket.lines(id))).filter((l) => l.type !== "BOOKMARK" && l.type !== "ADDED");
      expect(lines[0]).toMatchObject({ id, type: "ERROR", object: { code: 401, message: expect.stringContaining("expired") } });
      expect(lines.at(-1)).toMatchObject({ id, type: "CLOSED", code: 4401 });
    }
    expect(await socket.closed.closed()).toMatchObject({ code: 4401 });
  });

  it("counts each watch against the subject's subscriptions, as standalone watches", async () => {
    const ns = uniqueNamespace("jq");
    const t = await token("counted", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
    const socket = await relaySocket(offer(t));
    // MAX_SUBSCRIPTIONS_PER_SUBJECT is 5 in this project.
    for (let i = 0; i < 6; i++) socket.send({ op: "watch", id: `w${i}`, path: `/api/v1/namespaces/${ns}-${i}/pods` });
    const refused = (await untilClosed(socket.lines("w5")))[0];
    expect(refused).toMatchObject({ type: "ERROR", object: { code: 429 } });
    socket.close();
  });
});
