/**
 * @module
 * The front door of `npm start`'s relay (AUTH_MODE=none, real workerd): a DNS-rebound host name
 * is refused, and WebSocket subprotocols are negotiated so that Node 22's own WebSocket and the
 * `ws` package either open with one of the protocols they offered or are refused with an HTTP
 * status, never left with "server did not respond with sent protocols". A client's close frame,
 * sent on a raw socket (no library sends an invalid code), gets RFC 6455's answer.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { startRelay, type RunningRelay } from "./harness.ts";
import { closePayload, firstCloseFrame } from "./raw-websocket.ts";

const OPEN_MS = 15_000;
const TOKEN = bearerProtocol("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl");

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

/** The same with Node 22's built-in WebSocket: the protocol and first message, or why it failed (no status). */
function nativeHandshake(protocols: string[]): Promise<{ opened: string; first: string } | { failed: string }> {
  return new Promise((resolve, reject) => {
    const socket = new globalThis.WebSocket(`ws://127.0.0.1:${port}${watchPath}`, protocols);
    const timer = setTimeout(() => reject(new Error(`the WebSocket neither opened nor failed within ${OPEN_MS} ms`)), OPEN_MS);
    let opened = false;
    socket.addEventListener("open", () => (opened = true));
    socket.addEventListener("message", (m) => {
      clearTimeout(timer);
      resolve({ opened: socket.protocol, first: String(m.data) });
      socket.close();
    });
    socket.addEventListener("error", (e) => {
      clearTimeout(timer);
      if (!opened) resolve({ failed: (e as ErrorEvent).message });
    });
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

describe("WebSocket subprotocols with real clients", () => {
  it("a token beside another protocol: both clients open with that protocol echoed, and get events", async () => {
    expect(await wsHandshake(["base64.binary.k8s.io", TOKEN])).toEqual({ opened: "base64.binary.k8s.io" });
    const native = await nativeHandshake(["base64.binary.k8s.io", TOKEN]);
    expect(native).toMatchObject({ opened: "base64.binary.k8s.io" });
    expect(JSON.parse((native as { first: string }).first)).toMatchObject({ type: "ADDED", object: { kind: "Pod" } });
  });

  it("a token protocol alone is refused with 401 before the upgrade, as the API server refuses it", async () => {
    expect(await wsHandshake([TOKEN])).toEqual({ status: 401 });
    // Not "Server did not respond with sent protocols.": the handshake was refused, not answered without a protocol.
    expect(await nativeHandshake([TOKEN])).toEqual({ failed: "Received network error or non-101 status code." });
  });

  it("no protocol at all opens with none", async () => {
    expect(await wsHandshake([])).toEqual({ opened: "" });
  });
});

describe("a client's close frame is answered as RFC 6455 says, on a watch and on a relay socket", () => {
  const paths = [watchPath, "/_relay/socket"];

  it("a code an endpoint may send is echoed", async () => {
    for (const path of paths) {
      for (const code of [1000, 1001, 3000, 4999]) expect([path, await firstCloseFrame(port, path, { close: closePayload(code, "bye") })]).toMatchObject([path, { code, reason: "bye" }]);
    }
  });

  it("a close without a code is answered with 1000", async () => {
    for (const path of paths) expect([path, await firstCloseFrame(port, path, { close: closePayload() })]).toMatchObject([path, { code: 1000 }]);
  });

  it("a code no endpoint may send is a protocol error (1002), never echoed", async () => {
    for (const path of paths) {
      // (1005 is left out: the runtime reports a frame that carries it as one that carries no code.)
      for (const code of [999, 1004, 1006, 1015, 2000, 5000]) {
        const answer = await firstCloseFrame(port, path, { close: closePayload(code) });
        expect([path, code, answer.code, answer.reason]).toEqual([path, code, 1002, `close code ${code} is not one an endpoint may send (RFC 6455 section 7.4)`]);
      }
    }
  });
});
