/**
 * @module
 * What a check can conclude besides passing: it failed (the server broke the contract, said in
 * one line), or it does not apply to this server or this run (said why, in one line). Checks
 * throw these; the runner turns them into the report's lines.
 */

export type Verdict = "pass" | "fail" | "n/a";

/** The server broke the contract: the message says what it did and what was expected. */
export class CheckFailed extends Error {
  override readonly name = "CheckFailed";
}

/** The check cannot be made here (no writes allowed, a feature the server does not serve, nothing to observe). */
export class NotApplicable extends Error {
  override readonly name = "NotApplicable";
}

/** Fail the check with `message` unless `condition` holds. */
export function expect(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) throw new CheckFailed(typeof message === "string" ? message : message());
}

export function fail(message: string): never {
  throw new CheckFailed(message);
}

export function notApplicable(message: string): never {
  throw new NotApplicable(message);
}
