import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LINGER_MS, MAX_MESSAGE, Outbox } from "./outbox.ts";

/** Lines as one piece, as a relay socket's own lines come. */
const push = (outbox: Outbox, text: string, alone = false) => outbox.push([text], text.length, alone);

describe("a relay socket's outbox", () => {
  let sent: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
  });
  afterEach(() => vi.useRealTimers());

  it("sends what its watches have ready within LINGER_MS of the first as one message", () => {
    const outbox = new Outbox((text) => sent.push(text), true);
    push(outbox, "a1\n");
    vi.advanceTimersByTime(LINGER_MS - 1);
    push(outbox, "b1\n");
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(["a1\nb1\n"]);
    // What comes after waits for a message of its own.
    push(outbox, "a2\n");
    vi.advanceTimersByTime(LINGER_MS);
    expect(sent).toEqual(["a1\nb1\n", "a2\n"]);
  });

  it("keeps a coalesced message within MAX_MESSAGE: what would pass it goes in the next", () => {
    const outbox = new Outbox((text) => sent.push(text), true);
    const third = "x".repeat(MAX_MESSAGE / 3 - 1).concat("\n");
    for (let i = 0; i < 4; i++) push(outbox, third);
    // Three fit; the fourth would pass the bound, so the three go at once and it waits.
    expect(sent).toEqual([third.repeat(3)]);
    vi.advanceTimersByTime(LINGER_MS);
    expect(sent).toEqual([third.repeat(3), third]);
    expect(sent.every((text) => text.length <= MAX_MESSAGE)).toBe(true);
  });

  it("joins a hub message's pieces once, with what else is ready, into one message", () => {
    const outbox = new Outbox((text) => sent.push(text), true);
    outbox.push(['{"id":"a",', '"type":"ADDED"}\n', '{"id":"a",', '"type":"DELETED"}\n'], 54);
    push(outbox, '{"id":"b","type":"ADDED"}\n');
    vi.advanceTimersByTime(LINGER_MS);
    expect(sent).toEqual(['{"id":"a","type":"ADDED"}\n{"id":"a","type":"DELETED"}\n{"id":"b","type":"ADDED"}\n']);
  });

  it("sends a watch's page alone, after what was pending, and every line alone on a socket that did not ask for batches", () => {
    const batched = new Outbox((text) => sent.push(text), true);
    push(batched, "a1\n");
    push(batched, "page\n", true);
    expect(sent).toEqual(["a1\n", "page\n"]);
    sent = [];
    const plain = new Outbox((text) => sent.push(text), false);
    push(plain, "a1\n");
    push(plain, "b1\n");
    expect(sent).toEqual(["a1\n", "b1\n"]);
  });
});
