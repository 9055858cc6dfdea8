import { describe, expect, it } from "vitest";
import { websocketProtocol } from "../../src/http/websocket.ts";
import { BATCH_PROTOCOL, bearerProtocol, DELTA_PROTOCOL, framingOf, GZIP_BATCH_PROTOCOL, GZIP_DELTA_PROTOCOL, parseOffer, watchProtocols } from "../../src/k8s/websocket.ts";

const token = bearerProtocol("eyJhbGciOi.payload.signature");
const upgrade = (protocols?: string) => new Request("http://x/", { headers: { upgrade: "websocket", ...(protocols === undefined ? {} : { "sec-websocket-protocol": protocols }) } });

describe("WebSocket subprotocols, as the API server negotiates them", () => {
  it("echoes the one protocol offered beside the token, never the token", () => {
    for (const offered of [`base64.binary.k8s.io, ${token}`, `${token}, base64.binary.k8s.io`, `${token},base64.binary.k8s.io`]) {
      expect(websocketProtocol(upgrade(offered))).toEqual({ ok: true, value: "base64.binary.k8s.io" });
    }
    expect(websocketProtocol(upgrade("batch.watch.kube-watch-relay.dev"))).toEqual({ ok: true, value: "batch.watch.kube-watch-relay.dev" });
    expect(websocketProtocol(upgrade())).toEqual({ ok: true, value: undefined });
    expect(websocketProtocol(new Request("http://x/", { headers: { "sec-websocket-protocol": "a, b" } }))).toEqual({ ok: true, value: undefined });
  });

  it('refuses a token protocol alone with 401 (the API server\'s "missing additional subprotocol"), so no client is left without a protocol back', () => {
    const refused = websocketProtocol(upgrade(token));
    expect(refused).toMatchObject({ ok: false, status: { code: 401, reason: "Unauthorized", message: expect.stringContaining("needs one other subprotocol beside it") } });
    expect(JSON.stringify(refused)).not.toContain(token);
  });

  it("refuses two protocols besides the token with 400, as x/net/websocket does", () => {
    expect(websocketProtocol(upgrade(`a, b, ${token}`))).toMatchObject({ ok: false, status: { code: 400 } });
  });

  it("reads the header as the API server's authenticator does", () => {
    expect(parseOffer(` a ,, ${token} `)).toEqual({ token: "eyJhbGciOi.payload.signature", others: ["a"] });
    expect(parseOffer(null)).toEqual({ token: undefined, others: [] });
    expect(parseOffer(`a, ${token}, ${token}`)).toEqual({ refused: expect.stringContaining("more than one") });
    expect(parseOffer("a, base64url.bearer.authorization.k8s.io.")).toEqual({ refused: expect.stringContaining("base64url") });
    expect(parseOffer("a, base64url.bearer.authorization.k8s.io.%%")).toEqual({ refused: expect.stringContaining("base64url") });
  });
});

describe("the relay's watch framings", () => {
  it("reads batch, delta and their gzip forms from the subprotocol; anything else is one event per text message", () => {
    expect(framingOf(BATCH_PROTOCOL)).toEqual({ batched: true, deltas: false, compressed: false });
    expect(framingOf(DELTA_PROTOCOL)).toEqual({ batched: true, deltas: true, compressed: false });
    expect(framingOf(GZIP_BATCH_PROTOCOL)).toEqual({ batched: true, deltas: false, compressed: true });
    expect(framingOf(GZIP_DELTA_PROTOCOL)).toEqual({ batched: true, deltas: true, compressed: true });
    for (const other of [undefined, "base64.binary.k8s.io", "gzip.base64.binary.k8s.io", "gzip."]) expect(framingOf(other)).toEqual({ batched: false, deltas: false, compressed: false });
  });

  it("offers one framing (the API server and older relays echo any single one), the token beside it", () => {
    expect(watchProtocols(undefined, true, true)).toEqual([GZIP_DELTA_PROTOCOL]);
    expect(watchProtocols(undefined, false, true)).toEqual([GZIP_BATCH_PROTOCOL]);
    expect(watchProtocols("t", false)).toEqual([BATCH_PROTOCOL, bearerProtocol("t")]);
    expect(websocketProtocol(upgrade(watchProtocols("t", true, true).join(", ")))).toEqual({ ok: true, value: GZIP_DELTA_PROTOCOL });
  });
});
