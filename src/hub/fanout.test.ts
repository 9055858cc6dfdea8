import { describe, expect, it } from "vitest";
import { Fanout, SLICE, TURN_BYTES, TURN_MESSAGES, type Timers } from "./fanout.ts";
import { type LineBatch, Subscriber, type CloseReason, type Sink, type SubscriberOptions } from "./subscriber.ts";
import { EventWindow } from "./window.ts";

/** Timers run by hand: `run()` fires what is due, in order, as the event loop would. */
class ManualTimers implements Timers {
  #next = 1;
  readonly due = new Map<number, { run: () => void; ms: number }>();
  set(run: () => void, ms: number): unknown {
    const id = this.#next++;
    this.due.set(id, { run, ms });
    return id;
  }
  clear(handle: unknown): void {
    this.due.delete(handle as number);
  }
  /** Fire the timers due within `ms` (those set meanwhile wait for the next call). */
  run(ms = 0): number {
    const ready = [...this.due].filter(([, t]) => t.ms <= ms);
    for (const [id, t] of ready) {
      this.due.delete(id);
      t.run();
    }
    return ready.length;
  }
}

/** A sink that records what it is sent, one message per line (a per-event WebSocket). */
class RecordingSink implements Sink {
  readonly transport = "websocket" as const;
  readonly batches: LineBatch[] = [];
  backlogBytes = 0;
  closedWith: CloseReason | undefined;
  get closed(): boolean {
    return this.closedWith !== undefined;
  }
  get lines(): string[] {
    return this.batches.flatMap((b) => [...b.lines]);
  }
  send(batch: LineBatch): number {
    this.batches.push(batch);
    return batch.lines.length;
  }
  alive(): boolean {
    return !this.closed;
  }
  backlog(): number {
    return this.backlogBytes;
  }
  close(reason: CloseReason): void {
    this.closedWith = reason;
  }
}

const options: SubscriberOptions = { bookmarks: false, deadline: undefined };
const line = (rv: number, size = 100) => `{"rv":${rv},"pad":"${"x".repeat(size)}"}\n`;

function setup(events: number, size = 100, budget = 4 * 1024 * 1024) {
  const window = new EventWindow({ maxEvents: 100_000, maxBytes: 1 << 30 });
  window.reset(0);
  for (let rv = 1; rv <= events; rv++) window.append({ rv, line: line(rv, size) });
  const timers = new ManualTimers();
  const fanout = new Fanout({ window, bookmark: (rv) => `{"type":"BOOKMARK","rv":${rv}}\n` }, { budget }, () => undefined, timers);
  const subscribe = (position: number, opts: Partial<SubscriberOptions> = {}) => {
    const sink = new RecordingSink();
    const subscriber = new Subscriber(sink, position, { ...options, ...opts });
    fanout.attach(subscriber);
    return { sink, subscriber };
  };
  return { window, timers, fanout, subscribe };
}

describe("Fanout", () => {
  it("sends each subscriber what follows its position, one slice shared by everyone at that position", () => {
    const { timers, subscribe } = setup(10);
    const a = subscribe(0);
    const b = subscribe(0);
    const c = subscribe(6);
    timers.run();
    expect(a.sink.lines).toEqual(Array.from({ length: 10 }, (_, i) => line(i + 1)));
    expect(c.sink.lines).toEqual([7, 8, 9, 10].map((rv) => line(rv)));
    // Built once: the same batch object (so joined and encoded once) for both.
    expect(a.sink.batches[0]).toBe(b.sink.batches[0]);
    expect([a.subscriber.position, c.subscriber.position]).toEqual([10, 10]);
  });

  it("yields after a turn's messages and goes on where it stopped, round-robin", () => {
    const { timers, subscribe } = setup(1);
    const subs = Array.from({ length: TURN_MESSAGES + 10 }, () => subscribe(0));
    expect(timers.run()).toBe(1);
    const served = subs.filter((s) => s.sink.batches.length > 0).length;
    expect(served).toBe(TURN_MESSAGES);
    // The rest in the next turn, which the first scheduled for as soon as the hub yields.
    expect(timers.run()).toBe(1);
    expect(subs.every((s) => s.sink.lines.length === 1)).toBe(true);
    expect(timers.due.size).toBe(0);
  });

  it("yields after a turn's bytes too: big batches cannot make one turn hold the hub", () => {
    // Each subscriber is sent one slice (at most SLICE) a turn; TURN_BYTES / SLICE of them fill it.
    const { timers, subscribe } = setup(64, SLICE / 8);
    const subs = Array.from({ length: 2 * (TURN_BYTES / SLICE) }, () => subscribe(0));
    timers.run();
    expect(subs.filter((s) => s.sink.batches.length > 0).length).toBeLessThanOrEqual(TURN_BYTES / SLICE + 1);
    expect(timers.due.size).toBe(1);
  });

  it("a long replay cannot starve a subscriber behind it in the queue", () => {
    // Each event is half a slice: the replay takes many slices, the live one needs one.
    const { timers, window, subscribe } = setup(4 * TURN_MESSAGES, SLICE / 2);
    const replaying = subscribe(0);
    const live = subscribe(window.head - 1);
    timers.run();
    expect(live.sink.lines).toEqual([line(window.head, SLICE / 2)]);
    expect(replaying.subscriber.position).toBeLessThan(window.head);
  });

  it("publish sends new events at once, in the same turn", () => {
    const { timers, window, fanout, subscribe } = setup(2);
    const a = subscribe(0);
    timers.run();
    window.append({ rv: 3, line: line(3) });
    fanout.publish();
    expect(a.sink.lines.at(-1)).toBe(line(3));
  });

  it("holds a subscriber with too much unacknowledged, sends to the others, and goes on when it acknowledges", () => {
    const { timers, window, fanout, subscribe } = setup(1);
    const slow = subscribe(0);
    const fast = subscribe(0);
    timers.run();
    slow.sink.backlogBytes = SLICE * 2 + 1;
    window.append({ rv: 2, line: line(2) });
    fanout.publish();
    expect(fast.sink.lines).toHaveLength(2);
    expect(slow.sink.lines).toHaveLength(1);
    slow.sink.backlogBytes = 0;
    fanout.wake();
    timers.run();
    expect(slow.sink.lines).toEqual([line(1), line(2)]);
  });

  it("cuts off a subscriber whose backlog and unsent window pass its budget, and only it", () => {
    const { timers, window, fanout, subscribe } = setup(1, 100, 64 * 1024);
    const slow = subscribe(0);
    const fast = subscribe(0);
    timers.run();
    slow.sink.backlogBytes = 40 * 1024;
    for (let rv = 2; rv < 300; rv++) window.append({ rv, line: line(rv) });
    fanout.publish();
    expect(slow.sink.closedWith?.code).toBe(4008);
    expect(fast.sink.closed).toBe(false);
    expect(fast.subscriber.position).toBe(299);
  });

  it("cuts off a subscriber that fell out of the window", () => {
    const { timers, window, subscribe } = setup(0);
    window.reset(50); // history now begins after 50
    window.append({ rv: 51, line: line(51) });
    const old = subscribe(10);
    timers.run();
    expect(old.sink.closedWith?.reason).toContain("fell out of the replay window");
  });

  it("a resume that catches up gets one bookmark at the head", () => {
    const { timers, window, subscribe } = setup(3);
    window.advance(9);
    const resumed = subscribe(1, { bookmarks: true });
    timers.run();
    expect(resumed.sink.lines).toEqual([line(2), line(3), `{"type":"BOOKMARK","rv":9}\n`]);
    expect(resumed.subscriber.position).toBe(9);
  });

  it("wake does nothing when nobody is waiting on its backlog", () => {
    const { timers, fanout, subscribe } = setup(1);
    subscribe(0);
    timers.run();
    fanout.wake();
    expect(timers.due.size).toBe(0);
  });
});
