import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.fake.ts";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { Collection } from "./collection.ts";
import { Fanout, PACE_MS, SLICE, TURN_BYTES, TURN_MESSAGES, type InitialSliceBatch } from "./fanout.ts";
import { StateEvents, type InitialEvents } from "./initial.ts";
import { LineMemory, SliceCache } from "./memory.ts";
import { SnapshotRegistry } from "./snapshots.ts";
import { HubStorage } from "./storage.ts";
import { type LineBatch, Subscriber, type CloseReason, type Sink, type SubscriberOptions } from "./subscriber.ts";
import { EventWindow, type WindowEvent } from "./window.ts";

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

const options: SubscriberOptions = { bookmarks: false, timeoutMs: undefined };
const line = (rv: number, size = 100) => `{"rv":${rv},"pad":"${"x".repeat(size)}"}\n`;

/** A window over its own storage, with an `append` that commits one event as the feed does. */
function storedWindow() {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const window = new EventWindow(() => storage.sql, { maxEvents: 100_000, maxBytes: 1 << 30 }, new LineMemory(1 << 30).tail());
  const append = (event: WindowEvent) => window.committed(storage.transaction(() => window.write([event])));
  return { storage, window: Object.assign(window, { append }) };
}

function setup(events: number, size = 100, budget = 4 * 1024 * 1024) {
  const { storage, window } = storedWindow();
  window.reset(0);
  for (let rv = 1; rv <= events; rv++) window.append({ rv, line: line(rv, size) });
  const clock = new FakeClock();
  const slices = new SliceCache<InitialSliceBatch>(1 << 30);
  const fanout = new Fanout({ window, bookmark: (rv) => `{"type":"BOOKMARK","rv":${rv}}\n` }, { budget, slices }, () => undefined, clock);
  const subscribe = (position: number, opts: Partial<SubscriberOptions> = {}, initial?: InitialEvents) => {
    const sink = new RecordingSink();
    const subscriber = new Subscriber(sink, position, { ...options, ...opts }, initial);
    fanout.attach(subscriber);
    return { sink, subscriber };
  };
  return { storage, window, clock, fanout, subscribe };
}

describe("Fanout", () => {
  it("sends each subscriber what follows its position, one slice shared by everyone at that position", () => {
    const { clock, subscribe } = setup(10);
    const a = subscribe(0);
    const b = subscribe(0);
    const c = subscribe(6);
    clock.turn();
    expect(a.sink.lines).toEqual(Array.from({ length: 10 }, (_, i) => line(i + 1)));
    expect(c.sink.lines).toEqual([7, 8, 9, 10].map((rv) => line(rv)));
    // Built once: the same batch object (so joined and encoded once) for both.
    expect(a.sink.batches[0]).toBe(b.sink.batches[0]);
    expect([a.subscriber.position, c.subscriber.position]).toEqual([10, 10]);
  });

  it("yields after a turn's messages and goes on where it stopped, round-robin", () => {
    const { clock, subscribe } = setup(1);
    const subs = Array.from({ length: TURN_MESSAGES + 10 }, () => subscribe(0));
    expect(clock.turn()).toBe(1);
    const served = subs.filter((s) => s.sink.batches.length > 0).length;
    expect(served).toBe(TURN_MESSAGES);
    // The rest in the next turn, which the first scheduled for as soon as the hub yields.
    expect(clock.turn()).toBe(1);
    expect(subs.every((s) => s.sink.lines.length === 1)).toBe(true);
    expect(clock.pending.length).toBe(0);
  });

  it("yields after a turn's bytes too: big batches cannot make one turn hold the hub", () => {
    // Each subscriber is sent one slice (at most SLICE) a turn; TURN_BYTES / SLICE of them fill it.
    const { clock, subscribe } = setup(64, SLICE / 8);
    const subs = Array.from({ length: 2 * (TURN_BYTES / SLICE) }, () => subscribe(0));
    clock.turn();
    expect(subs.filter((s) => s.sink.batches.length > 0).length).toBeLessThanOrEqual(TURN_BYTES / SLICE + 1);
    expect(clock.pending.length).toBe(1);
  });

  it("a long replay cannot starve a subscriber behind it in the queue", () => {
    // Each event is half a slice: the replay takes many slices (four turns' bytes), the live one needs one.
    const { clock, window, subscribe } = setup((4 * TURN_BYTES) / (SLICE / 2), SLICE / 2);
    const replaying = subscribe(0);
    const live = subscribe(window.head - 1);
    clock.turn();
    expect(live.sink.lines).toEqual([line(window.head, SLICE / 2)]);
    expect(replaying.subscriber.position).toBeLessThan(window.head);
  });

  it("publish sends new events at once, in the same turn", () => {
    const { clock, window, fanout, subscribe } = setup(2);
    const a = subscribe(0);
    clock.turn();
    window.append({ rv: 3, line: line(3) });
    fanout.publish();
    expect(a.sink.lines.at(-1)).toBe(line(3));
  });

  it("sends a paced subscriber (a relay socket's link) its live events at most once per PACE_MS, what came meanwhile in one message; the others at once", () => {
    const { clock, window, fanout, subscribe } = setup(2);
    const paced = subscribe(0, { paceMs: PACE_MS });
    const plain = subscribe(0);
    clock.turn();
    // Its first send is not held: nothing was sent it before.
    expect(paced.sink.batches.map((b) => b.lines.length)).toEqual([2]);
    for (const rv of [3, 4, 5]) {
      clock.advance(PACE_MS / 4);
      window.append({ rv, line: line(rv) });
      fanout.publish();
    }
    expect(plain.sink.lines.slice(-3)).toEqual([3, 4, 5].map((rv) => line(rv)));
    expect(paced.sink.batches).toHaveLength(1);
    // Due again PACE_MS after its last send, with all three together.
    clock.advance(PACE_MS / 4 - 1);
    expect(paced.sink.batches).toHaveLength(1);
    clock.advance(1);
    expect(paced.sink.batches.map((b) => b.lines.length)).toEqual([2, 3]);
    expect(paced.subscriber.position).toBe(5);
    // Quiet for longer than its pace: the next event goes at once.
    clock.advance(2 * PACE_MS);
    window.append({ rv: 6, line: line(6) });
    fanout.publish();
    expect(paced.sink.lines.at(-1)).toBe(line(6));
  });

  it("does not pace a paced subscriber's replay: its slices go turn after turn until it reaches the head", () => {
    const { clock, subscribe } = setup(30, 20 * 1024);
    const paced = subscribe(0, { paceMs: PACE_MS });
    for (let i = 0; i < 3; i++) clock.turn();
    expect(paced.sink.batches.length).toBeGreaterThan(1);
    expect(paced.subscriber.position).toBe(30);
  });

  it("sends a paced subscriber at once, due or not, when a quarter of its in-flight bound is waiting for it", () => {
    // A budget of 256 KiB: 128 KiB in flight, so 32 KiB waiting is sent at once.
    const { clock, window, fanout, subscribe } = setup(1, 100, 256 * 1024);
    const paced = subscribe(0, { paceMs: PACE_MS });
    clock.turn();
    expect(paced.sink.batches).toHaveLength(1);
    window.append({ rv: 2, line: line(2, 16 * 1024) });
    fanout.publish();
    expect(paced.sink.batches).toHaveLength(1);
    window.append({ rv: 3, line: line(3, 16 * 1024) });
    fanout.publish();
    expect(paced.sink.batches.map((b) => b.lines.length)).toEqual([1, 2]);
  });

  it("holds a subscriber with too much unacknowledged, sends to the others, and goes on when it acknowledges", () => {
    const { clock, window, fanout, subscribe } = setup(1);
    const slow = subscribe(0);
    const fast = subscribe(0);
    clock.turn();
    slow.sink.backlogBytes = SLICE * 2 + 1;
    window.append({ rv: 2, line: line(2) });
    fanout.publish();
    expect(fast.sink.lines).toHaveLength(2);
    expect(slow.sink.lines).toHaveLength(1);
    slow.sink.backlogBytes = 0;
    fanout.wake();
    clock.turn();
    expect(slow.sink.lines).toEqual([line(1), line(2)]);
  });

  it("cuts off a subscriber whose backlog and unsent window pass its budget, and only it", () => {
    const { clock, window, fanout, subscribe } = setup(1, 100, 64 * 1024);
    const slow = subscribe(0);
    const fast = subscribe(0);
    clock.turn();
    slow.sink.backlogBytes = 40 * 1024;
    for (let rv = 2; rv < 300; rv++) window.append({ rv, line: line(rv) });
    fanout.publish();
    expect(slow.sink.closedWith?.code).toBe(4008);
    expect(fast.sink.closed).toBe(false);
    expect(fast.subscriber.position).toBe(299);
  });

  it("cuts off a subscriber that fell out of the window", () => {
    const { clock, window, subscribe } = setup(0);
    window.reset(50); // history now begins after 50
    window.append({ rv: 51, line: line(51) });
    const old = subscribe(10);
    clock.turn();
    expect(old.sink.closedWith?.reason).toContain("fell out of the replay window");
  });

  it("a resume that catches up gets one bookmark at the head", () => {
    const { clock, window, subscribe } = setup(3);
    window.advance(9);
    const resumed = subscribe(1, { bookmarks: true });
    clock.turn();
    expect(resumed.sink.lines).toEqual([line(2), line(3), `{"type":"BOOKMARK","rv":9}\n`]);
    expect(resumed.subscriber.position).toBe(9);
  });

  it("ends a stream at its timeout (timeoutSeconds) on the clock it was given, not before", () => {
    const { clock, subscribe } = setup(1);
    const timed = subscribe(0, { timeoutMs: 5000 });
    clock.turn();
    clock.advance(4999);
    expect(timed.sink.closed).toBe(false);
    clock.advance(1);
    expect(timed.sink.closedWith).toEqual({ code: 1000, reason: "timeoutSeconds reached" });
    expect(clock.pending).toEqual([]);
  });

  it("sends a stream that asked for bookmarks one at the head 2 s before its timeoutSeconds, if the head moved past it, and another at its end if it moved again", () => {
    const { clock, window, subscribe } = setup(1);
    const timed = subscribe(1, { bookmarks: true, timeoutMs: 10_000 });
    const without = subscribe(1, { timeoutMs: 10_000 });
    const caughtUp = subscribe(1, { bookmarks: true, timeoutMs: 10_000 });
    clock.turn();
    // Each resume's own bookmark, where its replay ended.
    for (const s of [timed, caughtUp]) expect(s.sink.batches.splice(0)).toHaveLength(1);
    window.advance(5); // the upstream's bookmark: nothing for these subscribers but a newer resume point
    clock.advance(7_999);
    expect(timed.sink.lines).toEqual([]);
    // Sent the head some other way (the hub's periodic bookmark): nothing newer before its end.
    caughtUp.subscriber.position = 5;
    clock.advance(1);
    expect(timed.sink.lines).toEqual([`{"type":"BOOKMARK","rv":5}\n`]);
    expect(timed.subscriber.position).toBe(5);
    expect(caughtUp.sink.lines).toEqual([]);
    window.advance(6);
    clock.advance(2_000);
    expect(timed.sink.lines).toEqual([`{"type":"BOOKMARK","rv":5}\n`, `{"type":"BOOKMARK","rv":6}\n`]);
    expect(timed.sink.closedWith?.reason).toBe("timeoutSeconds reached");
    expect(without.sink.lines).toEqual([]);
    expect(clock.pending).toEqual([]);
  });

  it("asks how far the upstream has got 3 s before a stream's bookmark before its end, only when it has nothing newer for it", () => {
    const { clock, window, fanout, subscribe } = setup(1);
    const asked: number[] = [];
    fanout.onProgressWanted = (since) => asked.push(since);
    const started = clock.now();
    const atHead = subscribe(1, { bookmarks: true, timeoutMs: 10_000 });
    // An event still to send it (held: too much unacknowledged): nothing to ask.
    subscribe(0, { bookmarks: true, timeoutMs: 10_000 }).sink.backlogBytes = 2 * SLICE + 1;
    subscribe(1, { timeoutMs: 10_000 }); // no bookmarks asked for
    subscribe(1, { bookmarks: true, timeoutMs: 2_000 }); // too short for a bookmark before its end, as on the API server
    clock.advance(1_000);
    const short = subscribe(1, { bookmarks: true, timeoutMs: 4_000 }); // asks at once
    expect(asked).toEqual([]);
    clock.turn();
    expect(asked).toEqual([started + 1_000]);
    clock.advance(3_999);
    expect(asked).toEqual([started + 1_000]);
    clock.advance(1);
    expect(asked).toEqual([started + 1_000, started]);
    // Heard meanwhile: the bookmark before its end has the head.
    window.advance(3);
    clock.advance(3_000);
    expect(atHead.sink.lines.at(-1)).toEqual(`{"type":"BOOKMARK","rv":3}\n`);
    expect(short.sink.closed).toBe(true);
  });

  it("wake does nothing when nobody is waiting on its backlog", () => {
    const { clock, fanout, subscribe } = setup(1);
    subscribe(0);
    clock.turn();
    fanout.wake();
    expect(clock.pending.length).toBe(0);
  });

  it("sends subscribers that start together the state at the head from storage, each slice read once for all; then the window's events", () => {
    const { storage, window, clock, fanout, subscribe } = setup(0);
    const collection = new Collection(() => storage.sql);
    storage.transaction(() => {
      for (let i = 0; i < 40; i++) collection.write("ADDED", { key: `ns/p${String(i).padStart(2, "0")}`, uid: `u${i}`, rv: 1, json: `{"pad":"${"x".repeat(SLICE / 20)}"}` }, 1, undefined, false);
    });
    window.advance(1);
    let now = 0;
    const snapshots = new SnapshotRegistry({ kept: 1, ttlMs: 1000 }, () => now);
    const state = new StateEvents(collection, snapshots, 1, "initial-events-end");
    let reads = 0;
    const counted: InitialEvents = {
      id: state.id,
      rv: state.rv,
      end: state.end,
      acquire: () => state.acquire(),
      release: () => state.release(),
      read: (cursor, max) => {
        reads++;
        return state.read(cursor, max);
      },
    };
    const a = subscribe(1, {}, counted);
    const b = subscribe(1, {}, counted);
    while (clock.turn() > 0);
    expect(a.sink.lines).toHaveLength(41);
    expect(a.sink.lines.at(-1)).toBe(`{"type":"BOOKMARK","rv":1}\n`);
    expect(b.sink.batches).toEqual(a.sink.batches);
    // Two slices of about SLICE each: read once for both subscribers.
    expect(reads).toBe(2);
    window.append({ rv: 2, line: line(2) });
    fanout.publish();
    expect(a.sink.lines.at(-1)).toBe(line(2));
    // Done with the state: its snapshot is no longer held.
    expect(snapshots.oldest()).toBeUndefined();

    // One whose snapshot outlived its time is cut off, to resume.
    const late = subscribe(2, {}, new StateEvents(collection, snapshots, 2, undefined));
    now += 2000;
    clock.turn();
    expect(late.sink.closedWith?.code).toBe(4008);
  });

  it("sends a filtered subscriber (a shard) only the lines its filter lets through, of the window and of its initial state, and moves it past the rest", () => {
    const { storage, window, clock, fanout, subscribe } = setup(6);
    const collection = new Collection(() => storage.sql);
    storage.transaction(() => {
      for (let i = 0; i < 6; i++) collection.write("ADDED", { key: `ns/p${i}`, uid: `u${i}`, rv: 6, json: `{"i":${i}}` }, 6, undefined, false);
    });
    const even = { key: "even", admits: (l: string) => /"(?:rv|i)":\d*[02468][,}]/.test(l) || l.includes("BOOKMARK") };
    const snapshots = new SnapshotRegistry({ kept: 1, ttlMs: 1000 }, () => 0);
    const resumed = subscribe(0, { filter: even });
    const alike = subscribe(0, { filter: { ...even } });
    const whole = subscribe(0);
    const listed = subscribe(6, { filter: even }, new StateEvents(collection, snapshots, 6, "initial-events-end"));
    while (clock.turn() > 0);
    expect(resumed.sink.lines).toEqual([2, 4, 6].map((rv) => line(rv)));
    expect(whole.sink.lines).toHaveLength(6);
    // Subscribers filtered alike share one slice.
    expect(alike.sink.batches[0]).toBe(resumed.sink.batches[0]);
    expect(listed.sink.lines).toEqual(['{"type":"ADDED","object":{"i":0}}\n', '{"type":"ADDED","object":{"i":2}}\n', '{"type":"ADDED","object":{"i":4}}\n', '{"type":"BOOKMARK","rv":6}\n']);
    // Nothing it may have: it moves on, sent nothing.
    window.append({ rv: 7, line: line(7) });
    fanout.publish();
    expect(resumed.sink.lines).toHaveLength(3);
    expect(resumed.subscriber.position).toBe(7);
    expect(whole.sink.lines.at(-1)).toBe(line(7));
  });
});
