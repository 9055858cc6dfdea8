/**
 * @module
 * The orchestrator's handle on the load-generator processes: spreads subscribers over them
 * round-robin, sends every command to all of them at once, and merges what they report.
 */
import { startChild, type Child } from "./children.ts";
import type { CatchUp, SubscriberSpec, WindowReport } from "./loadgen.ts";
import { Histogram } from "./stats.ts";

export interface MergedReport {
  events: number;
  modified: number;
  modifiedBytes: number;
  messages: number;
  /** The events' bytes, and the bytes on the wire that carried them (fewer where messages came compressed). */
  bytes: number;
  wireBytes: number;
  /** Events a second, each process's count over its own window. */
  eventsPerSec: number;
  latency: Histogram;
  cutOffs: number;
  errors: number;
  /** Epoch ms: the earliest write stamp among the events received, and the last receipt, over every process; null with no events. */
  firstWrittenAt: number | null;
  lastReceivedAt: number | null;
}

export class Loadgens {
  readonly #children: Array<Child<{ pid: number }>>;

  private constructor(children: Array<Child<{ pid: number }>>) {
    this.#children = children;
  }

  static async start(count: number, logDir: string): Promise<Loadgens> {
    const entry = new URL("./loadgen.ts", import.meta.url);
    return new Loadgens(await Promise.all(Array.from({ length: count }, (_, i) => startChild<{ pid: number }>(`loadgen-${i}`, entry, {}, logDir))));
  }

  get pids(): number[] {
    return this.#children.map((c) => c.pid);
  }

  #all<T>(op: string, payload?: unknown): Promise<T[]> {
    return Promise.all(this.#children.map((c) => c.call<T>(op, payload)));
  }

  /** Open subscribers, at most `concurrency` connection attempts at a time per process. Throws if any failed. */
  async open(specs: readonly SubscriberSpec[], concurrency = 100): Promise<void> {
    const shares = this.#children.map((_, i) => specs.filter((__, j) => j % this.#children.length === i));
    const results = await Promise.all(this.#children.map((c, i) => c.call<{ failed: number; error?: string }>("open", { subscribers: shares[i], concurrency })));
    const failed = results.reduce((n, r) => n + r.failed, 0);
    if (failed > 0) throw new Error(`${failed} of ${specs.length} subscribers could not connect: ${results.find((r) => r.error)?.error}`);
  }

  async measure(): Promise<void> {
    await this.#all("measure");
  }

  async report(): Promise<MergedReport> {
    const reports = await this.#all<WindowReport>("report");
    const latency = new Histogram();
    for (const r of reports) latency.merge(r.latency);
    return {
      events: reports.reduce((n, r) => n + r.events, 0),
      modified: reports.reduce((n, r) => n + r.modified, 0),
      modifiedBytes: reports.reduce((n, r) => n + r.modifiedBytes, 0),
      messages: reports.reduce((n, r) => n + r.messages, 0),
      bytes: reports.reduce((n, r) => n + r.bytes, 0),
      wireBytes: reports.reduce((n, r) => n + r.wireBytes, 0),
      eventsPerSec: reports.reduce((n, r) => n + (r.events * 1000) / Math.max(1, r.elapsedMs), 0),
      latency,
      cutOffs: reports.reduce((n, r) => n + r.cutOffs, 0),
      errors: reports.reduce((n, r) => n + r.errors, 0),
      firstWrittenAt: extreme(
        reports.map((r) => r.firstWrittenAt),
        Math.min,
      ),
      lastReceivedAt: extreme(
        reports.map((r) => r.lastReceivedAt),
        Math.max,
      ),
    };
  }

  /** Wait until every subscriber has seen `target`. */
  async waitFor(target: number, timeoutMs: number): Promise<CatchUp> {
    return merge(await this.#all<CatchUp>("waitFor", { target, timeoutMs }));
  }

  /** New subscribers (spread over the processes), connecting all at once; resolves once each has reached resourceVersion `target`, or received `added` ADDED events (a whole initial state). */
  async arrive(specs: readonly SubscriberSpec[], until: { target?: number; added?: number }, timeoutMs: number, concurrency = 250): Promise<CatchUp> {
    const shares = this.#children.map((_, i) => specs.filter((__, j) => j % this.#children.length === i));
    return merge(await Promise.all(this.#children.map((c, i) => c.call<CatchUp>("arrive", { subscribers: shares[i], concurrency, ...until, timeoutMs }))));
  }

  async drop(): Promise<void> {
    await this.#all("drop");
  }

  /** Every dropped subscriber reconnects at once and catches up to `target`. */
  async resume(target: number, timeoutMs: number, concurrency = 250): Promise<CatchUp> {
    return merge(await this.#all<CatchUp>("resume", { target, timeoutMs, concurrency }));
  }

  async close(): Promise<void> {
    await this.#all("close");
  }
}

function merge(parts: CatchUp[]): CatchUp {
  return {
    caughtUpAt: parts.flatMap((p) => p.caughtUpAt),
    bytes: parts.reduce((n, p) => n + p.bytes, 0),
    missing: parts.reduce((n, p) => n + p.missing, 0),
    errors: parts.reduce((n, p) => n + p.errors, 0),
  };
}

/** The least or greatest of the values that are there; null when none is. */
function extreme(values: ReadonlyArray<number | null>, pick: (...values: number[]) => number): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length > 0 ? pick(...present) : null;
}
