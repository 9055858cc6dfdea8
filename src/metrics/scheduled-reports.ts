/**
 * @module
 * When a hub's reporter hands its counts and a snapshot to the metrics registry: as soon as the
 * hub has something to show (the registry hears of it then, not at its first heartbeat), again
 * when it gains its first client or loses its last, on every heartbeat, and once when it stops.
 * A stop whose report failed leaves the hub to be announced again by the next report.
 */
export abstract class ScheduledReports {
  #announced = false;
  /** Whether the last report counted any client. */
  #hadClients = false;

  /** After anything that may have changed the picture (`clients`: the hub's subscribers or followers now). */
  watching(clients: number): void {
    if (!this.#announced || clients > 0 !== this.#hadClients) this.#report(false);
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
    this.#announced = !stopped;
    this.#hadClients = clients > 0;
  }
}
