/** One answer shared for an interval (src/lists/shared-load.ts): the list cache's one upstream list per key per interval. */
import { describe, expect, it } from "vitest";
import { SharedLoad } from "../../src/lists/shared-load.ts";

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("SharedLoad", () => {
  it("loads once for the requests of an interval: the first loads, those meanwhile wait for it, the rest get it held", async () => {
    let now = 1000;
    const shared = new SharedLoad<string>(
      10_000,
      () => now,
      () => true,
    );
    let loads = 0;
    const pending = deferred<string>();
    const load = () => {
      loads++;
      return pending.promise;
    };
    const first = shared.get(load);
    const second = shared.get(load);
    pending.resolve("list");
    expect(await first).toEqual({ value: "list", at: 1000, outcome: "loaded" });
    expect(await second).toEqual({ value: "list", at: 1000, outcome: "collapsed" });
    now = 10_999;
    expect(await shared.get(load)).toEqual({ value: "list", at: 1000, outcome: "hit" });
    expect(shared.remainingSeconds({ at: 1000 })).toBe(1);
    expect(loads).toBe(1);
    now = 11_000;
    expect(await shared.get(() => Promise.resolve("newer"))).toEqual({ value: "newer", at: 11_000, outcome: "loaded" });
  });

  it("holds nothing it may not share: the loader keeps its answer, those waiting load their own", async () => {
    const shared = new SharedLoad<string>(
      10_000,
      () => 0,
      (value) => value !== "too large",
    );
    const pending = deferred<string>();
    const first = shared.get(() => pending.promise);
    const waiting = shared.get(() => Promise.resolve("unused"));
    pending.resolve("too large");
    expect(await first).toMatchObject({ value: "too large", outcome: "loaded" });
    expect(await waiting).toBeUndefined();
    expect(await shared.get(() => Promise.resolve("again"))).toMatchObject({ value: "again", outcome: "loaded" });
  });
});
