/**
 * @module
 * Every check, in the order they run and are reported.
 */
import type { Check } from "../context.ts";
import { bookmarksCheck } from "./bookmarks.ts";
import { consistentReadCheck } from "./consistent-read.ts";
import { continueExpiryCheck } from "./continue-expiry.ts";
import { firstListCheck } from "./first-list.ts";
import { listCheck } from "./list.ts";
import { pagingCheck } from "./paging.ts";
import { readOnlyCheck } from "./read-only.ts";
import { resourceVersionCheck } from "./resource-version.ts";
import { selectorTransitionsCheck } from "./selector-transitions.ts";
import { selectorsCheck } from "./selectors.ts";
import { statusErrorsCheck } from "./status-errors.ts";
import { tableCheck } from "./table.ts";
import { timeoutSecondsCheck } from "./timeout-seconds.ts";
import { watchExpiredCheck } from "./watch-expired.ts";
import { watchListCheck } from "./watch-list.ts";
import { watchResumeCheck } from "./watch-resume.ts";
import { websocketCheck } from "./websocket-watch.ts";

export const CHECKS: readonly Check[] = [
  listCheck,
  consistentReadCheck,
  firstListCheck,
  resourceVersionCheck,
  pagingCheck,
  continueExpiryCheck,
  watchResumeCheck,
  watchExpiredCheck,
  bookmarksCheck,
  watchListCheck,
  selectorsCheck,
  selectorTransitionsCheck,
  tableCheck,
  timeoutSecondsCheck,
  statusErrorsCheck,
  readOnlyCheck,
  websocketCheck,
];
