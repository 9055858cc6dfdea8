import { describe, expect, it } from "vitest";
import { SharedGzip } from "./shared-gzip.ts";

const encoder = new TextEncoder();

/** A body of `pieces` (each its own chunk), counting how often it was made. */
function body(pieces: string[]) {
  const seen = { made: 0 };
  const make = () => {
    seen.made++;
    let i = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i === pieces.length) return controller.close();
        controller.enqueue(encoder.encode(pieces[i++]));
      },
    });
  };
  return { make, seen, text: pieces.join("") };
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** What a gzip reader makes of `bytes`. */
function gunzip(bytes: Uint8Array): Promise<string> {
  return new Response(new Response(bytes).body!.pipeThrough(new DecompressionStream("gzip"))).text();
}

/** Text that compresses poorly (to about three quarters): `n` random base64 characters. */
function noise(n: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let out = "";
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(Math.random() * 64)];
  return out;
}

describe("SharedGzip", () => {
  it("compresses a body once for reads under way together and for later ones, each one gzip member of exactly the body", async () => {
    const gzip = new SharedGzip(1 << 20, 1 << 20);
    const list = body(['{"items":[', '{"a":1}', ",", '{"b":2}', "]}\n"]);
    const first = gzip.open("k", list.make);
    const second = gzip.open("k", list.make);
    expect([first.shared, second.shared]).toEqual([false, true]);
    const [a, b] = await Promise.all([bytesOf(first.body), bytesOf(second.body)]);
    expect(a).toEqual(b);
    expect(await gunzip(a)).toBe(list.text);
    const later = gzip.open("k", list.make);
    expect(later.shared).toBe(true);
    expect(await gunzip(await bytesOf(later.body))).toBe(list.text);
    expect(list.seen.made).toBe(1);
    expect(gzip.counts).toEqual({ compressed: 1, shared: 2 });
    // Another key is another body.
    const other = body(["[]"]);
    expect(gzip.open("j", other.make).shared).toBe(false);
  });

  it("holds no body over entryMax for later reads, and keeps the isolate's bodies to the budget, least recently read first", async () => {
    const gzip = new SharedGzip(30_000, 12_000);
    const big = body([noise(10_000), noise(10_000)]);
    const read = gzip.open("big", big.make);
    expect(await gunzip(await bytesOf(read.body))).toBe(big.text);
    expect(gzip.open("big", big.make).shared).toBe(false);
    expect(big.seen.made).toBe(2);

    const gzip2 = new SharedGzip(15_000, 12_000);
    for (const key of ["a", "b", "c"]) {
      const small = body([noise(8_000)]);
      await bytesOf(gzip2.open(key, small.make).body);
    }
    expect(gzip2.heldBytes).toBeLessThanOrEqual(20_000);
    // The oldest went; the newest is held.
    expect(gzip2.open("c", () => body(["x"]).make()).shared).toBe(true);
    expect(gzip2.open("a", () => body(["x"]).make()).shared).toBe(false);
  });

  it("a body past entryMax is shared by the reads already on it, the one ahead waiting for the slowest", async () => {
    const gzip = new SharedGzip(1 << 20, 4_000);
    const pieces = Array.from({ length: 8 }, () => noise(4_000));
    const list = body(pieces);
    const fast = gzip.open("k", list.make);
    const slow = gzip.open("k", list.make);
    const fastBytes = bytesOf(fast.body);
    const slowReader = slow.body.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { value, done } = await slowReader.read();
      if (done) break;
      chunks.push(value);
    }
    const slowBytes = await bytesOf(new Blob(chunks).stream());
    expect(await gunzip(slowBytes)).toBe(list.text);
    expect(await fastBytes).toEqual(slowBytes);
    expect(list.seen.made).toBe(1);
  });

  it("a body its last reader leaves unfinished is not shared: the next read compresses it again", async () => {
    const gzip = new SharedGzip(1 << 20, 1 << 20);
    const list = body([noise(70_000), noise(70_000), noise(70_000)]);
    const reader = gzip.open("k", list.make).body.getReader();
    await reader.read();
    await reader.cancel();
    const again = gzip.open("k", list.make);
    expect(again.shared).toBe(false);
    expect(await gunzip(await bytesOf(again.body))).toBe(list.text);
    expect(list.seen.made).toBe(2);
  });

  it("a body that fails fails every read of it, and the next read compresses it again", async () => {
    const gzip = new SharedGzip(1 << 20, 1 << 20);
    const failing = () =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.error(new Error("the list's snapshot is gone"));
        },
      });
    const a = gzip.open("k", failing);
    const b = gzip.open("k", failing);
    await expect(bytesOf(a.body)).rejects.toThrow("snapshot is gone");
    await expect(bytesOf(b.body)).rejects.toThrow("snapshot is gone");
    expect(gzip.open("k", failing).shared).toBe(false);
  });
});
