import { describe, expect, it } from "vitest";
import { readLines, type LogLine } from "../k8s/log-lines.ts";
import { LogBuffer, LogMemory } from "./buffer.ts";

const SECOND = 1_000_000_000n;
const T0 = 1_800_000_000n * SECOND;

/** `n` stamped lines, a tenth of a second apart from `from` (seconds after T0), each `pad` bytes of text. */
function lines(n: number, from = 0, pad = 4): LogLine[] {
  let text = "";
  for (let i = 0; i < n; i++) {
    const at = new Date(Number((T0 + BigInt(from) * SECOND) / 1_000_000n) + i * 100).toISOString();
    text += `${at} ${String(from * 10 + i).padStart(pad, "0")}\n`;
  }
  return readLines(new TextEncoder().encode(text));
}

const text = (line: LogLine) => new TextDecoder().decode(line.bytes.subarray(line.stamp)).trim();

describe("LogBuffer", () => {
  it("keeps its line budget, but not over what a follower has yet to take", () => {
    const buffer = new LogBuffer(new LogMemory(1 << 20), 5, [], true);
    for (const line of lines(12)) buffer.push(line);
    expect([buffer.start, buffer.head, buffer.size]).toEqual([0, 12, 12]);
    buffer.trim(4);
    expect([buffer.start, buffer.size, text(buffer.at(4))]).toEqual([4, 8, "0004"]);
    buffer.trim(buffer.head);
    expect([buffer.start, buffer.size]).toEqual([7, 5]);
    expect(buffer.bytesAfter(10)).toBe(buffer.at(10).bytes.length + buffer.at(11).bytes.length);
  });

  it("serves from itself what it holds all of: the last N lines, the lines since a time, the whole log while it has it", () => {
    const whole = new LogBuffer(new LogMemory(1 << 20), 10, lines(6), true);
    expect(whole.startFor(undefined, undefined)).toBe(0);
    expect(whole.startFor(100, undefined)).toBe(0);
    expect(whole.startFor(2, undefined)).toBe(4);
    expect(whole.startFor(0, undefined)).toBe(6);
    expect(whole.startFor(undefined, T0 + 250_000_000n)).toBe(3);
    expect(whole.startFor(5, T0 + 250_000_000n)).toBe(3);

    // Started from the tail of a longer log: from just after its first line's time.
    const tail = new LogBuffer(new LogMemory(1 << 20), 10, lines(4, 5), false);
    expect(tail.startFor(undefined, undefined)).toBeUndefined();
    expect(tail.startFor(5, undefined)).toBeUndefined();
    expect(tail.startFor(4, undefined)).toBe(0);
    expect(tail.startFor(undefined, T0 + 5n * SECOND)).toBeUndefined();
    expect(tail.startFor(undefined, T0 + 5n * SECOND + 1n)).toBe(1);
    // Once a line is let go, the buffer holds the log only from after it.
    for (const line of lines(8, 10)) tail.push(line);
    tail.trim(tail.head);
    expect(tail.start).toBe(2);
    expect(tail.startFor(undefined, T0 + 5n * SECOND + 100_000_000n)).toBeUndefined();
    expect(tail.startFor(undefined, T0 + 5n * SECOND + 100_000_001n)).toBe(2);
    for (const line of lines(5, 20)) whole.push(line);
    whole.trim(whole.head);
    expect(whole.startFor(undefined, undefined)).toBeUndefined();
  });

  it("the isolate's budget: the buffer holding the most gives up its oldest line first", () => {
    const size = lines(1)[0]!.bytes.length;
    const memory = new LogMemory(10 * size);
    const a = new LogBuffer(memory, 1000, [], true);
    const b = new LogBuffer(memory, 1000, [], true);
    for (const line of lines(8)) a.push(line);
    for (const line of lines(6, 3)) b.push(line);
    // b's pushes took a down to its size, then b gave up its own oldest.
    expect([memory.bytes, a.size, b.size, a.start, b.start]).toEqual([10 * size, 5, 5, 3, 1]);
    expect(a.startFor(undefined, undefined)).toBeUndefined();
    a.release();
    expect(memory.bytes).toBe(b.bytes);
  });
});
