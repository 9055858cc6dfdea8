/**
 * AUTH_MODE=kube on the relay socket: the default cluster reviews the token before the socket
 * opens; each watch is authenticated and authorised by its own cluster with the socket's token,
 * as a standalone watch is, and revocation ends the watches it affects while the others go on.
 */
import { describe, expect, it } from "vitest";
import { BATCH_PROTOCOL, bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { names, relaySocket, untilClosed } from "../worker/socket-helpers.ts";

const sim = new Sim();
const read = ["get", "list", "watch"];
const offer = (t: string) => ({ "sec-websocket-protocol": `${BATCH_PROTOCOL}, ${bearerProtocol(t)}` });

const users = (namespaces: string[], others: Array<{ name: string; tokens: string[] }> = []) => {
  const rules = namespaces.map((ns) => ({ verbs: read, apiGroups: [""], resources: ["pods"], namespaces: [ns] }));
  return sim.setUsers([{ name: "dana", tokens: ["dana-token"], rules }, ...others.map((user) => ({ ...user, rules }))]);
};

describe("the relay socket with AUTH_MODE=kube", () => {
  it("needs a token to open; each watch's cluster decides, and revocation ends only what it revokes", async () => {
    expect((await relay("/_relay/socket", { headers: { upgrade: "websocket", "sec-websocket-protocol": BATCH_PROTOCOL } })).status).toBe(401);
    const a = uniqueNamespace("ka");
    const b = uniqueNamespace("kb");
    await users([a, b]);
    await sim.createPod(a, "a0");
    await sim.createPod(b, "b0");
    const socket = await relaySocket(offer("dana-token"));
    socket.send({ op: "watch", id: "a", path: `/api/v1/namespaces/${a}/pods` });
    socket.send({ op: "watch", id: "b", path: `/api/v1/namespaces/${b}/pods` });
    socket.send({ op: "watch", id: "all", path: "/api/v1/pods" });
    expect(await names(socket.lines("a"), 1)).toEqual(["ADDED a0"]);
    expect(await names(socket.lines("b"), 1)).toEqual(["ADDED b0"]);
    expect((await untilClosed(socket.lines("all")))[0]).toMatchObject({
      type: "ERROR",
      object: { code: 403, message: 'pods is forbidden: User "dana" cannot watch resource "pods" in API group "" at the cluster scope' },
    });

    // Revoke b: its watch ends with the standalone watch's 403 and close 4403; a goes on.
    await users([a]);
    const ended = await untilClosed(socket.lines("b"));
    expect(ended.find((l) => l.type === "ERROR")).toMatchObject({ object: { code: 403, message: expect.stringContaining("revoked") } });
    expect(ended.at(-1)).toMatchObject({ type: "CLOSED", code: 4403 });
    await sim.createPod(a, "a1");
    expect(await names(socket.lines("a"), 1)).toEqual(["ADDED a1"]);

    socket.close();
  });

  it("opens no socket for a token the cluster does not take: 401, before the upgrade", async () => {
    const refused = await relay("/_relay/socket", { headers: { upgrade: "websocket", ...offer("nobody-token") } });
    expect(refused.status).toBe(401);
    expect(refused.webSocket).toBeNull();
    expect(await refused.json()).toMatchObject({ kind: "Status", code: 401, message: expect.stringContaining("does not accept") });
  });

  it("closes a socket whose token the cluster stops taking at its next watch's 401 (4401)", async () => {
    const ns = uniqueNamespace("kr");
    // A token of this test's own: no review of it is remembered from another test.
    const erin = { name: "erin", tokens: [`erin-token-${ns}`] };
    await users([ns], [erin]);
    const socket = await relaySocket(offer(erin.tokens[0]!));
    await users([ns]);
    socket.send({ op: "watch", id: "w", path: `/api/v1/namespaces/${ns}/pods` });
    const lines = await untilClosed(socket.lines("w"));
    expect(lines[0]).toMatchObject({ type: "ERROR", object: { code: 401 } });
    expect(lines.at(-1)).toMatchObject({ type: "CLOSED", code: 4401 });
    expect(await socket.closed.closed()).toMatchObject({ code: 4401, reason: expect.stringContaining("not accepted") });
  });
});
