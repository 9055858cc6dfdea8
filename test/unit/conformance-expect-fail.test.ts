/**
 * `npm run conformance -- --expect-fail …`: a check declared to fail that fails is an expected
 * failure and does not fail the run; one that passes is an unexpected pass and does (strict, as
 * pytest's xfail_strict); one that does not apply stays not applicable. `--skip` leaves checks
 * out (a deviation that shows only now and then, which cannot be declared so).
 */
import { describe, expect, it } from "vitest";
import type { Check, Settings } from "../../conformance/context.ts";
import { parseOptions } from "../../conformance/options.ts";
import { fail, notApplicable } from "../../conformance/outcome.ts";
import { resultLine, summaryText } from "../../conformance/report.ts";
import { chosen, failed, runChecks } from "../../conformance/run.ts";

const check = (id: string, run: () => string): Check => ({ id, title: id, run: async () => run() });
const passes = check("passes", () => "all good");
const fails = check("fails", () => fail("it broke"));
const inapplicable = check("inapplicable", () => notApplicable("nothing to see"));
const settings = { bookmarkSeconds: 3, observeSeconds: 3 } as Settings;

describe("--expect-fail", () => {
  it("is parsed as a list of check ids", () => {
    const options = parseOptions(["--server", "http://127.0.0.1:8787", "--expect-fail", "consistent-read, bookmarks"]);
    expect(options !== "help" && options !== "list" && options.expectFail).toEqual(["consistent-read", "bookmarks"]);
    const none = parseOptions(["--server", "http://127.0.0.1:8787"]);
    expect(none !== "help" && none !== "list" && none.expectFail).toEqual([]);
  });

  it("--skip leaves checks out, of all or of --only's", () => {
    const options = parseOptions(["--server", "http://127.0.0.1:8787", "--skip", "fails"]);
    expect(options !== "help" && options !== "list" && options.skip).toEqual(["fails"]);
    const all = [passes, fails, inapplicable];
    expect(chosen(all, undefined, ["fails"]).map((c) => c.id)).toEqual(["passes", "inapplicable"]);
    expect(chosen(all, ["inapplicable", "fails"], ["fails"]).map((c) => c.id)).toEqual(["inapplicable"]);
    expect(chosen(all, undefined, []).map((c) => c.id)).toEqual(["passes", "fails", "inapplicable"]);
  });

  it("turns a declared check's failure into xfail and its pass into xpass; only undeclared failures and unexpected passes fail the run", async () => {
    const all = [passes, fails, inapplicable];
    const declared = await runChecks(settings, all, new Set(["fails", "inapplicable"]), () => undefined);
    expect(declared.map((r) => [r.id, r.verdict])).toEqual([
      ["passes", "pass"],
      ["fails", "xfail"],
      ["inapplicable", "n/a"],
    ]);
    expect(failed(declared)).toBe(false);
    expect(resultLine(declared[1]!)).toBe("  xfail  fails                 it broke (expected: --expect-fail)");
    expect(summaryText(declared, 1500)).toBe("3 checks: 1 pass, 0 fail, 1 failed as expected, 0 passed though expected to fail, 1 not applicable (1.5 s)");

    const stale = await runChecks(settings, all, new Set(["passes", "fails"]), () => undefined);
    expect(stale.map((r) => r.verdict)).toEqual(["xpass", "xfail", "n/a"]);
    expect(failed(stale)).toBe(true);
    expect(resultLine(stale[0]!)).toBe("  XPASS  passes                all good (expected to fail: take it out of --expect-fail)");

    const undeclared = await runChecks(settings, all, new Set(), () => undefined);
    expect(undeclared.map((r) => r.verdict)).toEqual(["pass", "fail", "n/a"]);
    expect(failed(undeclared)).toBe(true);
    expect(summaryText(undeclared, 0)).toBe("3 checks: 1 pass, 1 fail, 1 not applicable (0.0 s)");
  });
});
