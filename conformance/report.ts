/**
 * @module
 * The report: a line per check (its verdict, its id, why), and a summary; or the same as JSON
 * (`--json`) for machines. A check declared to fail (`--expect-fail`) that fails is `xfail`; one
 * that passes is `XPASS`, in capitals as a failure is, for it fails the run.
 */
import type { Result } from "./run.ts";

export interface Heading {
  server: string;
  /** The server's `/version` gitVersion, when it says. */
  version: string | undefined;
  /** How the run writes, or that it only observes. */
  writes: string;
}

const ID_WIDTH = 22;

const VERDICT: Record<Result["verdict"], string> = { pass: "pass ", fail: "FAIL ", "n/a": "n/a  ", xfail: "xfail", xpass: "XPASS" };

export const headingText = (heading: Heading): string => `conformance of ${heading.server}${heading.version ? ` (${heading.version})` : ""}\n  ${heading.writes}\n`;

const NOTE: Partial<Record<Result["verdict"], string>> = { xfail: " (expected: --expect-fail)", xpass: " (expected to fail: take it out of --expect-fail)" };

export const resultLine = (result: Result): string => `  ${VERDICT[result.verdict]}  ${result.id.padEnd(ID_WIDTH)}${result.reason}${NOTE[result.verdict] ?? ""}`;

export function summaryText(results: readonly Result[], ms: number): string {
  const n = counts(results);
  const declared = n.expectedFailures + n.unexpectedPasses > 0 ? `, ${n.expectedFailures} failed as expected, ${n.unexpectedPasses} passed though expected to fail` : "";
  return `${results.length} check${results.length === 1 ? "" : "s"}: ${n.pass} pass, ${n.fail} fail${declared}, ${n.notApplicable} not applicable (${(ms / 1000).toFixed(1)} s)`;
}

export function reportJson(heading: Heading, results: readonly Result[], ms: number): string {
  return JSON.stringify({ ...heading, results, ...counts(results), seconds: ms / 1000 }, null, 2);
}

function counts(results: readonly Result[]) {
  const count = (verdict: Result["verdict"]) => results.filter((r) => r.verdict === verdict).length;
  return { pass: count("pass"), fail: count("fail"), expectedFailures: count("xfail"), unexpectedPasses: count("xpass"), notApplicable: count("n/a") };
}
