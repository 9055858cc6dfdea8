/** A WebSocket subscriber's backlog: what the runtime reports buffered, and what its acknowledgements leave untaken. */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MIN_COMPRESSED } from "./gzip-frame.ts";
import { LineBatch, WebSocketSink } from "./subscriber.ts";

/** The socket a sink sends on; `bufferedAmount` only where the runtime reports it. */
function socket(buffered?: number): WebSocket & { bufferedAmount?: number } {
  return { send: () => undefined, ...(buffered === undefined ? {} : { bufferedAmount: buffered }) } as unknown as WebSocket & { bufferedAmount?: number };
}

const batch = new LineBatch(['{"type":"ADDED","object":{}}\n'.repeat(100)]);

describe("a WebSocket sink's backlog", () => {
  it("without a reported buffer: what the acknowledgements leave, once there is one", () => {
    const sink = new WebSocketSink(socket(), { batched: true, compressed: false });
    sink.send(batch);
    expect(sink.backlog()).toBe(0);
    sink.acknowledge(0);
    expect(sink.backlog()).toBe(batch.size);
    sink.acknowledge(batch.size);
    expect(sink.backlog()).toBe(0);
  });

  it("with a reported buffer: the larger of it and what the acknowledgements leave, so a reader that relays what it takes is measured by its acknowledgements", () => {
    const ws = socket(0);
    const sink = new WebSocketSink(ws, { batched: true, compressed: false });
    sink.send(batch);
    // A client that never acknowledges: the runtime's buffer alone.
    expect(sink.backlog()).toBe(0);
    ws.bufferedAmount = 70;
    expect(sink.backlog()).toBe(70);
    // It acknowledged nothing, and took everything off the wire: it has all of it still to take.
    ws.bufferedAmount = 0;
    sink.acknowledge(0);
    expect(sink.backlog()).toBe(batch.size);
    sink.acknowledge(batch.size);
    expect(sink.backlog()).toBe(0);
    ws.bufferedAmount = 70;
    expect(sink.backlog()).toBe(70);
  });
});

describe("a compressed framing's messages", () => {
  /** A socket that keeps what it is sent. */
  const recording = () => {
    const sent: Array<string | ArrayBuffer | ArrayBufferView> = [];
    return { sent, ws: { send: (data: string | ArrayBuffer | ArrayBufferView) => sent.push(data) } as unknown as WebSocket };
  };

  it("sends a batch long enough as one gzip of the batch framing's text, made once for every sink; a short one as text", () => {
    const long = new LineBatch(['{"type":"ADDED","object":{"metadata":{"name":"é"}}}\n'.repeat(40)]);
    const short = LineBatch.of('{"type":"BOOKMARK","object":{}}\n');
    expect(long.size).toBeGreaterThanOrEqual(MIN_COMPRESSED);
    const [a, b] = [recording(), recording()];
    for (const { ws } of [a, b]) {
      const sink = new WebSocketSink(ws, { batched: true, compressed: true });
      expect(sink.send(long)).toBe(1);
      expect(sink.send(short)).toBe(1);
      // Counted as the text the message holds, as the client acknowledges it.
      sink.acknowledge(0);
      expect(sink.backlog()).toBe(long.size + short.size);
    }
    expect(a.sent[0]).toBe(b.sent[0]);
    expect(new TextDecoder().decode(gunzipSync(a.sent[0] as Uint8Array))).toBe(long.joined);
    expect(a.sent[1]).toBe(short.joined);
    expect(long.gzipped).toBe(true);
    expect(short.gzipped).toBe(false);
  });
});
