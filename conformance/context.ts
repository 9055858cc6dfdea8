/**
 * @module
 * What a check is, and what it is given: the server under test, whether and where it may write,
 * the collection it observes otherwise, how long to wait for what the server does on its own
 * clock, and a place to leave what must be closed when it ends (its watches).
 */
import type { Collection } from "./collection.ts";
import type { Api } from "./http.ts";
import { Objects } from "./objects.ts";
import { notApplicable } from "./outcome.ts";

export interface Settings {
  api: Api;
  /** Where writes go, when the suite may write (`--allow-writes`): the server, or `--writer-server`. */
  writer: Api | undefined;
  /** The namespace it writes in (and observes, when given). */
  namespace: string | undefined;
  /** What it observes when it may not write (`--resource`). */
  observed: Collection;
  /** How long a watch waits for a bookmark (`--bookmark-seconds`). */
  bookmarkSeconds: number;
  /** How long to wait for changes to observe when it may not write (`--observe-seconds`). */
  observeSeconds: number;
}

export interface Context extends Settings {
  /** This check's objects; not applicable when the suite may not write. */
  objects(): Objects;
  /** Run `close` when the check ends, however it ends. */
  defer(close: () => void): void;
}

export interface Check {
  /** Short, stable, for `--only` and the report. */
  id: string;
  /** What it checks, in a line (`--list`). */
  title: string;
  /** Resolves with the pass line; throws `CheckFailed` or `NotApplicable` otherwise. */
  run(context: Context): Promise<string>;
}

export const WRITES_NEEDED = "needs writes of its own: --allow-writes --namespace <ns> (and --writer-server <url> when the server is read-only)";

/** The context of one check. */
export function contextFor(settings: Settings, check: Check, closers: Array<() => void>): Context {
  return {
    ...settings,
    objects() {
      if (!settings.writer || settings.namespace === undefined) notApplicable(WRITES_NEEDED);
      return new Objects(settings.writer, settings.namespace, check.id);
    },
    defer: (close) => closers.push(close),
  };
}
