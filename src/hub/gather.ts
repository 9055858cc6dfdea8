/**
 * @module
 * How long a hub gathers upstream events before it commits them and sends them on. Upstream
 * chunks arrive one per turn of the runtime's event loop, and every commit is a durable write
 * (locally an fsync on the one thread that runs every hub) and a message per subscriber, so a
 * commit should carry what arrived together. Three parts:
 *
 * - A base that grows with the subscribers (`gatherMs`).
 * - An extra, which every gather lasts at least while the runtime is late: when the gather's own
 *   timer fires well after it was due, the thread is saturated (many hubs, or one busy one),
 *   events queue anyway, and fewer, larger commits are what gets it out. It grows by the
 *   lateness, to at most 100 ms, or for a hub whose events come too slowly for a few of them in
 *   that, to what gathers a few (at most 250 ms); it eases off once timers are on time again.
 * - The rest of a burst (`more`): a watch's events reach the hub a chunk a turn, and an API server
 *   flushes each event of a burst as a chunk of its own, so a burst of hundreds takes tens of ms
 *   to read. A gather whose events are still coming back to back when its time is up waits
 *   until they pause (`BURST_GAP_MS`), for at most 4 times its base (`MAX_BURST_MS` at most):
 *   cut off at the base, the rest of the burst is read one chunk a turn between the fan-out's
 *   turns, and leaves in commits of a few events, a message each to every subscriber. A lone
 *   event, or events a pause apart, are committed at the gather time as before.
 *
 * A hot key's tree gathers once, at its root, as one hub of all the key's subscribers would (its
 * replicas' last reports counted): a replica commits what the root sent as it comes
 * (`replicaGather`). A second gather
 * in series would add its wait, and its own lateness extra, to every event a replica's
 * subscribers get; and a busy replica needs none, for what it has not read of the root's stream
 * reaches it as one chunk.
 *
 * A merged key's events are gathered first by its members' hubs, each with its lateness extra
 * (their commits are what reach the merge hub, a chunk each): the merge hub gathers its base, for
 * its own subscribers, and the rest of a burst, but takes no lateness extra of its own
 * (`lateExtra: false`). With it, the two extras came in series, and a visible row's change on a
 * merged key waited up to twice as long as on its cluster's own key.
 *
 * What it bought in the benchmark's many keys, and what it costs: docs/decisions/0001.
 */

/** A timer later than this (ms) means the runtime is behind. */
export const LATE_MS = 20;
/** The longest gather the lateness may bring (ms) to a hub whose events come fast: a bound on what it costs an event's latency. */
export const MAX_EXTRA_MS = 100;
/**
 * A slow hub's longer bound (ms). A commit's cost is mostly fixed (locally the fsync), so a late
 * hub should gather `FEW_EVENTS` a commit: one whose events come slower than that in
 * `MAX_EXTRA_MS` may gather up to this long. A fast hub's bound, and its latency, are unchanged.
 */
export const MAX_SLOW_EXTRA_MS = 250;
/** What a late hub's commit should carry, where its gather's bound allows. */
export const FEW_EVENTS = 5;
/** How much the extra eases off per commit whose timer was on time (ms). */
export const EASE_MS = 5;
/** Events that come within this long of the one before are of one burst (ms): the gather waits for its rest. */
export const BURST_GAP_MS = 5;
/** How many times its base a gather may last while a burst's events keep coming. */
export const BURST_BASES = 4;
/** The longest a gather lasts for a burst's events that keep coming (ms), unless the lateness extra is longer. */
export const MAX_BURST_MS = 100;

/**
 * The base gather for a hub's subscribers: 1 ms per 20 of them (each commit costs each
 * subscriber a message, which workerd charges some 30-50 µs for), so the messages a hub sends a
 * second stay roughly constant whatever its size; at least 1 ms, at most 50 ms.
 */
export function gatherMs(subscribers: number): number {
  return Math.min(50, Math.max(1, subscribers / 20));
}

/** How long a hub's next commit gathers, told how each gather went (the feed's timer). */
export interface CommitGather {
  /** How long to gather from now (ms). */
  readonly ms: number;
  /**
   * How much longer (ms) to go on gathering at the gather's time (0: commit now): it began
   * `elapsedMs` ago, and its last event came `quietMs` ago, after its first (`burst`).
   */
  more(elapsedMs: number, quietMs: number, burst: boolean): number;
  /** The gather's timer fired `lateMs` after it was due, having gathered `events` in `elapsedMs`. */
  fired(lateMs: number, events: number, elapsedMs: number): void;
}

/** A hub's gather: its base, longer while the runtime is late (unless `lateExtra` is false: a merge hub's). */
export class Gather implements CommitGather {
  readonly #base: () => number;
  readonly #lateExtra: boolean;
  #extra = 0;

  constructor(base: () => number, { lateExtra = true }: { lateExtra?: boolean } = {}) {
    this.#base = base;
    this.#lateExtra = lateExtra;
  }

  get ms(): number {
    return Math.max(this.#base(), this.#extra);
  }

  more(elapsedMs: number, quietMs: number, burst: boolean): number {
    if (!burst || quietMs >= BURST_GAP_MS) return 0;
    const longest = Math.max(this.ms, Math.min(MAX_BURST_MS, BURST_BASES * this.#base()));
    return Math.max(0, Math.min(BURST_GAP_MS - quietMs, longest - elapsedMs));
  }

  fired(lateMs: number, events: number, elapsedMs: number): void {
    if (!this.#lateExtra) return;
    if (lateMs <= LATE_MS) {
      this.#extra = Math.max(0, this.#extra - EASE_MS);
      return;
    }
    // Long enough, at the rate the events came, for a commit to carry a few.
    const bound = Math.min(MAX_SLOW_EXTRA_MS, Math.max(MAX_EXTRA_MS, (FEW_EVENTS * elapsedMs) / Math.max(1, events)));
    this.#extra = Math.max(this.#extra, Math.min(bound, this.#extra + lateMs));
  }
}

/** A replica's gather: none, what arrived in one turn of its event loop committed together (the root gathered it). */
export function replicaGather(): CommitGather {
  return { ms: 0, more: () => 0, fired: () => undefined };
}
