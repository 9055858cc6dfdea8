/**
 * @module
 * The orchestrator's handle on the load-generator processes: spreads subscribers over them
 * round-robin, sends every command to all of them at once, and merges what they report.
 */
import { startChild, type Child } from "./children.ts";
import type { CatchUp, SubscriberSpec, WindowReport } from "./loadgen.ts";
import { Histogram } from "./stats.ts";

const COUNTS = ["events", "modified", "modifiedBytes", "messages", "bytes", "wireBytes", "cutOffs", "errors"] as const;

export interface MergedReport extends Pick<WindowReport, (typeof COUNTS)[number] | "firstWrittenAt" | "lastReceivedAt"> {
  /** Events a second, each process's count over its own window. */
  eventsPerSec: number;
  latency: Histogram;
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

  #shares(specs: readonly SubscriberSpec[]): SubscriberSpec[][] {
    return this.#children.map((_, i) => specs.filter((__, j) => j % this.#children.length === i));
  }

  #all<T>(op: string, payload?: unknown): Promise<T[]> {
    return Promise.all(this.#children.map((c) => c.call<T>(op, payload)));
  }

  /** Open subscribers, `concurrency` at a time per process; throws if any failed. */
  async open(specs: readonly SubscriberSpec[], concurrency = 100): Promise<void> {
    const shares = this.#shares(specs);
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
    const counts = Object.fromEntries(COUNTS.map((key) => [key, reports.reduce((n, r) => n + r[key], 0)])) as Record<(typeof COUNTS)[number], number>;
    const [firsts, lasts] = [reports.map((r) => r.firstWrittenAt), reports.map((r) => r.lastReceivedAt)];
    return {
      ...counts,
      eventsPerSec: reports.reduce((n, r) => n + (r.events * 1000) / Math.max(1, r.elapsedMs), 0),
      latency,
      firstWrittenAt: extreme(firsts, Math.min),
      lastReceivedAt: extreme(lasts, Math.max),
    };
  }

  async waitFor(target: number, timeoutMs: number): Promise<CatchUp> {
    return merge(await this.#all<CatchUp>("waitFor", { target, timeoutMs }));
  }

  /** New subscribers, all at once: done once each has reached `target`, or has `added` ADDED events. */
  async arrive(specs: readonly SubscriberSpec[], until: { target?: number; added?: number }, timeoutMs: number, concurrency = 250): Promise<CatchUp> {
    const shares = this.#shares(specs);
    return merge(await Promise.all(this.#children.map((c, i) => c.call<CatchUp>("arrive", { subscribers: shares[i], concurrency, ...until, timeoutMs }))));
  }

  async drop(): Promise<void> {
    await this.#all("drop");
  }

  /** Every dropped subscriber reconnects at once. */
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

function extreme(values: ReadonlyArray<number | null>, pick: (...values: number[]) => number): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length > 0 ? pick(...present) : null;
}
