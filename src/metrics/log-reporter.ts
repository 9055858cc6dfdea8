/**
 * @module
 * One log hub's numbers, as a watch hub's reporter does it for a watch hub: its parts count
 * (upstream requests by kind, lines read, lines sent, cut-offs, quota refusals) and the reporter
 * hands the counts to the metrics registry with a snapshot of the hub (followers by transport,
 * whether its stream is open, its buffer's bytes) when it starts or stops streaming, when it gains
 * its first follower or loses its last, and on every heartbeat. A report that fails is merged
 * into the next.
 */
import type { Log } from "../log.ts";
import type { QuotaName, Transport } from "./catalog.ts";
import { MetricSet } from "./metric-set.ts";
import { ScheduledReports, type ReportTimer } from "./scheduled-reports.ts";
import type { LogHubReport, LogHubSnapshot } from "./report.ts";

export interface LogReportSink {
  reportLog(report: LogHubReport): Promise<unknown>;
}

export type LogView = () => Pick<LogHubSnapshot, "followers" | "streaming" | "bufferBytes">;

export class LogReporter extends ScheduledReports {
  readonly #sink: LogReportSink;
  readonly #identity: { hub: string; key: string; cluster: string };
  readonly #cluster: { cluster: string };
  readonly #log: Log;
  readonly #counts = new MetricSet();
  /** Lines read since the last report, summed on the stream's path and labelled at the report. */
  #read = 0;
  readonly #sent: Record<Transport, number> = { websocket: 0, http: 0 };
  view: LogView | undefined;

  constructor(sink: LogReportSink, identity: { hub: string; key: string; cluster: string }, log: Log, timer: ReportTimer) {
    super(timer);
    this.#sink = sink;
    this.#identity = identity;
    this.#cluster = { cluster: identity.cluster };
    this.#log = log;
  }

  requested(kind: "follow" | "history"): void {
    this.#counts.add("logUpstreamRequests", { ...this.#cluster, kind });
  }

  read(lines: number): void {
    this.#read += lines;
  }

  sent(transport: Transport, lines: number): void {
    this.#sent[transport] += lines;
  }

  cutOff(reason: "slow" | "buffer"): void {
    this.#counts.add("logCutoffs", { ...this.#cluster, reason });
  }

  quotaRefused(quota: QuotaName): void {
    this.#counts.add("quotaRefusals", { ...this.#cluster, quota });
  }

  // Reports (when: `ScheduledReports`; the hub is watching while it streams or is followed).

  protected send(stopped: boolean): number | undefined {
    const view = this.view;
    if (!view) return undefined;
    const snapshot = view();
    if (this.#read > 0) this.#counts.add("logLines", this.#cluster, this.#read);
    this.#read = 0;
    for (const transport of ["websocket", "http"] as const) {
      if (this.#sent[transport] > 0) this.#counts.add("logDelivered", { ...this.#cluster, transport }, this.#sent[transport]);
      this.#sent[transport] = 0;
    }
    const delta = this.#counts.take();
    this.#sink.reportLog({ ...this.#identity, ...snapshot, delta, stopped }).catch((e: unknown) => {
      this.#counts.merge(delta);
      if (stopped) this.stopLost();
      this.#log("metrics report failed; its counts go with the next", { error: String(e) });
    });
    return snapshot.followers.websocket + snapshot.followers.http;
  }
}
