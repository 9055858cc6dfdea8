/**
 * @module
 * One hub's numbers: its parts count what happens (upstream watches, relists, errors, events
 * in, deliveries out, cut-offs, resumes, quota refusals), and the reporter hands the counts to
 * the metrics registry with a snapshot of the hub — when the hub first watches, when it gains
 * its first subscriber or loses its last, within a second of its upstream's state changing, on
 * every heartbeat (30 s) and when it stops. A report that does not arrive is merged into the
 * next, so counts are late, never lost, while the hub lives. Subscribers' lag is sampled at each
 * report. It also keeps when the hub committed what: how long ago a subscriber's position was
 * passed, and, for a hot key's root, how long after it a replica committed the same events.
 */
import type { Log } from "../log.ts";
import type { CutoffReason, QuotaName, ResumeOutcome, Transport } from "./catalog.ts";
import { MetricSet } from "./metric-set.ts";
import { ScheduledReports, type ReportTimer } from "./scheduled-reports.ts";
import type { HubReport, HubSnapshot } from "./report.ts";

/** Where reports go: the registry's RPC method. */
export interface ReportSink {
  report(report: HubReport): Promise<unknown>;
}

/** What the reporter reads of the hub when it reports. */
export interface HubView {
  snapshot(): Omit<HubSnapshot, "hub" | "key" | "cluster" | "lastEventAt" | "lastError" | "subscribers">;
  /** Each subscriber (a client: a replica hub watching this one is not one), its transport, position and the bytes it has yet to take. */
  subscribers(): Iterable<{ transport: Transport; position: number; lagBytes: number }>;
}

/** Commits remembered for the lag in seconds: a subscriber further behind counts from the oldest. */
const COMMITS_KEPT = 4096;
const MESSAGE_MAX = 300;

export class HubReporter extends ScheduledReports {
  readonly #sink: ReportSink;
  readonly #timer: ReportTimer;
  readonly #identity: { hub: string; key: string; cluster: string; root?: string | undefined };
  readonly #log: Log;
  readonly #counts = new MetricSet();
  readonly #cluster: { cluster: string };
  /** The last event of each commit, and when: how long ago a position was passed. */
  #commits: Array<{ head: number; at: number }> = [];
  #lastEventAt: number | undefined;
  #lastError: HubSnapshot["lastError"];
  /** Events committed since the last report. */
  #committed = 0;
  /** Messages compressed since the last report (the gzip framings'). */
  #compressed = 0;
  /** Deliveries, counted here on the fan-out's hot path and folded into the counts at each report. */
  readonly #sent: Record<Transport, { events: number; messages: number }> = { websocket: { events: 0, messages: 0 }, http: { events: 0, messages: 0 } };
  /** What earlier reports folded in, since the hub's instance started: with what is pending, its totals (`totals`). */
  readonly #folded = { committed: 0, sent: { websocket: { events: 0, messages: 0 }, http: { events: 0, messages: 0 } } as Record<Transport, { events: number; messages: number }> };
  /** Lists sent gzip-coded since the hub's instance started (`totals`). */
  readonly #listsGzip = { compressed: 0, shared: 0 };
  view: HubView | undefined;

  constructor(sink: ReportSink, identity: { hub: string; key: string; cluster: string; root?: string | undefined }, log: Log, timer: ReportTimer) {
    super(timer);
    this.#sink = sink;
    this.#timer = timer;
    this.#identity = identity;
    this.#cluster = { cluster: identity.cluster };
    this.#log = log;
  }

  // What the hub's parts count.

  /** The reflector's observations of the upstream. */
  readonly upstream = {
    watch: (reconnect: boolean) => {
      this.#counts.add("watchRequests", this.#cluster);
      if (reconnect) this.#counts.add("reconnects", this.#cluster);
    },
    relisted: () => this.#counts.add("relists", this.#cluster),
    expired: () => this.#counts.add("expired", this.#cluster),
    stalled: () => this.#counts.add("stalls", this.#cluster),
    renewed: () => this.#counts.add("renewals", this.#cluster),
    failed: (status: number, message: string) => {
      this.#counts.add("upstreamErrors", { ...this.#cluster, code: status === 0 ? "connection" : String(status) });
      this.#lastError = { status, message: message.slice(0, MESSAGE_MAX), at: this.#timer.now() };
    },
  };

  /** A commit of `events`, the last of them at `head`. */
  committed(events: number, head: number): void {
    const at = this.#timer.now();
    // Summed here and labelled at the report, as sends are: commits are on the upstream reader's path.
    this.#committed += events;
    this.#lastEventAt = at;
    this.#commits.push({ head, at });
    if (this.#commits.length > 2 * COMMITS_KEPT) this.#commits = this.#commits.slice(-COMMITS_KEPT);
  }

  sent(transport: Transport, events: number, messages: number, compressed = 0): void {
    const sent = this.#sent[transport];
    sent.events += events;
    sent.messages += messages;
    this.#compressed += compressed;
  }

  /** A stream cut off; `lag`, where it was (a client's, sampled: a replica's lag is its own gauge). */
  cutOff(transport: Transport, reason: CutoffReason, lag: { position: number; bytes: number } | undefined): void {
    this.#counts.add("cutoffs", { ...this.#cluster, transport, reason });
    if (lag) this.#lag(transport, lag.position, lag.bytes, this.#timer.now());
  }

  resumed(outcome: ResumeOutcome): void {
    this.#counts.add("resumes", { ...this.#cluster, outcome });
  }

  /** A list went gzip-coded: compressed for its request, or `shared` from another's compression of the same page. */
  listCompressed(shared: boolean): void {
    this.#counts.add("listGzip", { ...this.#cluster, outcome: shared ? "shared" : "compressed" });
    this.#listsGzip[shared ? "shared" : "compressed"]++;
  }

  quotaRefused(quota: QuotaName): void {
    this.#counts.add("quotaRefusals", { ...this.#cluster, quota });
  }

  /**
   * Events committed and deliveries sent since the hub's instance started: one object's own
   * load, which the relay-wide counters (summed per cluster) cannot tell apart within a hot
   * key's tree. Read at a request, not on the hot path.
   */
  totals(): { committed: number; sent: Record<Transport, { events: number; messages: number }>; listsGzip: { compressed: number; shared: number } } {
    const sent = (t: Transport) => ({ events: this.#folded.sent[t].events + this.#sent[t].events, messages: this.#folded.sent[t].messages + this.#sent[t].messages });
    return { committed: this.#folded.committed + this.#committed, sent: { websocket: sent("websocket"), http: sent("http") }, listsGzip: { ...this.#listsGzip } };
  }

  // Reports (when: `ScheduledReports`; the hub is watching while its upstream watch runs).

  protected send(stopped: boolean): number | undefined {
    const view = this.view;
    if (!view) return undefined;
    const now = this.#timer.now();
    const subscribers: Record<Transport, number> = { websocket: 0, http: 0 };
    for (const s of view.subscribers()) {
      subscribers[s.transport]++;
      this.#lag(s.transport, s.position, s.lagBytes, now);
    }
    if (this.#committed > 0) this.#counts.add("events", this.#cluster, this.#committed);
    this.#folded.committed += this.#committed;
    this.#committed = 0;
    if (this.#compressed > 0) this.#counts.add("compressed", this.#cluster, this.#compressed);
    this.#compressed = 0;
    for (const [transport, sent] of Object.entries(this.#sent) as Array<[Transport, { events: number; messages: number }]>) {
      if (sent.events === 0 && sent.messages === 0) continue;
      const labels = { ...this.#cluster, transport };
      this.#counts.add("delivered", labels, sent.events);
      this.#counts.add("messages", labels, sent.messages);
      this.#folded.sent[transport].events += sent.events;
      this.#folded.sent[transport].messages += sent.messages;
      sent.events = sent.messages = 0;
    }
    const delta = this.#counts.take();
    const report: HubReport = {
      ...this.#identity,
      ...view.snapshot(),
      subscribers,
      lastEventAt: this.#lastEventAt,
      lastError: this.#lastError,
      delta,
      stopped,
    };
    this.#sink.report(report).catch((e: unknown) => {
      // Late, not lost: the next report carries these counts too.
      this.#counts.merge(delta);
      if (stopped) this.stopLost();
      this.#log("metrics report failed; its counts go with the next", { error: String(e) });
    });
    return subscribers.websocket + subscribers.http;
  }

  #lag(transport: Transport, position: number, bytes: number, now: number): void {
    const labels = { ...this.#cluster, transport };
    this.#counts.observe("lagBytes", labels, bytes);
    this.#counts.observe("lagSeconds", labels, this.#behindSince(position, now));
  }

  /** How far behind the hub a reader at `position` is, in seconds (0 when it has everything committed). */
  lagSeconds(position: number): number {
    return this.#behindSince(position, this.#timer.now());
  }

  /** The hub's last commit of events: the last event's resourceVersion, and when (what a replica tells its root). */
  lastCommit(): { head: number; at: number } | undefined {
    return this.#commits.at(-1);
  }

  /**
   * How long after this hub (a root) a replica committed the events up to `committed.head`, at
   * `committed.at` by its own clock, in seconds: 0 for a replica that has committed none.
   */
  commitLagSeconds(committed: { head: number; at: number } | undefined): number {
    if (!committed) return 0;
    // The commit here that held the replica's last event (one committed before the oldest kept
    // counts from that oldest: a replica that far behind is found by its watch's unsent events).
    const here = this.#commits[this.#firstAfter(committed.head - 1)];
    return here === undefined ? 0 : Math.max(0, (committed.at - here.at) / 1000);
  }

  /** Seconds since the first commit past `position` (0 when it has everything committed). */
  #behindSince(position: number, now: number): number {
    const first = this.#commits[this.#firstAfter(position)];
    return first === undefined ? 0 : Math.max(0, (now - first.at) / 1000);
  }

  /** The index of the first commit whose last event is after `position`. */
  #firstAfter(position: number): number {
    const commits = this.#commits;
    let lo = 0;
    let hi = commits.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (commits[mid]!.head <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
