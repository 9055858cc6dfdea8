/**
 * @module
 * The front door of `npm start`'s relay (AUTH_MODE=none, real workerd): a DNS-rebound host name
 * is refused, for plain requests and WebSockets alike.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startRelay, type RunningRelay } from "./harness.ts";

const OPEN_MS = 15_000;

let relay: RunningRelay;
let port: number;
beforeAll(async () => {
  relay = await startRelay({ SIM_CHURN: "0" });
  port = Number(new URL(relay.url).port);
});
afterAll(async () => relay?.stop());

const watchPath = "/api/v1/namespaces/default/pods?watch=1";

/** A GET to the relay with the given Host header, as a browser on a rebound name sends it. */
function getWithHost(host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(OPEN_MS, () => req.destroy(new Error(`no answer from the relay within ${OPEN_MS} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** How a `ws` client's handshake ends: opened (with the protocol the server chose), or refused with an HTTP status, or failed. */
function wsHandshake(protocols: string[], options: WebSocket.ClientOptions = {}): Promise<{ opened: string } | { status: number } | { error: string }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${watchPath}`, protocols, { ...options, handshakeTimeout: OPEN_MS });
    socket.once("open", () => {
      resolve({ opened: socket.protocol });
      socket.close();
    });
    socket.once("unexpected-response", (_, response) => {
      resolve({ status: response.statusCode ?? 0 });
      response.resume();
      socket.terminate();
    });
    socket.once("error", (e) => resolve({ error: e.message }));
  });
}

describe("npm start's relay answers only loopback host names (DNS rebinding)", () => {
  it("a rebound name gets 403 naming ALLOWED_HOSTS, for plain requests and WebSockets alike", async () => {
    const refused = await getWithHost(`attacker.example:${port}`, "/api/v1/namespaces/default/pods");
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ kind: "Status", code: 403, message: expect.stringContaining("ALLOWED_HOSTS") });
    expect(await wsHandshake([], { headers: { host: `attacker.example:${port}` }, origin: `http://attacker.example:${port}` })).toEqual({ status: 403 });
  });

  it("localhost, 127.0.0.1 and [::1] are served", async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const served = await getWithHost(host, "/api/v1/namespaces/default/pods");
      expect([host, served.status]).toEqual([host, 200]);
    }
  });
});
