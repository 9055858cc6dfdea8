/**
 * The WebSocket closing handshake, from the client's side: a client that closes gets the
 * relay's close frame back at once (a clean close, not an abnormal 1006 after its timeout), and
 * a client that sends more than a watch client needs to is closed with 1009.
 */
import { describe, expect, it } from "vitest";
import { Sim, uniqueNamespace, wsWatch } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

describe("closing a watch WebSocket", () => {
  const sim = new Sim();

  it("a client's close is answered with the relay's close frame", async () => {
    const ns = uniqueNamespace("wsc");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    await sub.events.next();
    const closed = new Promise<CloseEvent>((resolve) => sub.socket.addEventListener("close", resolve));
    sub.socket.close(4000, "done watching");
    const event = await closed;
    expect([event.code, event.reason, event.wasClean]).toEqual([4000, "done watching", true]);
  });

  it("a client that sends more than acknowledgements is closed with 1009", async () => {
    const ns = uniqueNamespace("wsc");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`);
    await sub.events.next();
    sub.socket.send("x".repeat(64 * 1024));
    const ended = await sub.events.closed();
    expect(ended.code).toBe(1009);
    expect(ended.reason).toContain("only acknowledgements");
  });
});
