/**
 * AUTH_MODE=kube on the relay socket: each watch is authenticated and authorised by its own
 * cluster with the socket's token, as a standalone watch is, and revocation ends the watches it
 * affects while the others go on.
 */
import { describe, expect, it } from "vitest";
import { BATCH_PROTOCOL, bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { names, relaySocket, untilClosed } from "../worker/socket-helpers.ts";

const sim = new Sim();
const read = ["get", "list", "watch"];
const offer = (t: string) => ({ "sec-websocket-protocol": `${BATCH_PROTOCOL}, ${bearerProtocol(t)}` });

const users = (namespaces: string[]) =>
  sim.setUsers([{ name: "dana", tokens: ["dana-token"], rules: namespaces.map((ns) => ({ verbs: read, apiGroups: [""], resources: ["pods"], namespaces: [ns] })) }]);

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

    // A token the cluster does not know: each watch is refused as a standalone one is (401).
    const stranger = await relaySocket(offer("nobody-token"));
    stranger.send({ op: "watch", id: "x", path: `/api/v1/namespaces/${a}/pods` });
    expect((await untilClosed(stranger.lines("x")))[0]).toMatchObject({ type: "ERROR", object: { code: 401 } });
    stranger.close();
    socket.close();
  });
});
