/**
 * @module
 * Runs checks one after another, each with its own context, and turns what each concluded into
 * a result: pass with its line, fail or not applicable with why. Whatever a check opened is
 * closed when it ends, and a check that does not end in time fails.
 */
import { type Check, contextFor, type Settings } from "./context.ts";
import { CheckFailed, NotApplicable, type Verdict } from "./outcome.ts";

export interface Result {
  id: string;
  title: string;
  verdict: Verdict;
  /** The pass line, or why it failed or does not apply. */
  reason: string;
  ms: number;
}

/** Longer than any check takes on a healthy server (its waits are at most 15 s each), short of hanging. */
const CHECK_MS = 120_000;

export async function runChecks(settings: Settings, checks: readonly Check[], reported: (result: Result) => void): Promise<Result[]> {
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
    const result = { id: check.id, title: check.title, verdict, reason, ms: Date.now() - started };
    results.push(result);
    reported(result);
  }
  return results;
}
