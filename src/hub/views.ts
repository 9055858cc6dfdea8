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
 *
 * A window of objects can be tens of MB, more than an isolate holds for several: no frame
 * carries more than a part (`PART_BYTES`) of rows, past one row. A member knows the window its
 * client has; one that is behind (a window too large for one frame, frames held back from a
 * client that had not taken the last, a commit's changes too large to share) is sent the
 * difference to the group's window a part at a time, each once its client has taken what came
 * before, as a watch's initial state is. A group keeps no frame larger than a part.
 */
import { tableHead, tableRow, type TableResource } from "../k8s/table.ts";
import { applyChanges, compareRows, matches, VIEW_COLUMNS, windowChanges, type RowChange, type ViewRow, type ViewSpec } from "../k8s/view.ts";
import { badRequest, failure, internalError, type Result } from "../k8s/status.ts";
import type { KubeObject, Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";
import { SLICE } from "./fanout.ts";
import { LineBatch, type Subscriber } from "./subscriber.ts";
import type { IndexNeed, RowUpdate, ViewRows } from "./view-rows.ts";

/** Most a view's page (its window as one answer) may be: the answer is made whole, so past it the page is refused, saying how many rows fit. */
export const VIEW_PAGE_BYTES = 8 * 1024 * 1024;
/** Most rows' bytes a live view's frame carries, past its first row: what one send to a subscriber is (the fan-out's slice). */
export const PART_BYTES = SLICE;

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
  /** The window its client has, as sent (the group's own when it is in step); `undefined`: none yet, it is owed a `VIEW`. */
  has: readonly WindowRow[] | undefined;
  /** The count it was last sent. */
  count: number;
}

/** A row of a window as a group holds it: which object, at which version (what its changes are told by). */
interface WindowRow {
  readonly key: string;
  readonly rv: number;
}

const keyOf = (r: WindowRow) => r.key;
const versionOf = (r: WindowRow) => r.rv;

class Group {
  readonly spec: ViewSpec;
  readonly compare: (a: ViewRow, b: ViewRow) => number;
  readonly members = new Set<Member>();
  /** Keys and versions only (a window may be 500 rows, and a hub many groups), replaced when it changes: the last row whole, which changes are compared with. */
  window: readonly WindowRow[] = [];
  last: ViewRow | undefined;
  count: number;
  /** The whole window as one frame, per way of sending rows, while neither changes and it is no larger than a part: shared by the views that open on it. */
  readonly frames = new Map<RowsAs, LineBatch>();

  constructor(spec: ViewSpec, rows: ViewRows) {
    this.spec = spec;
    this.compare = compareRows(spec);
    this.read(rows);
    this.count = rows.count(spec);
  }

  /** Read the window again; the changes from the one held (which stays, the same array, when there are none). */
  read(rows: ViewRows): Array<RowChange<WindowRow>> {
    const stored = rows.window(this.spec);
    const next = stored.map(({ row, rv }) => ({ key: row.key, rv }));
    const changes = windowChanges(this.window, next, keyOf, versionOf);
    if (changes.length > 0) this.window = next;
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
  /** Ends a view's stream with an ERROR event carrying the Status (as the fan-out fails a watch), which detaches it. */
  readonly #fail: (subscriber: Subscriber, status: Status) => void;
  readonly #log: Log;
  /** Called after each frame sent (metrics). */
  onSent: (subscriber: Subscriber, messages: number) => void = () => undefined;

  constructor(source: ViewsSource, resource: TableResource, inFlight: number, fail: (subscriber: Subscriber, status: Status) => void, log: Log) {
    this.#source = source;
    this.#resource = resource;
    this.#inFlight = inFlight;
    this.#fail = fail;
    this.#log = log;
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

  /**
   * A view's window now, as the frame a GET answers (no view is opened), or the 400 that says it
   * is more than one answer may be (`VIEW_PAGE_BYTES`) and how many of its rows fit.
   */
  page(spec: ViewSpec): Result<string> {
    const existing = this.#groups.get(groupId(spec));
    const window = existing?.window ?? this.#source.rows.window(spec).map(({ row, rv }) => ({ key: row.key, rv }));
    const count = existing?.count ?? this.#source.rows.count(spec);
    const { frame, taken } = this.#viewFrame(spec, window, count, spec.rows, VIEW_PAGE_BYTES);
    if (taken === window.length) return { ok: true, value: frame };
    const fewer = taken > 0 ? `limit=${taken} or fewer, ` : "";
    return {
      ok: false,
      status: badRequest(
        `the view's page of ${window.length} rows as ${spec.rows === "object" ? "objects" : "cells"} is more than ${VIEW_PAGE_BYTES / 1024 / 1024} MiB, the most one answer may be (its first ${taken} fit): ask ${fewer}rows=cells, or watch=1, which sends a window in parts`,
      ),
    };
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
    const member: Member = { subscriber, rows: spec.rows, group, has: undefined, count: -1 };
    group.members.add(member);
    this.#members.set(subscriber, member);
    this.#catchUp(member);
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

  /**
   * A commit changed these rows: each group whose window they reach reads it again. Its members
   * in step with it get the difference and the count, one frame serialised once for all that
   * take rows alike (when it is no larger than a part); the others catch up.
   */
  changed(updates: readonly RowUpdate[]): void {
    for (const group of [...this.#groups.values()]) this.#guarded(group, () => this.#changedGroup(group, updates));
  }

  /** What a commit's row changes do to one group's window, sent to its members. */
  #changedGroup(group: Group, updates: readonly RowUpdate[]): void {
    let delta = 0;
    let touched = false;
    for (const { before, after } of updates) {
      delta += (after && matches(group.spec, after) ? 1 : 0) - (before && matches(group.spec, before) ? 1 : 0);
      touched ||= group.reaches(before) || group.reaches(after);
    }
    const was = { window: group.window, count: group.count };
    const changes = touched ? group.read(this.#source.rows) : [];
    group.count += delta;
    if (changes.length === 0 && delta === 0) return;
    group.frames.clear();
    // Per way of sending rows: the frame, or null where the changes are more than a part.
    const shared = new Map<RowsAs, LineBatch | null>();
    for (const member of group.members) {
      const inStep = member.has === was.window && member.count === was.count;
      if (inStep && member.subscriber.sink.backlog() <= this.#inFlight) {
        let batch = shared.get(member.rows);
        if (batch === undefined) {
          const { frame, taken } = this.#rowsFrame(group.count, changes, member.rows, PART_BYTES);
          batch = taken === changes.length ? LineBatch.of(frame) : null;
          shared.set(member.rows, batch);
        }
        if (batch) {
          member.has = group.window;
          member.count = group.count;
          this.#send(member, batch);
          continue;
        }
      }
      this.#catchUp(member);
    }
  }

  /** The collection started a new history: every view is sent its window afresh. */
  reset(): void {
    for (const group of [...this.#groups.values()])
      this.#guarded(group, () => {
        group.read(this.#source.rows);
        group.count = this.#source.rows.count(group.spec);
        group.frames.clear();
        for (const member of group.members) {
          member.has = undefined;
          this.#catchUp(member);
        }
      });
  }

  /** Clients took what was sent: members behind their group's window are sent more of what they lack. */
  wake(): void {
    for (const member of [...this.#members.values()]) if (this.#members.has(member.subscriber)) this.#guarded(member.group, () => this.#catchUp(member));
  }

  /**
   * Run `work` on one group; if it throws (a bug, a row that cannot be sent), the group's views
   * end with a 500 Status, which a client answers by opening its view again, and the other
   * groups are untouched: one window's failure costs no other view its frames, nor the commit.
   */
  #guarded(group: Group, work: () => void): void {
    try {
      work();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#log("view failed", { sort: group.spec.sort, filter: group.spec.filter, offset: group.spec.offset, limit: group.spec.limit, views: group.members.size, error: message }, "error");
      const status = internalError(`the view's window could not be sent (${message}): open it again`);
      for (const member of [...group.members]) {
        this.#fail(member.subscriber, status);
        // Gone from the group whether or not ending it detached it.
        this.remove(member.subscriber);
      }
    }
  }

  /**
   * Send `member` what its client lacks of its group's window, a part at a time, while its
   * client keeps up (its unacknowledged bytes within the in-flight bound): the window's first
   * part as a `VIEW` when it has none, then the changes from what it has, the count with each.
   */
  #catchUp(member: Member): void {
    const { group } = member;
    const sink = member.subscriber.sink;
    while (!sink.closed && sink.backlog() <= this.#inFlight) {
      if (member.has === undefined) {
        const { batch, taken } = this.#firstPart(group, member.rows);
        member.has = taken === group.window.length ? group.window : group.window.slice(0, taken);
        member.count = group.count;
        this.#send(member, batch);
        continue;
      }
      const changes = member.has === group.window ? [] : windowChanges(member.has, group.window, keyOf, versionOf);
      if (changes.length === 0) {
        member.has = group.window;
        if (member.count === group.count) return;
      }
      const { frame, taken } = this.#rowsFrame(group.count, changes, member.rows, PART_BYTES);
      member.has = taken === changes.length ? group.window : applyChanges(member.has, changes.slice(0, taken));
      member.count = group.count;
      this.#send(member, LineBatch.of(frame));
    }
  }

  #send(member: Member, batch: LineBatch): void {
    this.onSent(member.subscriber, member.subscriber.sink.send(batch));
  }

  /** The `VIEW` of the group's window, whole when it fits in a part (kept then, for the views that open on it), else its first part; and the rows it has. */
  #firstPart(group: Group, rows: RowsAs): { batch: LineBatch; taken: number } {
    const kept = group.frames.get(rows);
    if (kept) return { batch: kept, taken: group.window.length };
    const { frame, taken } = this.#viewFrame(group.spec, group.window, group.count, rows, PART_BYTES);
    const batch = LineBatch.of(frame);
    if (taken === group.window.length && frame.length <= PART_BYTES) group.frames.set(rows, batch);
    return { batch, taken };
  }

  /** `{"type":"VIEW",…}`: the window's first rows, as many as `budget` bytes hold (at least one), with the columns their cells are of. */
  #viewFrame(spec: ViewSpec, window: readonly WindowRow[], count: number, rows: RowsAs, budget: number): { frame: string; taken: number } {
    const now = Date.now();
    const columns = tableHead(this.#resource, {}, { version: "v1", includeObject: "None" }).columnDefinitions?.slice(0, VIEW_COLUMNS) ?? [];
    const head = JSON.stringify({ type: "VIEW", resourceVersion: String(this.#source.head()), count, offset: spec.offset, limit: spec.limit, columns });
    const body = this.#upTo(window, budget, (r) => this.#row(r, rows, now));
    return { frame: `${head.slice(0, -1)},"rows":[${body.join(",")}]}\n`, taken: body.length };
  }

  /** `{"type":"ROWS",…}`: the first of `changes` in the window, as many as `budget` bytes hold (at least one), and the count now. */
  #rowsFrame(count: number, changes: ReadonlyArray<RowChange<WindowRow>>, rows: RowsAs, budget: number): { frame: string; taken: number } {
    const now = Date.now();
    const body = this.#upTo(changes, budget, (c) => {
      if (c.op === "remove") return `{"op":"remove","at":${c.at}}`;
      if (c.op === "move") return `{"op":"move","from":${c.from},"to":${c.to}}`;
      return `{"op":"${c.op}","at":${c.at},"row":${this.#row(c.row, rows, now)}}`;
    });
    return { frame: `{"type":"ROWS","resourceVersion":"${this.#source.head()}","count":${count},"changes":[${body.join(",")}]}\n`, taken: body.length };
  }

  /** The first of `items`, serialised, as many as `budget` bytes hold and at least one. */
  #upTo<T>(items: readonly T[], budget: number, text: (item: T) => string): string[] {
    const out: string[] = [];
    let bytes = 0;
    for (const item of items) {
      const one = text(item);
      if (out.length > 0 && bytes + one.length > budget) break;
      out.push(one);
      bytes += one.length;
    }
    return out;
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
