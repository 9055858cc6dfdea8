/** A WebSocket subscriber's backlog: what the runtime reports buffered, and what its acknowledgements leave untaken. */
import { describe, expect, it } from "vitest";
import { LineBatch, WebSocketSink } from "./subscriber.ts";

/** The socket a sink sends on; `bufferedAmount` only where the runtime reports it. */
function socket(buffered?: number): WebSocket & { bufferedAmount?: number } {
  return { send: () => undefined, ...(buffered === undefined ? {} : { bufferedAmount: buffered }) } as unknown as WebSocket & { bufferedAmount?: number };
}

const batch = new LineBatch(['{"type":"ADDED","object":{}}\n'.repeat(100)]);

describe("a WebSocket sink's backlog", () => {
  it("without a reported buffer: what the acknowledgements leave, once there is one", () => {
    const sink = new WebSocketSink(socket(), true);
    sink.send(batch);
    expect(sink.backlog()).toBe(0);
    sink.acknowledge(0);
    expect(sink.backlog()).toBe(batch.size);
    sink.acknowledge(batch.size);
    expect(sink.backlog()).toBe(0);
  });

  it("with a reported buffer: the larger of it and what the acknowledgements leave, so a reader that relays what it takes is measured by its acknowledgements", () => {
    const ws = socket(0);
    const sink = new WebSocketSink(ws, true);
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
