/**
 * @module
 * The Worker's own counts (refusals decided before any hub, where the list cache's answers
 * came from, logs and reads passed through), one set per isolate, sent to the
 * metrics registry in batches: at most one batch per isolate every `FLUSH_MS`, after the
 * response (in `waitUntil`), and always before a scrape this isolate serves. An isolate that
 * serves no further request holds its last counts until it does, and loses them if it is
 * evicted first: at most `FLUSH_MS` worth of one isolate's refusals.
 */
import type { Env } from "../env.ts";
import type { RefusalReason } from "./catalog.ts";
import { MetricSet } from "./metric-set.ts";
import { REGISTRY } from "./registry.ts";

export const FLUSH_MS = 10_000;

export class WorkerMetrics {
  readonly #counts = new MetricSet();
  #lastFlush = 0;

  refused(reason: RefusalReason): void {
    this.#counts.add("authRefusals", { reason });
  }

  /** A list cache's answer: served from a list already made, or one it sent upstream. */
  cacheAnswered(cluster: string, outcome: "cache" | "upstream"): void {
    this.#counts.add(outcome === "cache" ? "cachedLists" : "cacheUpstreamLists", { cluster });
  }

  /** A pod's log read once, passed through from the upstream (a followed one is its log hub's to count). */
  logReadOnce(cluster: string): void {
    this.#counts.add("logUpstreamRequests", { cluster, kind: "once" });
  }

  /** A get or list no live hub held, sent upstream (DESIGN.md, "Reads that make no hub"). */
  readPassedThrough(cluster: string, verb: "get" | "list"): void {
    this.#counts.add("readsPassedThrough", { cluster, verb });
  }

  /** After a response: send the batch if one is due. */
  flushSoon(env: Env, waitUntil: ((promise: Promise<unknown>) => void) | undefined): void {
    if (this.#counts.empty || !waitUntil || Date.now() - this.#lastFlush < FLUSH_MS) return;
    waitUntil(this.flush(env));
  }

  /** Send what this isolate has counted now (before a scrape). */
  async flush(env: Env): Promise<void> {
    if (this.#counts.empty) return;
    this.#lastFlush = Date.now();
    const delta = this.#counts.take();
    try {
      await env.METRICS.getByName(REGISTRY).count(delta);
    } catch {
      this.#counts.merge(delta); // the next batch carries them
    }
  }
}
