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
      expect(startOf(options(query), window, true)).toEqual({ position: 120, fromState: true });
    }
  });

  it("from N inside the window: exactly after N, the window's start included", () => {
    expect(startOf(options("resourceVersion=110"), window, true)).toEqual({ position: 110, fromState: false });
    expect(startOf(options("resourceVersion=100"), window, true)).toEqual({ position: 100, fromState: false });
  });

  it("from N before the window: 410 Expired naming the oldest resumable version", () => {
    const start = startOf(options("resourceVersion=99"), window, true);
    expect(start).toMatchObject({ refused: { code: 410, reason: "Expired" } });
  });

  it("from N the hub has not reached in time: 504 Too large resource version", () => {
    const start = startOf(options("resourceVersion=130"), window, false);
    expect(start).toMatchObject({ refused: { code: 504, reason: "Timeout" } });
  });
});
