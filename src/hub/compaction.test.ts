import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { database, durableStorage } from "../../test/kit/sqlite.ts";
import { Collection, type ObjectEvent, type ObjectRecord } from "./collection.ts";
import { netChangesPage, type NetChange } from "./compaction.ts";
import { HubStorage } from "./storage.ts";
import { Tombstones } from "./tombstones.ts";

/** What can happen to the collection a hub watches (its selector included). */
type Op = { op: "create"; name: number; matches: boolean } | { op: "update"; pick: number } | { op: "delete"; pick: number } | { op: "move"; pick: number };

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant("create" as const), name: fc.integer({ min: 0, max: 5 }), matches: fc.boolean() }),
    fc.record({ op: fc.constant("update" as const), pick: fc.nat() }),
    fc.record({ op: fc.constant("delete" as const), pick: fc.nat() }),
    fc.record({ op: fc.constant("move" as const), pick: fc.nat() }),
  ),
  { maxLength: 60 },
);

interface Upstream {
  uid: string;
  name: string;
  matches: boolean;
}

const cached = (o: Upstream, rv: number): ObjectRecord => ({ uid: o.uid, key: `ns/${o.name}`, rv, json: JSON.stringify({ uid: o.uid, rv }) });

/**
 * Run `ops` against an upstream collection; return the events a watch with the selector sees
 * (an object leaving the selector is DELETED for it, one entering is ADDED, as the watch cache
 * does), each at its own resourceVersion, starting after `base`.
 */
function history(list: Op[], base: number): ObjectEvent[] {
  const live: Upstream[] = [];
  const events: ObjectEvent[] = [];
  let rv = base;
  let uids = 0;
  for (const step of list) {
    rv++;
    if (step.op === "create") {
      if (live.some((o) => o.name === String(step.name))) continue; // the name is taken: a 409
      const o = { uid: `u${uids++}`, name: String(step.name), matches: step.matches };
      live.push(o);
      if (o.matches) events.push({ type: "ADDED", object: cached(o, rv) });
      continue;
    }
    const o = live[step.pick % Math.max(1, live.length)];
    if (!o) continue;
    if (step.op === "update") {
      if (o.matches) events.push({ type: "MODIFIED", object: cached(o, rv) });
    } else if (step.op === "delete") {
      live.splice(live.indexOf(o), 1);
      if (o.matches) events.push({ type: "DELETED", object: cached(o, rv) });
    } else {
      o.matches = !o.matches;
      events.push({ type: o.matches ? "ADDED" : "DELETED", object: cached(o, rv) });
    }
  }
  return events;
}

/** The hub's side after `events`: its collection and tombstones, written as the feed writes them. */
function hubAfter(events: ObjectEvent[]) {
  const storage = new HubStorage(durableStorage(database()));
  storage.make();
  const collection = new Collection(() => storage.sql);
  const tombstones = new Tombstones(() => storage.sql, { max: 1000, maxAgeMs: 86_400_000 });
  for (const { type, object } of events) {
    const written = storage.transaction(() => {
      const replaced = collection.peek(object.key);
      const since = type === "ADDED" || !replaced ? object.rv : replaced.since;
      const added = collection.write(type, object, since, replaced, false);
      return { added, stones: tombstones.write(type === "DELETED" ? [{ ...object, since: replaced?.since ?? 0 }] : [], 0, 0) };
    });
    collection.committed(written.added);
    tombstones.committed(written.stones.count);
  }
  /** Every net change from `from` to `at`, read `limit` at a time. */
  const net = (from: number, at: number, limit: number, maxBytes?: number) => {
    const all: NetChange[] = [];
    for (let after = from; ; ) {
      const { changes, more } = netChangesPage(collection, tombstones, from, at, after, limit, maxBytes);
      all.push(...changes);
      if (!more || changes.length === 0) return all;
      after = (changes.at(-1) as NetChange).object.rv;
    }
  };
  return { net };
}

/** The collection by uid after `events` (the first `upTo` of them). */
function stateOf(events: ObjectEvent[]): Map<string, number> {
  const state = new Map<string, number>();
  for (const e of events) {
    if (e.type === "DELETED") state.delete(e.object.uid);
    else state.set(e.object.uid, e.object.rv);
  }
  return state;
}

describe("net changes", () => {
  it("turn the collection at any resourceVersion into the current one, each object once, read a page at a time", () => {
    const base = 100;
    fc.assert(
      fc.property(ops, fc.integer({ min: 1, max: 4 }), fc.option(fc.integer({ min: 1, max: 200 })), (list, limit, maxBytes) => {
        const events = history(list, base);
        const { net } = hubAfter(events);
        const now = stateOf(events);
        const head = events.at(-1)?.object.rv ?? base;
        for (let rv = base; rv <= head; rv++) {
          const state = stateOf(events.filter((e) => e.object.rv <= rv));
          const changes = net(rv, head, limit, maxBytes ?? undefined);
          expect(new Set(changes.map((c) => c.object.uid)).size).toBe(changes.length);
          expect(changes.map((c) => c.object.rv)).toEqual([...changes.map((c) => c.object.rv)].sort((a, b) => a - b));
          for (const c of changes) {
            if (c.type === "DELETED") state.delete(c.object.uid);
            else {
              // ADDED only for what the subscriber did not have.
              if (c.type === "ADDED") expect(state.has(c.object.uid) && state.get(c.object.uid) === c.object.rv).toBe(false);
              state.set(c.object.uid, c.object.rv);
            }
          }
          expect(state).toEqual(now);
        }
      }),
      { seed: 20261123, numRuns: 200 },
    );
  });

  it("say nothing when nothing changed, and name a re-created object's deletion before its creation", () => {
    const o1: Upstream = { uid: "a", name: "x", matches: true };
    const o2: Upstream = { uid: "b", name: "x", matches: true };
    const { net } = hubAfter([
      { type: "ADDED", object: cached(o1, 101) },
      { type: "DELETED", object: cached(o1, 102) },
      { type: "ADDED", object: cached(o2, 103) },
    ]);
    expect(net(103, 103, 10)).toEqual([]);
    expect(net(101, 103, 10).map((c) => [c.type, c.object.uid])).toEqual([
      ["DELETED", "a"],
      ["ADDED", "b"],
    ]);
  });
});
