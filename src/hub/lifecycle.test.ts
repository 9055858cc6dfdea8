import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.fake.ts";
import { HEARTBEAT_MS } from "../heartbeat.ts";
import { KEEPALIVE_MS, Lifecycle, type LifecycleParts } from "./lifecycle.ts";

const RETENTION_MS = 600_000;

function hub() {
  const state = {
    watching: false,
    listingSince: undefined as number | undefined,
    subscribers: 0,
    alarm: null as number | null,
    bookmarks: 0,
    keepAlives: 0,
    renewals: 0,
    released: 0,
    stops: 0,
    starts: 0,
    streamRenewals: 0,
    stored: false,
    reclaims: 0,
    reclaimed: 0,
  };
  /** What the hub reported to the metrics registry, in order. */
  const reports: string[] = [];
  const parts: LifecycleParts = {
    upstream: {
      get watching() {
        return state.watching;
      },
      get listingSince() {
        return state.listingSince;
      },
      start: () => {
        state.starts++;
        state.watching = true;
      },
      stop: () => {
        state.stops++;
        state.watching = false;
      },
      renew: () => state.streamRenewals++,
    },
    subscribers: () => state.subscribers,
    bookmarks: () => state.bookmarks++,
    keepAlive: () => state.keepAlives++,
    quotas: { renew: () => state.renewals++, releaseHub: () => state.released++, reclaimed: () => state.reclaimed++ },
    storage: {
      get holdsState() {
        return state.stored;
      },
      reclaim: async () => {
        state.reclaims++;
        state.stored = false;
        state.alarm = null; // deleted with the storage
      },
    },
    metrics: { watching: (n) => void reports.push(`watching ${n}`), beat: () => void reports.push("beat"), stopped: () => void reports.push("stopped") },
    views: { retireIndexes: () => void reports.push("views' idle indexes") },
    alarm: {
      get: async () => state.alarm,
      set: async (at) => {
        state.alarm = at;
      },
    },
  };
  const clock = new FakeClock();
  /** What the lifecycle logged, by message. */
  const logged: string[] = [];
  const lifecycle = new Lifecycle(parts, { idleGraceMs: 60_000, bookmarkIntervalMs: 5_000, retentionMs: RETENTION_MS }, (message) => void logged.push(message), clock);
  /** Let the alarm's storage calls settle. */
  const flush = () => new Promise((r) => setTimeout(r, 0));
  /** The alarm fires: time moves to it, the handler runs (the runtime clears a fired alarm). */
  const fire = async () => {
    if (state.alarm !== null) clock.advance(state.alarm - clock.now());
    state.alarm = null;
    await lifecycle.alarm();
    await flush();
  };
  return { state, reports, logged, clock, lifecycle, flush, fire };
}

/** A hub whose watch runs with nobody subscribed, reading a list begun now. */
async function listingAlone() {
  const h = hub();
  h.state.watching = true;
  h.state.listingSince = h.clock.now();
  h.lifecycle.settle();
  await h.flush();
  return h;
}

describe("Lifecycle", () => {
  it("with subscribers: bookmarks and keep-alives tick, and the heartbeat renews the quotas and an old upstream stream and reports", async () => {
    const { state, reports, clock, lifecycle, flush, fire } = hub();
    state.watching = true;
    state.subscribers = 2;
    lifecycle.settle();
    await flush();
    expect(state.alarm).toBe(clock.now() + HEARTBEAT_MS);
    expect(clock.pending).toEqual([
      { ms: 5_000, repeating: true },
      { ms: KEEPALIVE_MS, repeating: true },
    ]);
    await fire();
    expect(state.bookmarks).toBe(HEARTBEAT_MS / 5_000);
    expect(state.keepAlives).toBe(HEARTBEAT_MS / KEEPALIVE_MS);
    expect([state.renewals, state.streamRenewals]).toEqual([1, 1]);
    expect(state.alarm).toBe(clock.now() + HEARTBEAT_MS);
    // The last subscriber leaves: neither ticks any more.
    state.subscribers = 0;
    lifecycle.settle();
    expect(clock.pending).toEqual([]);
    expect(reports).toEqual(["watching 2", "beat", "views' idle indexes", "watching 0"]);
  });

  it("with nobody subscribed: stops the watch after the grace, releases its share, stops beating", async () => {
    const { state, reports, clock, lifecycle, flush, fire } = hub();
    state.watching = true;
    lifecycle.settle();
    await flush();
    const idleAt = clock.now();
    expect(clock.pending).toEqual([]);
    expect(state.alarm).toBe(idleAt + HEARTBEAT_MS);
    await fire(); // a heartbeat inside the grace; the next alarm is the grace's end
    expect([state.stops, state.alarm]).toEqual([0, idleAt + 60_000]);
    await fire();
    expect([state.stops, state.released, state.alarm]).toEqual([1, 1, null]);
    // The heartbeat that stops the hub renews nothing and says it stopped.
    expect([state.renewals, state.streamRenewals]).toEqual([1, 1]);
    expect(reports).toEqual(["watching 0", "beat", "views' idle indexes", "stopped"]);
  });

  it("with nobody subscribed, finishes a list under way when its grace runs out, then stops", async () => {
    const { state, logged, clock, fire } = await listingAlone();
    // A list that takes three graces: every beat renews the hub, none stops it.
    const listing = clock.now();
    while (clock.now() < listing + 180_000 && state.alarm !== null) await fire();
    expect(clock.now()).toBe(listing + 180_000);
    expect([state.stops, state.renewals]).toEqual([0, 180_000 / HEARTBEAT_MS]);
    expect(state.alarm).toBe(clock.now() + HEARTBEAT_MS);
    // Each look past the grace says why the watch goes on.
    expect(logged.filter((m) => m.startsWith("idle: finishing the list"))).toHaveLength((180_000 - 60_000) / HEARTBEAT_MS + 1);
    // The list done, the next beat stops the watch: its grace is long over.
    state.listingSince = undefined;
    await fire();
    expect([state.stops, clock.now()]).toEqual([1, listing + 180_000 + HEARTBEAT_MS]);
    expect(logged.at(-1)).toBe("idle: stopping the upstream watch");
  });

  it("with nobody subscribed, does not finish a list begun after its grace ran out", async () => {
    const { state, clock, fire } = await listingAlone();
    const idleAt = clock.now();
    while (clock.now() < idleAt + 90_000) await fire();
    expect(state.stops).toBe(0);
    // That list failed, and another began: the next beat stops the watch.
    state.listingSince = clock.now() + 1_000;
    await fire();
    expect(state.stops).toBe(1);
  });

  it("a watch started again after an idle stop gets a fresh grace and stops again", async () => {
    const { state, clock, lifecycle, flush, fire } = hub();
    state.watching = true;
    lifecycle.settle();
    await flush();
    while (state.watching) await fire();
    // Later, a list starts the upstream watch again; nobody subscribes.
    clock.advance(3_600_000);
    state.watching = true;
    lifecycle.settle();
    await flush();
    expect(state.alarm).toBe(clock.now() + HEARTBEAT_MS);
    const restartedAt = clock.now();
    while (state.watching) await fire();
    expect(clock.now()).toBe(restartedAt + 60_000);
    expect(state.stops).toBe(2);
  });

  it("a subscriber that comes within the grace keeps the watch; the alarm of a stopped hub does nothing", async () => {
    const { state, lifecycle, flush, fire } = hub();
    state.watching = true;
    lifecycle.settle();
    await flush();
    state.subscribers = 1;
    lifecycle.settle();
    for (let i = 0; i < 4; i++) await fire();
    expect([state.stops, state.starts]).toEqual([0, 4]); // each beat restarts a loop that died (a no-op when running)
    state.watching = false;
    state.subscribers = 0;
    await fire();
    expect(state.alarm).toBeNull();
  });

  it("a stopped hub that holds state deletes its storage once the retention is over, and gives its opener's share back", async () => {
    const { state, clock, lifecycle, flush, fire } = hub();
    state.stored = true;
    state.watching = true;
    lifecycle.settle();
    await flush();
    while (state.watching) await fire();
    const stoppedAt = clock.now();
    expect(state.alarm).toBe(stoppedAt + RETENTION_MS);
    await fire();
    expect([state.reclaims, state.reclaimed, state.alarm, clock.now()]).toEqual([1, 1, null, stoppedAt + RETENTION_MS]);
  });

  it("a hub watching again within its retention keeps its storage, and its retention starts again at its next stop", async () => {
    const { state, clock, lifecycle, flush, fire } = hub();
    state.stored = true;
    state.watching = true;
    lifecycle.settle();
    await flush();
    while (state.watching) await fire();
    clock.advance(RETENTION_MS - 1);
    state.watching = true; // a request came back for it
    lifecycle.settle();
    await flush();
    while (state.watching) await fire();
    const stoppedAt = clock.now();
    expect(state.reclaims).toBe(0);
    expect(state.alarm).toBe(stoppedAt + RETENTION_MS);
    await fire();
    expect(state.reclaims).toBe(1);
  });

  it("a hub restored by its alarm and found stopped (its instance was evicted) counts its retention from then", async () => {
    const { state, clock, fire } = hub();
    state.stored = true;
    state.alarm = clock.now() + HEARTBEAT_MS;
    await fire();
    expect(state.alarm).toBe(clock.now() + RETENTION_MS);
    await fire();
    expect(state.reclaims).toBe(1);
  });
});
