import { describe, expect, it } from "vitest";
import type { Machine } from "../../bench/machine.ts";
import { amendedParts, merge } from "../../bench/merge.ts";
import type { ProfileSummary, Results, Row } from "../../bench/rows.ts";

const row = (scenario: Row["scenario"], system: string) => ({ scenario, system }) as unknown as Row;
const profile = (workload: string) => ({ workload }) as unknown as ProfileSummary;
const machine = (kernel: string) => ({ cpuModel: "CPU", cores: 2, memoryGiB: 23.5, kernel, node: "v22", workerd: "workerd 1" }) as Machine;
const run = (command: string, rows: Row[], profiles: ProfileSummary[], rounds?: number, on = machine("k1")): Results =>
  ({
    command,
    machine: on,
    startedAt: "2026-11-27T00:00:00.000Z",
    durationMs: 1000,
    sizes: { of: command },
    processes: [{ role: command, pid: 1 }],
    rows,
    skipped: [],
    profiles,
    ...(rounds === undefined ? {} : { rounds }),
  }) as unknown as Results;

describe("--merge", () => {
  const first = run("first", [row("fanout", "relay"), row("storm", "relay"), row("burst", "relay")], [profile("fan-out, first")], 3);

  it("replaces the rows of the scenarios it measured, keeps the rest and the amended run's profiles, and records itself", () => {
    const merged = merge(first, run("later", [row("fanout", "relay-later"), row("storm", "relay-later")], [], 3), ["fanout", "storm"]);
    expect(merged.rows.map((r) => `${r.scenario} ${r.system}`)).toEqual(["burst relay", "fanout relay-later", "storm relay-later"]);
    expect(merged.profiles).toEqual([profile("fan-out, first")]);
    expect(merged.amendments).toEqual([{ command: "later", startedAt: "2026-11-27T00:00:00.000Z", durationMs: 1000, scenarios: ["fanout", "storm"] }]);
    expect(amendedParts(merged.amendments?.[0] as NonNullable<Results["amendments"]>[number])).toBe("fanout and storm rows");
  });

  it("with profiles (--profile), replaces the amended run's profiles too, and says so", () => {
    const merged = merge(first, run("later", [row("snapshot", "relay")], [profile("fan-out, later")], 1), ["snapshot"]);
    expect(merged.profiles).toEqual([profile("fan-out, later")]);
    expect(merged.rows).toHaveLength(4);
    const amendment = merged.amendments?.[0] as NonNullable<Results["amendments"]>[number];
    expect(amendment).toMatchObject({ scenarios: ["snapshot"], rounds: 1, profiles: true });
    expect(amendedParts(amendment)).toBe("snapshot rows and the profiles");
    expect(amendedParts({ ...amendment, scenarios: [] })).toBe("profiles");
  });

  it("records the later run's machine where it is another (a virtual machine's new kernel), and only there", () => {
    const elsewhere = merge(first, run("later", [row("sockets", "relay")], [], 3, { ...machine("k2"), loadAverage: 1 }), ["sockets"]);
    expect(elsewhere.amendments?.[0]?.machine?.kernel).toBe("k2");
    expect(elsewhere.machine.kernel).toBe("k1");
    // The load at its start is not the machine.
    const same = merge(first, run("later", [row("sockets", "relay")], [], 3, { ...machine("k1"), loadAverage: 1.5 }), ["sockets"]);
    expect(same.amendments?.[0]).not.toHaveProperty("machine");
  });
});
