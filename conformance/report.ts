/**
 * @module
 * The report: a line per check (its verdict, its id, why), and a summary; or the same as JSON
 * (`--json`) for machines.
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

const VERDICT: Record<Result["verdict"], string> = { pass: "pass", fail: "FAIL", "n/a": "n/a " };

export const headingText = (heading: Heading): string => `conformance of ${heading.server}${heading.version ? ` (${heading.version})` : ""}\n  ${heading.writes}\n`;

export const resultLine = (result: Result): string => `  ${VERDICT[result.verdict]}  ${result.id.padEnd(ID_WIDTH)}${result.reason}`;

export function summaryText(results: readonly Result[], ms: number): string {
  const count = (verdict: Result["verdict"]) => results.filter((r) => r.verdict === verdict).length;
  return `${results.length} check${results.length === 1 ? "" : "s"}: ${count("pass")} pass, ${count("fail")} fail, ${count("n/a")} not applicable (${(ms / 1000).toFixed(1)} s)`;
}

export function reportJson(heading: Heading, results: readonly Result[], ms: number): string {
  const count = (verdict: Result["verdict"]) => results.filter((r) => r.verdict === verdict).length;
  return JSON.stringify({ ...heading, results, pass: count("pass"), fail: count("fail"), notApplicable: count("n/a"), seconds: ms / 1000 }, null, 2);
}
