import { describe, expect, it } from "vitest";
import { FakeClock } from "../hub/clock.fake.ts";
import type { Upstream } from "../upstream.ts";
import { LogMemory, type LogBuffer } from "./buffer.ts";
import { LogSource } from "./source.ts";

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

function source(upstream: FakeLog, clock: FakeClock, maxLines = 1000) {
  const events: string[] = [];
  const logSource = new LogSource(
    { cluster: "default", namespace: "a", pod: "p", container: "main", previous: false },
    upstream,
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
