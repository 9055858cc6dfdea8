/**
 * @module
 * Runs checks one after another, each with its own context, and turns what each concluded into
 * a result: pass with its line, fail or not applicable with why; for a check declared to fail
 * (`--expect-fail`), an expected failure (`xfail`) or an unexpected pass (`xpass`). Whatever a
 * check opened is closed when it ends, and a check that does not end in time fails.
 */
import { type Check, contextFor, type Settings } from "./context.ts";
import { CheckFailed, NotApplicable, type Verdict } from "./outcome.ts";

export interface Result {
  id: string;
  title: string;
  /** What the check concluded; `xfail` and `xpass` for one declared to fail that failed or passed. */
  verdict: Verdict | "xfail" | "xpass";
  /** The pass line, or why it failed or does not apply. */
  reason: string;
  ms: number;
}

/** The checks a run makes, in their order: those `only` names (all without it), less those `skip` names. */
export const chosen = (checks: readonly Check[], only: readonly string[] | undefined, skip: readonly string[]): Check[] => checks.filter((c) => (!only || only.includes(c.id)) && !skip.includes(c.id));

/** Whether the run failed: a check failed that was not declared to, or one declared to fail passed. */
export const failed = (results: readonly Result[]): boolean => results.some((r) => r.verdict === "fail" || r.verdict === "xpass");

/** Longer than any check takes on a healthy server (its waits are at most 15 s each), short of hanging. */
const CHECK_MS = 120_000;

export async function runChecks(settings: Settings, checks: readonly Check[], expectFail: ReadonlySet<string>, reported: (result: Result) => void): Promise<Result[]> {
  const results: Result[] = [];
  for (const check of checks) {
    const closers: Array<() => void> = [];
    const started = Date.now();
    const limit = CHECK_MS + settings.bookmarkSeconds * 1000 + settings.observeSeconds * 1000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new CheckFailed(`did not finish within ${limit / 1000} s`)), limit)));
    let verdict: Verdict;
    let reason: string;
    try {
      reason = await Promise.race([check.run(contextFor(settings, check, closers)), late]);
      verdict = "pass";
    } catch (e) {
      verdict = e instanceof NotApplicable ? "n/a" : "fail";
      reason = e instanceof CheckFailed || e instanceof NotApplicable ? e.message : `error: ${(e as Error).message ?? String(e)}`;
    } finally {
      clearTimeout(timer);
      for (const close of closers) {
        try {
          close();
        } catch {
          // already closed
        }
      }
    }
    const expected = expectFail.has(check.id);
    const result: Result = { id: check.id, title: check.title, verdict: !expected || verdict === "n/a" ? verdict : verdict === "fail" ? "xfail" : "xpass", reason, ms: Date.now() - started };
    results.push(result);
    reported(result);
  }
  return results;
}
