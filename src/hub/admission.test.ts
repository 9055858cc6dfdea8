import { describe, expect, it } from "vitest";
import { parseWatchOptions } from "../k8s/options.ts";
import { startOf } from "./admission.ts";

const options = (query: string) => {
  const parsed = parseWatchOptions(new URLSearchParams(query));
  if (!parsed.ok) throw new Error(parsed.status.message);
  return parsed.value;
};
const window = { head: 120, start: 100 };

describe("where a watch starts", () => {
  it("without a resourceVersion, or 0, or with sendInitialEvents: from the current state", () => {
    for (const query of ["", "resourceVersion=0", "resourceVersion=110&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"]) {
      expect(startOf(options(query), window, 50, true)).toEqual({ position: 120, first: "state" });
    }
  });

  it("from N inside the window: exactly after N, the window's start included", () => {
    expect(startOf(options("resourceVersion=110"), window, 50, true)).toEqual({ position: 110, first: undefined });
    expect(startOf(options("resourceVersion=100"), window, 50, true)).toEqual({ position: 100, first: undefined });
  });

  it("from N before the window: 410 Expired naming the oldest resumable version", () => {
    const start = startOf(options("resourceVersion=99"), window, 50, true);
    expect(start).toMatchObject({ refused: { code: 410, reason: "Expired" } });
  });

  it("from N with compact=true: the net changes, from as far back as the horizon; 410 before it", () => {
    expect(startOf(options("resourceVersion=60&compact=true"), window, 50, true)).toEqual({ position: 120, first: "net" });
    expect(startOf(options("resourceVersion=50&compact=true"), window, 50, true)).toEqual({ position: 120, first: "net" });
    expect(startOf(options("resourceVersion=49&compact=true"), window, 50, true)).toMatchObject({ refused: { code: 410, reason: "Expired" } });
  });

  it("from N the hub has not reached in time: 504 Too large resource version", () => {
    const start = startOf(options("resourceVersion=130"), window, 50, false);
    expect(start).toMatchObject({ refused: { code: 504, reason: "Timeout" } });
  });
});
