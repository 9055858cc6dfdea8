/**
 * @module
 * A hot key's tree, as its root hub keeps it: the replica hubs that serve its subscribers, what
 * each last reported (subscribers, how far it is), and where new subscribers go. The root keeps
 * the one upstream watch, the collection and the window; each replica watches the root (as any
 * subscriber, over the relay's own list+watch, with the upstream's resourceVersions unchanged)
 * and serves its share of the key's subscribers with the same contract. A key starts with the
 * root alone; once it has `perHub` subscribers, new ones go to replicas of the region they come
 * from, as many as `perHub` a replica, and it goes back to the root alone when the replicas have
 * emptied to half of that (so a key near the threshold does not flap). Replicas that are not
 * chosen any more keep their subscribers until those leave, then stop as any idle hub does.
 */

/** A hub that is a replica of its key's root (whose name is the key's): its own name and region. */
export interface ReplicaRole {
  name: string;
  region: string;
}

/** What a replica tells its root, on every change of its subscribers and on its heartbeat. */
export interface ReplicaReport {
  /** The replica's hub name. */
  name: string;
  region: string;
  subscribers: number;
  /** The resourceVersion it has reached. */
  head: number;
  /** Its last commit of events: the last event's resourceVersion, and when (epoch ms, by its clock); none yet, absent. */
  committed?: { head: number; at: number } | undefined;
}

/** A replica as its root knows it: its last report, and how long after the root it committed what that report says it committed. */
export interface ReplicaState extends ReplicaReport {
  commitLagSeconds: number;
}

/** A replica a root names for new subscribers, with the subscribers it last reported (0: not made yet, or empty). */
export interface NamedReplica {
  name: string;
  subscribers: number;
}

/** How long a replica's last report counts: three of its heartbeats. */
const REPORT_TTL_MS = 90_000;

export class Replicas {
  readonly #root: string;
  readonly #perHub: number;
  readonly #now: () => number;
  readonly #reports = new Map<string, { report: ReplicaState; at: number }>();
  /** New subscribers go to replicas. */
  #spread = false;

  constructor(root: string, perHub: number, now: () => number) {
    this.#root = root;
    this.#perHub = perHub;
    this.#now = now;
  }

  /** A replica's report, and how long after the root it committed what it reports (measured as it arrives, while the root's commits of those events are still known). */
  report(report: ReplicaReport, commitLagSeconds: number): void {
    if (report.subscribers === 0) this.#reports.delete(report.name);
    else this.#reports.set(report.name, { report: { ...report, commitLagSeconds }, at: this.#now() });
  }

  /** The live replicas' last reports. */
  live(): ReplicaState[] {
    const now = this.#now();
    for (const [name, { at }] of this.#reports) if (now - at > REPORT_TTL_MS) this.#reports.delete(name);
    return [...this.#reports.values()].map((r) => r.report);
  }

  /** The subscribers the live replicas serve, as they last reported. */
  subscribers(): number {
    return served(this.live());
  }

  /**
   * The replicas a new subscriber from `region` may go to, with what each holds (the emptiest is
   * picked), or none: the root serves it. That region's replicas, as many as its subscribers
   * fill and one more. `own`: the subscribers the root serves itself, replicas not counted.
   */
  placement(region: string, own: number): NamedReplica[] {
    const live = this.live();
    const total = own + served(live);
    if (!this.#spread && total >= this.#perHub) this.#spread = true;
    else if (this.#spread && total < this.#perHub / 2) this.#spread = false;
    if (!this.#spread) return [];
    const reported = new Map(live.filter((r) => r.region === region).map((r) => [r.name, r.subscribers]));
    const here = [...reported.values()].reduce((n, s) => n + s, 0);
    const count = Math.max(1, Math.ceil((here + 1) / this.#perHub));
    return Array.from({ length: count }, (_, i) => {
      const name = replicaName(this.#root, region, i + 1);
      return { name, subscribers: reported.get(name) ?? 0 };
    });
  }
}

/** The subscribers `reports` say their replicas serve. */
function served(reports: readonly ReplicaReport[]): number {
  return reports.reduce((n, r) => n + r.subscribers, 0);
}

/**
 * The replica a new subscriber goes to: the one holding fewest (the first of those), counted as
 * holding it from now on. Filling the emptiest, rather than taking the named in turn, keeps a
 * replica that was full when named from taking a share of every later wave.
 */
export function emptiest(replicas: NamedReplica[]): NamedReplica {
  let pick = replicas[0] as NamedReplica;
  for (const replica of replicas) if (replica.subscribers < pick.subscribers) pick = replica;
  pick.subscribers++;
  return pick;
}

/** The header of a root's answer that names the replicas a request goes to instead, with their subscribers (`NamedReplica[]` as JSON). */
export const REPLICAS_HEADER = "x-relay-replicas";

/** A replica's hub name: its root's, its region's and its number. */
export function replicaName(root: string, region: string, n: number): string {
  return `${root}#${region}-${n}`;
}

/** Whether `name` is a replica hub's name (`replicaName`) of the key whose root is `root`. */
export function isReplicaOf(name: string, root: string): boolean {
  return name.startsWith(`${root}#`) && /^[^#]+-\d+$/.test(name.slice(root.length + 1));
}

/** How soon after its subscribers change a replica tells its root: at most this often. */
const REPORT_EVERY_MS = 1000;

/**
 * A replica's reports to its root: soon after its subscribers change (at most one a second),
 * so the root places new subscribers by what replicas hold, and on every heartbeat, so the root
 * knows it lives. A report that fails is made again by the next.
 */
export class RootReports {
  readonly #send: (report: ReplicaReport) => Promise<unknown>;
  readonly #current: () => ReplicaReport;
  readonly #after: (ms: number, run: () => void) => () => void;
  #pending: (() => void) | undefined;
  #last: number | undefined;

  constructor(send: (report: ReplicaReport) => Promise<unknown>, current: () => ReplicaReport, after: (ms: number, run: () => void) => () => void) {
    this.#send = send;
    this.#current = current;
    this.#after = after;
  }

  /** The replica's subscribers may have changed. */
  changed(): void {
    if (this.#pending || this.#current().subscribers === this.#last) return;
    this.#pending = this.#after(REPORT_EVERY_MS, () => {
      this.#pending = undefined;
      this.beat();
    });
  }

  /** Report now. */
  beat(): void {
    const report = this.#current();
    this.#last = report.subscribers;
    this.#send(report).catch(() => {
      this.#last = undefined;
    });
  }
}
