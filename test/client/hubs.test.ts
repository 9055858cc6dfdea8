import { describe, expect, it } from "vitest";
import { treeOrder, type HubEntry } from "../../src/client/page/hubs.ts";

const hub = (hub: string, key: string, extra: Partial<HubEntry> = {}): HubEntry => ({
  hub,
  key,
  upstream: "watching",
  subscribers: { websocket: 0, http: 0 },
  window: { events: 0, head: 0 },
  objects: 0,
  ...extra,
});

describe("the operator panel's hubs", () => {
  it("shows each hot key's replicas under its root, roots by key; a replica whose root is not listed stands alone", () => {
    const hubs = [
      hub("k2#local-2", "c:/b", { root: "k2" }),
      hub("k1", "c:/a"),
      hub("k2", "c:/b", { replicas: [{ hub: "k2#local-1", subscribers: 3, lagSeconds: 0 }] }),
      hub("k2#local-1", "c:/b", { root: "k2" }),
      hub("k3#local-1", "c:/c", { root: "k3" }),
    ];
    expect(treeOrder(hubs).map((h) => h.hub)).toEqual(["k1", "k2", "k2#local-1", "k2#local-2", "k3#local-1"]);
  });
});
