/**
 * The test kit's readers: what the inbox hands out and in what order, and that a wait that
 * fails says what it awaited and what arrived instead; lines of a body split across chunks.
 */
import { describe, expect, it } from "vitest";
import { Inbox } from "../kit/inbox.ts";
import { LineReader, WatchReader } from "../kit/lines.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("Inbox", () => {
  it("hands out items in order as they are pushed, and up to the first match", async () => {
    const inbox = new Inbox<number>();
    const taken = inbox.take(2, "two numbers");
    inbox.push(1);
    inbox.push(2);
    inbox.push(3);
    expect(await taken).toEqual([1, 2]);
    expect(inbox.size).toBe(1);
    const until = inbox.until((n) => n === 5, "five");
    inbox.push(4);
    inbox.push(5);
    inbox.push(6);
    expect(await until).toEqual([3, 4, 5]);
    expect(inbox.drain()).toEqual([6]);
  });

  it("a wait that times out names what it awaited and what arrived", async () => {
    const inbox = new Inbox<{ type: string }>();
    inbox.push({ type: "ADDED" });
    await expect(inbox.take(2, "two events", 20)).rejects.toThrow('timed out after 20 ms waiting for two events: 1 of 2 here; 1 arrived in all, the latest:\n{"type":"ADDED"}');
    await expect(new Inbox<string>().next("a line", 20)).rejects.toThrow("timed out after 20 ms waiting for a line: 0 of 1 here; nothing arrived");
  });

  it("an end fails the waits for more, and is what closed() returns", async () => {
    const inbox = new Inbox<string>();
    const next = inbox.next("the CLOSED");
    inbox.push("BOOKMARK");
    inbox.end({ code: 4401, reason: "token expired" });
    expect(await next).toBe("BOOKMARK");
    await expect(inbox.until((s) => s === "CLOSED", "the CLOSED")).rejects.toThrow('the stream ended (code 4401, reason "token expired") while waiting for the CLOSED');
    inbox.end({ code: 1000 });
    expect(await inbox.closed()).toEqual({ code: 4401, reason: "token expired" });
  });
});

describe("LineReader", () => {
  it("splits a body's chunks into lines wherever the chunks break, and reports a cut last line", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of ['{"type":"ADD', 'ED"}\n{"type":"MOD', 'IFIED"}\n\n{"type":"DEL']) controller.enqueue(bytes(chunk));
        controller.close();
      },
    });
    const reader = new WatchReader(new Response(body, { status: 200 }));
    expect(reader.status).toBe(200);
    expect((await reader.until((e) => e.type === "MODIFIED")).map((e) => e.type)).toEqual(["ADDED", "MODIFIED"]);
    expect(await reader.ended).toEqual({ pending: '{"type":"DEL'.length });
    expect(reader.lines).toEqual(['{"type":"ADDED"}', '{"type":"MODIFIED"}']);
    await expect(reader.nextLine()).rejects.toThrow("the stream ended (cleanly) while waiting for a line");
  });

  it("reads a Node stream, and close() runs the stop it was given", async () => {
    let stopped = false;
    async function* output() {
      yield "one\ntw";
      yield bytes("o\n");
    }
    const reader = new LineReader(output(), () => (stopped = true));
    expect(await reader.untilLine((l) => l === "two", "two")).toEqual(["one", "two"]);
    expect(reader.unread).toBe(0);
    reader.close();
    expect(stopped).toBe(true);
  });
});
