/**
 * Pod logs on the relay socket: a `logs` op is the standalone log WebSocket of the same path and
 * options, its lines tagged with its id (LOG), its refusal its ERROR, its end its CLOSED, beside
 * the socket's watches; and it shares its log hub's one upstream stream with every other follower.
 */
import { describe, expect, it } from "vitest";
import { relaySocket as clientSocket, WatchError } from "../../src/client/index.ts";
import { Sim, uniqueNamespace } from "./helpers.ts";
import { TestNetwork } from "./network.ts";
import { followHttp, restartContainer, runningPod, simLog } from "./log-helpers.ts";
import { names, relaySocket, untilClosed, type SocketLine } from "./socket-helpers.ts";

const sim = new Sim("logs");

const text = (lines: SocketLine[]) =>
  lines
    .filter((l) => l.type === "LOG")
    .map((l) => (l as SocketLine & { text: string }).text)
    .join("");

describe("pod logs on the relay socket", () => {
  it("follows a log beside a watch, its lines tagged LOG, until the container stops: exactly the log, one upstream follow for it and an HTTP follower", async () => {
    const ns = uniqueNamespace("slog");
    await runningPod(sim, ns, "web", { startedAgoMs: 1000, intervalMs: 20 });
    const socket = await relaySocket();
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log`;
    const mark = (await sim.requests("/nothing")).next;
    socket.send({ op: "logs", id: "web", path, timestamps: true });
    socket.send({ op: "watch", id: "pods", path: `/clusters/logs/api/v1/namespaces/${ns}/pods` });
    expect(await names(socket.lines("pods"), 1)).toEqual(["ADDED web"]);
    const first = await socket.lines("web").next("the log's first lines");
    expect(first).toMatchObject({ id: "web", type: "LOG", text: expect.stringMatching(/^\S+Z level=info msg="starting" container=main/) });
    const http = await followHttp(`${path}?follow=true&timestamps=true`);
    await http.until("lines", (f) => f.lines.length > 3);
    await restartContainer(sim, ns, "web");
    const rest = await untilClosed(socket.lines("web"));
    expect(rest.at(-1)).toEqual({ id: "web", type: "CLOSED", code: 1000, reason: "the container's log ended" });
    const previous = await simLog(sim, `/api/v1/namespaces/${ns}/pods/web/log?previous=true&timestamps=true`);
    expect(text([first, ...rest])).toBe(previous);
    expect((await http.end()).error).toBeUndefined();
    expect(http.text).toBe(previous);
    const follows = (await sim.requests(`/api/v1/namespaces/${ns}/pods/web/log`, mark)).requests.filter((r) => r.query.includes("follow=true"));
    expect(follows).toHaveLength(1);
    socket.close();
  });

  it("a log not followed, a refusal (ERROR then CLOSED), a malformed op (the socket's ERROR), and unwatch", async () => {
    const ns = uniqueNamespace("slog");
    // Lines show a second after they are written, and a start time is whole seconds: started 3 s
    // ago, the log holds the 3 lines read once below however the clock falls.
    await runningPod(sim, ns, "web", { startedAgoMs: 3000, intervalMs: 50 });
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log`;
    const socket = await relaySocket({}, null);
    socket.send({ op: "logs", id: "once", path, follow: false, tailLines: 3 });
    const once = await untilClosed(socket.lines("once"));
    expect(text(once).split("\n")).toHaveLength(4);
    expect(once.at(-1)).toMatchObject({ type: "CLOSED", code: 1000 });

    socket.send({ op: "logs", id: "nope", path: `/clusters/logs/api/v1/namespaces/${ns}/pods/nope/log` });
    socket.send({ op: "logs", id: "bad", path, tailLines: -1 });
    const [nope, nopeClosed] = await untilClosed(socket.lines("nope"));
    expect([nope?.type, nope?.object?.code, nope?.object?.message, nopeClosed?.type]).toEqual(["ERROR", 404, 'pods "nope" not found', "CLOSED"]);
    const [bad] = await untilClosed(socket.lines("bad"));
    expect([bad?.type, bad?.object?.code]).toEqual(["ERROR", 422]);

    socket.send({ op: "logs", id: "x", path: `/api/v1/namespaces/${ns}/pods` });
    expect(await socket.lines("").next("the socket's refusal")).toMatchObject({ type: "ERROR", object: { code: 400, details: { name: "x" } } });

    socket.send({ op: "logs", id: "live", path, tailLines: 1 });
    expect((await socket.lines("live").next("a line")).type).toBe("LOG");
    socket.send({ op: "unwatch", id: "live" });
    expect((await untilClosed(socket.lines("live"))).at(-1)).toMatchObject({ type: "CLOSED", code: 1000, reason: "unwatched" });
    socket.close();
  });

  it("the client's relaySocket().logs(): a log's text as it comes, what ended it, a refusal as a WatchError", async () => {
    const ns = uniqueNamespace("slog");
    await runningPod(sim, ns, "web", { startedAgoMs: 500, intervalMs: 20 });
    const network = new TestNetwork();
    const relay = clientSocket("http://relay.test", { transport: network });
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log`;
    let text = "";
    let restarted: Promise<void> | undefined;
    const following = (async () => {
      const logs = relay.logs(path, { tailLines: 0, timestamps: true });
      for (;;) {
        const next = await logs.next();
        if (next.done) return next.value;
        text += next.value;
        if (text.split("\n").length > 5) restarted ??= restartContainer(sim, ns, "web");
      }
    })();
    expect(await following).toEqual({ code: 1000, reason: "the container's log ended" });
    await restarted;
    expect((await simLog(sim, `/api/v1/namespaces/${ns}/pods/web/log?previous=true&timestamps=true`)).endsWith(text)).toBe(true);
    const refused = relay.logs(`/clusters/logs/api/v1/namespaces/${ns}/pods/nope/log`).next();
    await expect(refused).rejects.toBeInstanceOf(WatchError);
    await expect(refused).rejects.toMatchObject({ code: 404 });
    expect(network.sockets).toHaveLength(1);
    relay.close();
  });
});
