import { describe, expect, it } from "vitest";
import { readLines, type LogLine } from "../k8s/log-lines.ts";
import { FakeClock } from "../hub/clock.fake.ts";
import type { CloseReason } from "../hub/subscriber.ts";
import { LogBuffer, LogMemory } from "./buffer.ts";
import { Follower, LogFanout, type FollowerOptions, type LogSink } from "./followers.ts";

const log = () => undefined;
const encoder = new TextEncoder();

/** A sink that keeps what it is sent. */
class RecordingSink implements LogSink {
  readonly transport = "http" as const;
  readonly chunks: Uint8Array[] = [];
  closedWith: CloseReason | undefined;
  backlogBytes = 0;
  get closed(): boolean {
    return this.closedWith !== undefined;
  }
  get text(): string {
    return this.chunks.map((c) => new TextDecoder().decode(c)).join("");
  }
  deliver(bytes: Uint8Array): number {
    this.chunks.push(bytes);
    return 1;
  }
  backlog(): number {
    return this.backlogBytes;
  }
  alive(): boolean {
    return !this.closed;
  }
  close(reason: CloseReason): void {
    this.closedWith = reason;
  }
}

/** Line `i` of the log: at second `i / 2` (so every two lines share a timestamp), saying `line i`. */
const stamped = (i: number) => `2027-01-15T08:00:${String(Math.floor(i / 2)).padStart(2, "0")}.5Z line ${i}\n`;
const logText = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => stamped(from + k)).join("");
const logLines = (from: number, to: number): LogLine[] => readLines(encoder.encode(logText(from, to)));

function body(text: string): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  // In small pieces, cut anywhere.
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
      controller.close();
    },
  });
}

function setUp() {
  const clock = new FakeClock();
  const fanout = new LogFanout(1 << 20, log, clock);
  // The shared stream has lines 0-9 (with their places counted as the stream counts them).
  const buffer = new LogBuffer(new LogMemory(1 << 20), 100, logLines(0, 10), true);
  const follow = (options: Partial<FollowerOptions>, position: number, reading: boolean) => {
    const sink = new RecordingSink();
    const follower = new Follower(sink, { timestamps: true, limitBytes: undefined, since: undefined, ...options }, buffer, position, reading);
    fanout.attach(follower);
    return { sink, follower };
  };
  return { clock, fanout, buffer, follow };
}

describe("LogFanout", () => {
  it("joins a follower's own history to the shared lines where they meet: nothing missed, nothing twice, lines of one timestamp told apart", async () => {
    const { clock, fanout, buffer, follow } = setUp();
    // Its place is taken at line 10; its history is then read and runs to line 12 (through lines 10 and 11, which share a timestamp), while the stream brings 10 to 15.
    const { sink, follower } = follow({}, buffer.head, true);
    const whole = readLines(encoder.encode(logText(0, 16)));
    for (const line of whole.slice(10)) buffer.push(line);
    fanout.publish();
    expect(sink.text).toBe("");
    await fanout.history(follower, body(logText(3, 12)));
    clock.advance(1);
    expect(sink.text).toBe(logText(3, 16));
  });

  it("a history that ends within a timestamp's lines: the rest of them come from the shared lines", async () => {
    const { clock, fanout, buffer, follow } = setUp();
    const { sink, follower } = follow({ timestamps: false }, buffer.head, true);
    for (const line of readLines(encoder.encode(logText(0, 14))).slice(10)) buffer.push(line);
    // Lines 10 and 11 share a timestamp; the history had only 10.
    await fanout.history(follower, body(logText(8, 11)));
    clock.advance(1);
    expect(sink.text).toBe(Array.from({ length: 6 }, (_, k) => `line ${8 + k}\n`).join(""));
  });

  it("a history's last line without its newline is not sent: the shared lines bring it whole", async () => {
    const { clock, fanout, buffer, follow } = setUp();
    const { sink, follower } = follow({}, buffer.head, true);
    for (const line of readLines(encoder.encode(logText(0, 13))).slice(10)) buffer.push(line);
    await fanout.history(follower, body(logText(9, 11) + stamped(11).slice(0, 20)));
    clock.advance(1);
    expect(sink.text).toBe(logText(9, 13));
  });

  it("a follower that leaves while its history is read cancels that read, whose upstream sends nothing more", async () => {
    const { fanout, buffer, follow } = setUp();
    const { follower } = follow({}, buffer.head, true);
    let cancelled = false;
    // Its upstream answered and then held its connection with nothing more to say.
    const held = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => undefined),
      cancel: () => {
        cancelled = true;
      },
    });
    const reading = fanout.history(follower, held);
    fanout.detach(follower);
    expect(cancelled).toBe(true);
    await reading;
  });

  it("limitBytes ends a follower's stream after exactly that many bytes, mid-line if need be", () => {
    const { clock, buffer, follow } = setUp();
    const { sink } = follow({ limitBytes: 50 }, 2, false);
    clock.advance(1);
    expect(sink.text).toBe(logText(2, 10).slice(0, 50));
    expect(sink.closedWith?.reason).toBe("limitBytes reached");
    expect(buffer.head).toBe(10);
  });

  it("a follower whose backlog and unsent lines pass its budget is cut off; an ended log ends the others once they have it all", () => {
    const { clock, fanout, buffer, follow } = setUp();
    const slow = follow({}, 0, false);
    const fast = follow({}, 0, false);
    clock.advance(1);
    slow.sink.backlogBytes = 1 << 20;
    for (const line of logLines(10, 20)) buffer.push(line);
    buffer.ended = true;
    fanout.publish();
    clock.advance(1);
    expect(slow.sink.closedWith?.code).toBe(4008);
    expect(fast.sink.text).toBe(logText(0, 20));
    expect(fast.sink.closedWith).toEqual({ code: 1000, reason: "the container's log ended" });
    expect(fanout.size).toBe(0);
  });
});
