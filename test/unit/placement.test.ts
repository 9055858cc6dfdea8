/**
 * @module
 * Where a hot key's new subscribers go: the root names its region's replicas with what each
 * holds (`Replicas.placement`), and the Worker sends each newcomer to the emptiest of them
 * (`emptiest`), so replicas fill to their share one after another as subscribers keep arriving.
 */
import { describe, expect, it } from "vitest";
import { emptiest, Replicas, replicaName } from "../../src/hub/replicas.ts";

const ROOT = "root";
const PER_HUB = 250;

describe("hot key placement", () => {
  it("names the region's replicas its subscribers fill and one more, each with what it reported", () => {
    const replicas = new Replicas(ROOT, PER_HUB, () => 0);
    expect(replicas.placement("enam", PER_HUB - 1)).toEqual([]);
    expect(replicas.placement("enam", PER_HUB)).toEqual([{ name: replicaName(ROOT, "enam", 1), subscribers: 0 }]);
    replicas.report({ name: replicaName(ROOT, "enam", 1), region: "enam", subscribers: 250, head: 1 }, 0);
    replicas.report({ name: replicaName(ROOT, "weur", 1), region: "weur", subscribers: 40, head: 1 }, 0);
    expect(replicas.placement("enam", PER_HUB)).toEqual([
      { name: replicaName(ROOT, "enam", 1), subscribers: 250 },
      { name: replicaName(ROOT, "enam", 2), subscribers: 0 },
    ]);
  });

  it("fills the emptiest replica named: 2,000 subscribers in waves of a share, each placed by a fresh answer, end at the share on each of 8", () => {
    const replicas = new Replicas(ROOT, PER_HUB, () => 0);
    const held = new Map<string, number>();
    for (let wave = 0; wave < 8; wave++) {
      // The root's own first share stays with it; every wave after is placed on replicas.
      const named = replicas.placement("local", PER_HUB);
      for (let i = 0; i < PER_HUB; i++) {
        const { name } = emptiest(named);
        held.set(name, (held.get(name) ?? 0) + 1);
      }
      for (const [name, subscribers] of held) replicas.report({ name, region: "local", subscribers, head: 1 }, 0);
    }
    expect([...held.values()]).toEqual(Array.from({ length: 8 }, () => PER_HUB));
  });

  it("spreads a wave over replicas that hold the same, the first of them first", () => {
    const named = [
      { name: "a", subscribers: 3 },
      { name: "b", subscribers: 1 },
      { name: "c", subscribers: 1 },
    ];
    expect(Array.from({ length: 5 }, () => emptiest(named).name)).toEqual(["b", "c", "b", "c", "a"]);
  });
});
