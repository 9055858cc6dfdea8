/**
 * @module
 * A hub's live views (DESIGN.md, "Live views"): each is a window of the collection's rows in an
 * order and under a filter, with the count of rows that pass it, kept live by row changes.
 * Views that ask for the same window (sort, filter, offset, limit) share one group: one read of
 * the window, one frame per commit, serialised once for every member that takes rows alike.
 *
 * A commit touches a group's window only where a changed row, as it was or as it is, passes the
 * filter and sorts at or before the window's last row (or the window is not full): the rows of
 * the order up to there are otherwise the same. Only then is the window read again, through the
 * index of its order (`view-rows.ts`), and the difference sent as row changes; otherwise at most
 * its count changes, which is told from the rows alone. So an event costs each group a few
 * comparisons, and the groups it touches a read of one window.
 */
import { tableHead, tableRow, type TableResource } from "../k8s/table.ts";
import { compareRows, matches, VIEW_COLUMNS, windowChanges, type RowChange, type ViewRow, type ViewSpec } from "../k8s/view.ts";
import { failure, type Result } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { LineBatch, type Subscriber } from "./subscriber.ts";
import type { IndexNeed, RowUpdate, ViewRows } from "./view-rows.ts";

export interface ViewsSource {
  readonly rows: ViewRows;
  /** An object's JSON now, by key. */
  json(key: string): string | undefined;
  /** The resourceVersion the collection is at. */
  head(): number;
}

type RowsAs = ViewSpec["rows"];

interface Member {
  readonly subscriber: Subscriber;
  readonly rows: RowsAs;
  readonly group: Group;
  /** Frames were held back while its client was behind: it gets the whole window again once it has caught up. */
  stale: boolean;
}

/** A row of a window as a group holds it: which object, at which version (what its changes are told by). */
interface WindowRow {
  readonly key: string;
  readonly rv: number;
}

class Group {
  readonly spec: ViewSpec;
  readonly compare: (a: ViewRow, b: ViewRow) => number;
  readonly members = new Set<Member>();
  /** Keys and versions only (a window may be 500 rows, and a hub many groups): the last row whole, which changes are compared with. */
  window: WindowRow[] = [];
  last: ViewRow | undefined;
  count: number;
  /** The whole window as a frame, per way of sending rows, while neither the window nor the count changes. */
  readonly frames = new Map<RowsAs, string>();

  constructor(spec: ViewSpec, rows: ViewRows) {
    this.spec = spec;
    this.compare = compareRows(spec);
    this.read(rows);
    this.count = rows.count(spec);
  }

  /** Read the window again; the changes from the one held. */
  read(rows: ViewRows): Array<RowChange<WindowRow>> {
    const stored = rows.window(this.spec);
    const next = stored.map(({ row, rv }) => ({ key: row.key, rv }));
    const changes = windowChanges(
      this.window,
      next,
      (r) => r.key,
      (r) => r.rv,
    );
    this.window = next;
    this.last = stored.at(-1)?.row;
    return changes;
  }

  /** Whether `row` passes the filter and sorts into the window or before it. */
  reaches(row: ViewRow | undefined): boolean {
    if (!row || !matches(this.spec, row)) return false;
    return this.window.length < this.spec.limit || this.last === undefined || this.compare(row, this.last) <= 0;
  }
}

/** A group's identity: the window it reads (not how its members take rows). */
const groupId = (spec: ViewSpec): string => JSON.stringify([spec.sort, spec.filter, spec.offset, spec.limit]);

export class Views {
  readonly #source: ViewsSource;
  readonly #resource: TableResource;
  /** Unacknowledged bytes past which a member is sent nothing until it catches up (as the fan-out's in-flight bound). */
  readonly #inFlight: number;
  readonly #groups = new Map<string, Group>();
  readonly #members = new Map<Subscriber, Member>();
  /** Called after each frame sent (metrics). */
  onSent: (subscriber: Subscriber, messages: number) => void = () => undefined;

  constructor(source: ViewsSource, resource: TableResource, inFlight: number) {
    this.#source = source;
    this.#resource = resource;
    this.#inFlight = inFlight;
  }

  /** Whether any view is open (only then does the feed tell what each change does to rows). */
  get active(): boolean {
    return this.#groups.size > 0;
  }

  get size(): number {
    return this.#members.size;
  }

  /** `spec` with its anchor found: the window at that row's offset now, or the 404 that says the row is not one of the view's. */
  anchored(spec: ViewSpec): Result<ViewSpec> {
    if (spec.anchor === undefined) return { ok: true, value: spec };
    const offset = this.#source.rows.position(spec, spec.anchor);
    if (offset === undefined)
      return { ok: false, status: failure(404, "NotFound", `the view's anchor ${JSON.stringify(spec.anchor)} is not one of its rows: there is no such object, or it does not pass the view's filter`) };
    return { ok: true, value: { sort: spec.sort, filter: spec.filter, offset, limit: spec.limit, rows: spec.rows } };
  }

  /** A view's window now, as the frame a GET answers (no view is opened). */
  page(spec: ViewSpec): string {
    const existing = this.#groups.get(groupId(spec));
    const window = existing?.window ?? this.#source.rows.window(spec).map(({ row, rv }) => ({ key: row.key, rv }));
    const count = existing?.count ?? this.#source.rows.count(spec);
    return this.#viewFrame(spec, window, count, spec.rows);
  }

  /** Open `subscriber`'s view: it is sent the window now, then its changes. */
  open(subscriber: Subscriber, spec: ViewSpec): void {
    const id = groupId(spec);
    let group = this.#groups.get(id);
    if (!group) {
      group = new Group(spec, this.#source.rows);
      this.#groups.set(id, group);
      this.#source.rows.hold(spec);
    }
    const member: Member = { subscriber, rows: spec.rows, group, stale: false };
    group.members.add(member);
    this.#members.set(subscriber, member);
    this.#send(member, this.#wholeFrame(group, member.rows));
  }

  /** What opening a view of this order would take: an index to be built first, or one that cannot be (`ViewRows.need`). */
  indexNeed(spec: ViewSpec): IndexNeed {
    return this.#source.rows.need(spec);
  }

  /** Indexes of views' orders no open view reads through and none has for `idleMs`, dropped (`ViewRows.retire`); their names. */
  retireIndexes(idleMs: number): string[] {
    return this.#source.rows.retire(idleMs);
  }

  /** The view's subscriber left. Idempotent. */
  remove(subscriber: Subscriber): void {
    const member = this.#members.get(subscriber);
    if (!member) return;
    this.#members.delete(subscriber);
    member.group.members.delete(member);
    if (member.group.members.size > 0) return;
    this.#groups.delete(groupId(member.group.spec));
    this.#source.rows.release(member.group.spec);
  }

  /** A commit changed these rows: each group whose window they reach reads it again; its members get the difference and the count. */
  changed(updates: readonly RowUpdate[]): void {
    for (const group of this.#groups.values()) {
      let delta = 0;
      let touched = false;
      for (const { before, after } of updates) {
        delta += (after && matches(group.spec, after) ? 1 : 0) - (before && matches(group.spec, before) ? 1 : 0);
        touched ||= group.reaches(before) || group.reaches(after);
      }
      const changes = touched ? group.read(this.#source.rows) : [];
      group.count += delta;
      if (changes.length === 0 && delta === 0) continue;
      group.frames.clear();
      const frames = new Map<RowsAs, string>();
      for (const member of group.members) {
        if (member.stale) continue;
        let frame = frames.get(member.rows);
        if (frame === undefined) {
          frame = this.#rowsFrame(group.count, changes, member.rows);
          frames.set(member.rows, frame);
        }
        this.#send(member, frame);
      }
    }
  }

  /** The collection started a new history: every view is sent its window afresh. */
  reset(): void {
    for (const group of this.#groups.values()) {
      group.read(this.#source.rows);
      group.count = this.#source.rows.count(group.spec);
      group.frames.clear();
      for (const member of group.members) {
        member.stale = false;
        this.#send(member, this.#wholeFrame(group, member.rows));
      }
    }
  }

  /** Clients took what was sent: a member held back that has caught up gets its window whole. */
  wake(): void {
    for (const member of this.#members.values()) {
      if (!member.stale || member.subscriber.sink.backlog() > this.#inFlight) continue;
      member.stale = false;
      this.#send(member, this.#wholeFrame(member.group, member.rows));
    }
  }

  #send(member: Member, frame: string): void {
    const sink = member.subscriber.sink;
    if (sink.backlog() > this.#inFlight) {
      member.stale = true;
      return;
    }
    this.onSent(member.subscriber, sink.send(LineBatch.of(frame)));
  }

  #wholeFrame(group: Group, rows: RowsAs): string {
    let frame = group.frames.get(rows);
    if (frame === undefined) {
      frame = this.#viewFrame(group.spec, group.window, group.count, rows);
      group.frames.set(rows, frame);
    }
    return frame;
  }

  /** `{"type":"VIEW",…}`: the window whole, with the columns its rows' cells are of. */
  #viewFrame(spec: ViewSpec, window: readonly WindowRow[], count: number, rows: RowsAs): string {
    const now = Date.now();
    const columns = tableHead(this.#resource, {}, { version: "v1", includeObject: "None" }).columnDefinitions?.slice(0, VIEW_COLUMNS) ?? [];
    const head = JSON.stringify({ type: "VIEW", resourceVersion: String(this.#source.head()), count, offset: spec.offset, limit: spec.limit, columns });
    const body = window.map((r) => this.#row(r, rows, now)).join(",");
    return `${head.slice(0, -1)},"rows":[${body}]}\n`;
  }

  /** `{"type":"ROWS",…}`: what changed in the window, in order, and the count now. */
  #rowsFrame(count: number, changes: ReadonlyArray<RowChange<WindowRow>>, rows: RowsAs): string {
    const now = Date.now();
    const body = changes
      .map((c) => {
        if (c.op === "remove") return `{"op":"remove","at":${c.at}}`;
        if (c.op === "move") return `{"op":"move","from":${c.from},"to":${c.to}}`;
        return `{"op":"${c.op}","at":${c.at},"row":${this.#row(c.row, rows, now)}}`;
      })
      .join(",");
    return `{"type":"ROWS","resourceVersion":"${this.#source.head()}","count":${count},"changes":[${body}]}\n`;
  }

  /** One row as sent: the object whole, or its Table cells as of `now` (with its creation time, for ages that tick on). */
  #row({ key, rv }: WindowRow, rows: RowsAs, now: number): string {
    const json = this.#source.json(key) ?? "null";
    const head = `{"key":${JSON.stringify(key)},"resourceVersion":"${rv}"`;
    if (rows === "object") return `${head},"object":${json}}`;
    const object = JSON.parse(json) as KubeObject;
    const cells = tableRow(this.#resource, object, { version: "v1", includeObject: "None" }, now).cells;
    return `${head},"creationTimestamp":${JSON.stringify(object.metadata?.creationTimestamp ?? null)},"cells":${JSON.stringify(cells)}}`;
  }
}
