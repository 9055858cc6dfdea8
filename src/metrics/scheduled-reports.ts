/**
 * @module
 * When a hub's reporter hands its counts and a snapshot to the metrics registry: as soon as the
 * hub has something to show (the registry hears of it then, not at its first heartbeat), again
 * when it gains its first client or loses its last, within a second of a change the snapshot
 * shows (its upstream's state: at most one such report a second, so a flapping upstream costs
 * the one registry little), on every heartbeat, and once when it stops. A stop whose report
 * failed leaves the hub to be announced again by the next report.
 */

/** How soon a change is reported, and the least time between a report and one for a change. */
export const CHANGE_REPORT_MS = 1_000;

/** The time reports are scheduled on (the hub's clock). */
export interface ReportTimer {
  now(): number;
  after(ms: number, run: () => void): () => void;
}

export abstract class ScheduledReports {
  readonly #timer: ReportTimer;
  #announced = false;
  /** Whether the last report counted any client. */
  #hadClients = false;
  /** When the last report was sent. */
  #lastAt = Number.NEGATIVE_INFINITY;
  /** A report for a change, due. */
  #due: (() => void) | undefined;

  constructor(timer: ReportTimer) {
    this.#timer = timer;
  }

  /** After anything that may have changed the picture (`clients`: the hub's subscribers or followers now). */
  watching(clients: number): void {
    if (!this.#announced || clients > 0 !== this.#hadClients) this.#report(false);
  }

  /**
   * Something the snapshot shows has changed: reported now, or, a report having gone less than
   * `CHANGE_REPORT_MS` ago, that long after it. A hub not in the registry (not yet announced, or
   * stopped) shows it in its next announcement.
   */
  changed(): void {
    if (!this.#announced || this.#due) return;
    const wait = this.#lastAt + CHANGE_REPORT_MS - this.#timer.now();
    if (wait <= 0) {
      this.#report(false);
      return;
    }
    this.#due = this.#timer.after(wait, () => {
      this.#due = undefined;
      if (this.#announced) this.#report(false);
    });
  }

  /** The heartbeat. */
  beat(): void {
    this.#report(false);
  }

  /** The hub stopped: it leaves the registry's gauges and index. */
  stopped(): void {
    this.#report(true);
  }

  /** Send a report (`stopped`: the hub's last); the clients it counted, or `undefined` when there is nothing to report yet. */
  protected abstract send(stopped: boolean): number | undefined;

  /** A stop's report failed: the next report announces the hub again. */
  protected stopLost(): void {
    this.#announced = false;
  }

  #report(stopped: boolean): void {
    const clients = this.send(stopped);
    if (clients === undefined) return;
    // This report shows every change so far: one due for them is not needed.
    this.#due?.();
    this.#due = undefined;
    this.#lastAt = this.#timer.now();
    this.#announced = !stopped;
    this.#hadClients = clients > 0;
  }
}
