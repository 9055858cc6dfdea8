import { describe, expect, it, vi } from "vitest";
import { FakeClock } from "../hub/clock.fake.ts";
import type { Upstream } from "../upstream.ts";
import { LogMemory, type LogBuffer } from "./buffer.ts";
import { MAX_LINE_BYTES } from "../k8s/log-lines.ts";
import type { LogOptions } from "../k8s/log-options.ts";
import { LogSource, PROBE_BYTES } from "./source.ts";

const encoder = new TextEncoder();

/** Line `i` of the log: at second `i / 3` (three lines share each timestamp), saying `line i`. */
const stamped = (i: number) => `2027-01-15T08:${String(Math.floor(i / 180)).padStart(2, "0")}:${String(Math.floor(i / 3) % 60).padStart(2, "0")}.25Z line ${i}\n`;

/**
 * A container's log as the API server serves it with timestamps: a read of its last `tailLines`
 * (up to `limitBytes`), or a follow from `sinceTime`'s second on, open until the test ends it.
 */
class FakeLog implements Upstream {
  readonly cluster = "default";
  readonly lines: string[] = [];
  readonly follows: Array<{ since: string | null; controller: ReadableStreamDefaultController<Uint8Array>; open: boolean }> = [];

  write(n: number): void {
    for (let k = 0; k < n; k++) {
      const line = stamped(this.lines.length);
      this.lines.push(line);
      for (const follow of this.follows) if (follow.open) follow.controller.enqueue(encoder.encode(line));
    }
  }

  async fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
    const query = new URL(pathAndQuery, "http://upstream").searchParams;
    if (query.get("follow") === "true") {
      const since = query.get("sinceTime");
      const from = since === null ? 0 : this.lines.findIndex((l) => l.slice(0, 19) >= since.slice(0, 19));
      const lines = from < 0 ? [] : this.lines.slice(from);
      const follows = this.follows;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const follow = { since, controller, open: true };
          follows.push(follow);
          for (const line of lines) controller.enqueue(encoder.encode(line));
          init?.signal?.addEventListener("abort", () => {
            follow.open = false;
            controller.error(new Error("aborted"));
          });
        },
      });
      return new Response(body);
    }
    const tail = Number(query.get("tailLines") ?? this.lines.length);
    const text = this.lines.slice(Math.max(0, this.lines.length - tail)).join("");
    return new Response(text.slice(0, Number(query.get("limitBytes") ?? text.length)));
  }

  end(): void {
    for (const follow of this.follows) if (follow.open) follow.controller.close();
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const text = (buffer: LogBuffer) => Array.from({ length: buffer.size }, (_, k) => new TextDecoder().decode(buffer.at(buffer.start + k).bytes)).join("");

/** The tests' `LOG_UPSTREAM_TIMEOUT_SECONDS`. */
const TIMEOUT_MS = 10_000;

function source(upstream: Upstream, clock: FakeClock, maxLines = 1000) {
  const events: string[] = [];
  const logSource = new LogSource(
    { cluster: "default", namespace: "a", pod: "p", container: "main", previous: false },
    upstream,
    TIMEOUT_MS,
    { memory: new LogMemory(1 << 20), maxLines },
    { published: () => events.push("published"), ended: (_, why) => events.push(`ended: ${why}`) },
    { requested: (kind) => events.push(kind), read: () => undefined },
    () => undefined,
    clock,
  );
  return { logSource, events };
}

describe("LogSource", () => {
  it("starts from a probe of the log and a stream from the second of its last line, joined without a gap or a duplicate", async () => {
    const upstream = new FakeLog();
    upstream.write(40);
    const { logSource, events } = source(upstream, new FakeClock(), 10);
    const opened = await logSource.open();
    expect(opened.ok).toBe(true);
    const buffer = opened.ok ? opened.value : (undefined as never);
    upstream.write(5);
    await settle();
    expect(upstream.follows.map((f) => f.since)).toEqual(["2027-01-15T08:00:13Z"]);
    expect(text(buffer)).toBe(upstream.lines.slice(30).join(""));
    expect(buffer.startFor(10, undefined)).toBe(buffer.head - 10);
    expect(buffer.startFor(undefined, undefined)).toBeUndefined();
    expect(events.slice(0, 2)).toEqual(["history", "follow"]);
  });

  it("a log shorter than the buffer is held whole; renewed, the stream goes on where it left off", async () => {
    const upstream = new FakeLog();
    upstream.write(7);
    const clock = new FakeClock();
    const { logSource, events } = source(upstream, clock);
    const opened = await logSource.open();
    const buffer = opened.ok ? opened.value : (undefined as never);
    expect(buffer.startFor(undefined, undefined)).toBe(0);
    upstream.write(4);
    await settle();
    clock.advance(1000);
    logSource.renew(500);
    upstream.write(6);
    await settle();
    expect(upstream.follows.map((f) => [f.since, f.open])).toEqual([
      ["2027-01-15T08:00:02Z", false],
      ["2027-01-15T08:00:03Z", true],
    ]);
    expect(text(buffer)).toBe(upstream.lines.join(""));
    upstream.end();
    await settle();
    expect(buffer.ended).toBe(true);
    expect(events.at(-1)).toBe("ended: the container's log ended");
    expect(logSource.streaming).toBe(false);
  });

  it("an upstream that refuses the log: its Status, and no stream", async () => {
    const upstream = new FakeLog();
    upstream.fetch = async () => new Response(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message: 'pods "p" not found', reason: "NotFound", code: 404 }), { status: 404 });
    const { logSource } = source(upstream, new FakeClock());
    const opened = await logSource.open();
    expect(opened).toMatchObject({ ok: false, status: { code: 404, message: 'pods "p" not found' } });
    expect(logSource.streaming).toBe(false);
  });
});

/**
 * An upstream that answers as a broken or hostile one may: a body of `bytes` bytes of one line
 * with no newline (whatever `limitBytes` asked), in chunks of `chunk`, then nothing, its
 * connection held until the reader leaves; or, with `silent`, no answer at all. It says what it
 * was asked and how much of each body was taken.
 */
class HostileLog implements Upstream {
  readonly cluster = "default";
  readonly asked: Array<{ query: URLSearchParams; taken: number; cancelled: boolean }> = [];
  readonly #bytes: number;
  readonly #silent: boolean;

  constructor({ bytes = 0, silent = false }: { bytes?: number; silent?: boolean }) {
    this.#bytes = bytes;
    this.#silent = silent;
  }

  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
    const asked = { query: new URL(pathAndQuery, "http://upstream").searchParams, taken: 0, cancelled: false };
    this.asked.push(asked);
    const signal = init?.signal;
    if (this.#silent) return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted"))));
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    let left = this.#bytes;
    const body = new ReadableStream<Uint8Array>(
      {
        // An abort of the request ends its body, as fetch's does.
        start(controller) {
          signal?.addEventListener("abort", () => {
            asked.cancelled = true;
            controller.error(new Error("aborted"));
          });
        },
        pull(controller) {
          if (left <= 0) return new Promise(() => undefined); // held: nothing more, never the end
          const piece = chunk.subarray(0, Math.min(left, chunk.length));
          left -= piece.length;
          asked.taken += piece.length;
          controller.enqueue(piece);
        },
        cancel() {
          asked.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return Promise.resolve(new Response(body));
  }
}

/** Resolves once `promise` has, letting `clock` move `ms` meanwhile (its timers fire as they come due). */
async function within<T>(promise: Promise<T>, clock: FakeClock, ms: number): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  void promise.then(done, done);
  for (let waited = 0; !settled && waited <= ms; waited += 100) {
    await settle();
    clock.advance(100);
  }
  return promise;
}

describe("LogSource, held to its own bounds", () => {
  it("reads a probe to 1 MiB, whatever limitBytes the upstream ignored, and cancels the rest", async () => {
    const upstream = new HostileLog({ bytes: 64 * 1024 * 1024 });
    const clock = new FakeClock();
    const { logSource } = source(upstream, clock, 10);
    const opened = await logSource.open();
    expect(opened.ok).toBe(true);
    const [probe, follow] = upstream.asked;
    expect(probe?.query.get("limitBytes")).toBe(String(PROBE_BYTES));
    expect(probe?.cancelled).toBe(true);
    expect(probe?.taken).toBeLessThanOrEqual(PROBE_BYTES + 64 * 1024);
    // One line, unfinished: the stream brings it, from the log's start, so the buffer holds the log whole.
    expect(opened.ok && opened.value.startFor(undefined, undefined)).toBe(0);
    expect(follow?.query.get("follow")).toBe("true");
    expect(follow?.query.get("sinceTime")).toBeNull();
    logSource.stop();
  });

  it("cuts a stream's line into 64 KiB fragments, however the upstream sends it", async () => {
    const upstream = new HostileLog({ bytes: 2 * 1024 * 1024 });
    const clock = new FakeClock();
    const { logSource } = source(upstream, clock, 10);
    const opened = await logSource.open();
    const buffer = opened.ok ? opened.value : (undefined as never);
    await vi.waitFor(() => expect(upstream.asked[1]?.taken).toBe(2 * 1024 * 1024));
    const sizes = Array.from({ length: buffer.size }, (_, k) => buffer.at(buffer.start + k).bytes.length);
    expect(Math.max(...sizes)).toBe(MAX_LINE_BYTES);
    logSource.stop();
    expect(upstream.asked[1]?.cancelled).toBe(true);
  });

  it("a probe held open: what it had at the timeout is the buffer's start", async () => {
    const upstream = new FakeLog();
    upstream.write(3);
    const held = new HostileLog({});
    const clock = new FakeClock();
    // The probe's lines, then nothing, its connection held; the follow is the log's.
    const fetch = upstream.fetch.bind(upstream);
    upstream.fetch = async (path, init) => {
      if (new URL(path, "http://upstream").searchParams.get("follow") === "true") return fetch(path, init);
      const body = new ReadableStream<Uint8Array>({
        start: (c) => c.enqueue(encoder.encode(upstream.lines.join(""))),
        pull: () => new Promise(() => undefined),
        cancel: () => void held.asked.push({ query: new URLSearchParams(), taken: 0, cancelled: true }),
      });
      return new Response(body);
    };
    const { logSource } = source(upstream, clock);
    const opened = await within(logSource.open(), clock, TIMEOUT_MS);
    const buffer = opened.ok ? opened.value : (undefined as never);
    expect(held.asked.map((a) => a.cancelled)).toEqual([true]);
    upstream.write(2);
    await settle();
    expect(upstream.follows.map((f) => f.since)).toEqual(["2027-01-15T08:00:00Z"]);
    expect(text(buffer)).toBe(upstream.lines.join(""));
  });

  it("an upstream that does not answer: a 504 for the probe and for a history, and the stream ends", async () => {
    const clock = new FakeClock();
    const silent = new HostileLog({ silent: true });
    const { logSource } = source(silent, clock);
    const opened = await within(logSource.open(), clock, TIMEOUT_MS);
    expect(opened).toMatchObject({ ok: false, status: { code: 504, reason: "Timeout", message: expect.stringContaining("LOG_UPSTREAM_TIMEOUT_SECONDS") } });
    const history = await within(logSource.history({ timestamps: false } as LogOptions), clock, TIMEOUT_MS);
    expect(history).toMatchObject({ ok: false, status: { code: 504 } });

    // A follow that never answers ends the stream it was to be, saying why.
    const upstream = new FakeLog();
    upstream.write(3);
    const fetch = upstream.fetch.bind(upstream);
    upstream.fetch = (path, init) => (new URL(path, "http://upstream").searchParams.get("follow") === "true" ? silent.fetch(path, init) : fetch(path, init));
    const second = source(upstream, clock);
    const buffer = await second.logSource.open();
    await within(
      new Promise<void>((resolve) => {
        const check = () => (second.events.some((e) => e.startsWith("ended")) ? resolve() : setTimeout(check, 0));
        check();
      }),
      clock,
      TIMEOUT_MS,
    );
    expect(buffer.ok && buffer.value.ended).toBe(true);
    expect(second.events.at(-1)).toContain("did not answer the log stream within 10 s (LOG_UPSTREAM_TIMEOUT_SECONDS)");
  });

  it("a history that stops sending fails its reader after the timeout, and a reader that leaves cancels it", async () => {
    const clock = new FakeClock();
    const upstream = new HostileLog({ bytes: 100 });
    const { logSource } = source(upstream, clock);
    const history = await logSource.history({ timestamps: false } as LogOptions);
    const reader = (history.ok ? history.value : (undefined as never)).getReader();
    expect((await reader.read()).value?.length).toBe(100);
    await expect(within(reader.read(), clock, TIMEOUT_MS)).rejects.toThrow("sent nothing for 10 s");
    expect(upstream.asked[0]?.cancelled).toBe(true);

    const again = await logSource.history({ timestamps: false } as LogOptions);
    const left = (again.ok ? again.value : (undefined as never)).getReader();
    await left.read();
    void left.read().catch(() => undefined);
    await left.cancel();
    expect(upstream.asked[1]?.cancelled).toBe(true);
  });
});
