import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LINGER_MS, MAX_MESSAGE, Outbox } from "./outbox.ts";

describe("a relay socket's outbox", () => {
  let sent: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
  });
  afterEach(() => vi.useRealTimers());

  it("sends what its watches have ready within LINGER_MS of the first as one message", () => {
    const outbox = new Outbox((text) => sent.push(text), true);
    outbox.push("a1\n");
    vi.advanceTimersByTime(LINGER_MS - 1);
    outbox.push("b1\n");
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(["a1\nb1\n"]);
    // What comes after waits for a message of its own.
    outbox.push("a2\n");
    vi.advanceTimersByTime(LINGER_MS);
    expect(sent).toEqual(["a1\nb1\n", "a2\n"]);
  });

  it("keeps a coalesced message within MAX_MESSAGE: what would pass it goes in the next", () => {
    const outbox = new Outbox((text) => sent.push(text), true);
    const third = "x".repeat(MAX_MESSAGE / 3 - 1).concat("\n");
    for (let i = 0; i < 4; i++) outbox.push(third);
    // Three fit; the fourth would pass the bound, so the three go at once and it waits.
    expect(sent).toEqual([third.repeat(3)]);
    vi.advanceTimersByTime(LINGER_MS);
    expect(sent).toEqual([third.repeat(3), third]);
    expect(sent.every((text) => text.length <= MAX_MESSAGE)).toBe(true);
  });

  it("sends a watch's page alone, after what was pending, and every line alone on a socket that did not ask for batches", () => {
    const batched = new Outbox((text) => sent.push(text), true);
    batched.push("a1\n");
    batched.push("page\n", true);
    expect(sent).toEqual(["a1\n", "page\n"]);
    sent = [];
    const plain = new Outbox((text) => sent.push(text), false);
    plain.push("a1\n");
    plain.push("b1\n");
    expect(sent).toEqual(["a1\n", "b1\n"]);
  });
});
