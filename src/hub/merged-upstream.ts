/**
 * @module
 * A merge hub's upstream (DESIGN.md, "One watch across clusters"): its members' hubs for the
 * same collection, each reached as a replica reaches its root (`root-upstream.ts`), so a member
 * cluster keeps one upstream watch per key however many merged keys read it. It serves one list
 * and one watch in a sequence of its own (an integer that only grows), and records in the merge
 * hub's SQLite where each member was at each number (`merge-points.ts`), so the hub resumes
 * exactly, or is told 410 and relists as from any upstream. A member that does not answer is
 * said so (`behind`) and retried on its own; it never holds the others up. A list it does not
 * answer keeps its objects as the merge hub has them, at its position then; one with no
 * position there leaves it out.
 */
import { Backoff, REFLECTOR_BACKOFF } from "../k8s/backoff.ts";
import { bookmarkLine, errorLine, eventLine, parseEventLine } from "../k8s/event.ts";
import { hubName, metaNamespaceKey, upstreamCollectionUrl, type WatchKey } from "../k8s/key.ts";
import { mergedName, mergedObject } from "../k8s/members.ts";
import { LineSplitter } from "../k8s/ndjson.ts";
import { objectVersion } from "../k8s/rv.ts";
import { expired, serviceUnavailable, statusResponse, tooOldResourceVersion } from "../k8s/status.ts";
import type { KubeObject, Status, WatchEventType } from "../k8s/types.ts";
import type { Upstream } from "../upstream.ts";
import type { Clock, Cancel } from "./clock.ts";
import { openList } from "./list-reader.ts";
import type { MergePoints, Positions } from "./merge-points.ts";
import { rootUpstream, type HubByName } from "./root-upstream.ts";
import { upstreamFailure } from "./upstream-error.ts";

/** How long a member has to answer before the others go on without it (and it is said to be behind). */
export const MEMBER_WAIT_MS = 1000;
/** How often the merged watch says where it is when nothing else happens (the hub's stall check needs bytes). */
const KEEPALIVE_MS = 1000;
/**
 * How often the merged watch asks its members' hubs whether their own upstream watch runs: a
 * member hub whose cluster is unreachable keeps its stream to the merge hub open, and quiet.
 */
export const MEMBER_CHECK_MS = 2000;

/** What a member's hub says its upstream is doing (`watching`, `backoff`, …), by the hub's name; `undefined` when it holds nothing. */
export type MemberState = (hub: string) => Promise<string | undefined>;
/** Where a member's hub is once it holds what its cluster had when asked (`WatchHub.readPoint`), by the hub's name; `undefined` when it cannot say. */
export type MemberPoint = (hub: string) => Promise<number | undefined>;

export interface MergedUpstream extends Upstream {
  /** The members whose changes are not arriving now, sorted. */
  behind(): string[];
  /** Told when the members behind have changed: the merged watch has moved on to `rv` (a BOOKMARK) to say so. */
  onBehindChanged?: ((rv: number) => void) | undefined;
  /**
   * For a consistent read: the merged resourceVersion by which the merged watch has taken in
   * every change each member's cluster had committed when asked, and the members it could not
   * say that of within `MEMBER_WAIT_MS` (or already behind), which the read does not wait for.
   */
  current(): Promise<{ rv: number; late: string[] }>;
}

type OpenedList = Awaited<ReturnType<typeof openList>>;

/** The merge hub's own objects named `<prefix>…` now (`prefix`: `<cluster>:`), in key order: up to `limit` after `afterKey` (`Collection.named`). */
export type HeldObjects = (prefix: string, afterKey: string, limit: number) => { rows: ReadonlyArray<{ key: string; json: string }>; more: boolean };
/** How many of a member's held objects a list reads at a time (and no more than a read's bytes). */
const HELD_PAGE = 500;

/**
 * The merged upstream of `key` (whose cluster is the members'), for the merge hub `self`;
 * `hub`: its committed resourceVersion (which a new number must pass), and its objects of a member.
 */
export function mergedUpstream(
  key: WatchKey,
  members: readonly string[],
  self: string,
  hubs: { byName: HubByName; state: MemberState; point: MemberPoint },
  points: MergePoints,
  hub: { head: () => number; held: HeldObjects },
  clock: Clock,
): MergedUpstream {
  const hubHead = hub.head;
  const names = new Map(members.map((member) => [member, hubName({ ...key, cluster: member })]));
  const upstreams = new Map(members.map((member) => [member, rootUpstream({ ...key, cluster: member }, names.get(member)!, self, hubs.byName)]));
  /** Members the merge hub cannot read, and why. */
  const behind = new Map<string, string>();
  /** Members whose hub is read, but cannot read its cluster. */
  const clusterBehind = new Set<string>();
  const url = upstreamCollectionUrl(key);
  const listUrl = upstreamCollectionUrl(key, { resourceVersion: "0" });
  let kind = "";
  let apiVersion = "";
  /** The open watch's last number, and where it has each member, while one is open. */
  let streaming: { last: () => number; positions: Positions } | undefined;
  /** Told when a member's position in the open watch has moved, or another watch has opened (consistent reads wait on it). */
  const moved = new Set<() => void>();
  const tellMoved = () => {
    for (const check of [...moved]) check();
  };
  let generation = 0;

  /** A new number: past every one given out, and past the hub's head. A new history starts at the time in ms, past any an earlier one (a reclaimed hub's) gave out. */
  const nextAfter = (last: number) => Math.max(last, hubHead()) + 1;
  const firstNumber = () => {
    const last = points.last();
    return last === 0 ? Math.max(clock.now(), hubHead() + 1) : nextAfter(last);
  };

  /** A member's list, once its head has arrived, or `undefined` (and the member behind) if it fails or does not answer within `MEMBER_WAIT_MS`. */
  async function openMember(member: string): Promise<OpenedList | undefined> {
    let late = false;
    let timer: Cancel | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = clock.after(MEMBER_WAIT_MS, () => {
        late = true;
        resolve(undefined);
      });
    });
    const opening = (async () => {
      // As its hub holds it (`resourceVersion=0`): a member's list waits for no check of its cluster, which its watch then follows from there.
      const response = await upstreams.get(member)!.fetch(listUrl);
      if (late) {
        void response.body?.cancel().catch(() => undefined);
        return undefined;
      }
      if (!response.ok) throw await upstreamFailure(response, listUrl, clock.now());
      const list = await openList(response, listUrl);
      if (late) list.cancel();
      return late ? undefined : list;
    })();
    try {
      const list = await Promise.race([opening, timedOut]);
      if (list) behind.delete(member);
      else behind.set(member, `no answer within ${MEMBER_WAIT_MS} ms`);
      return list;
    } catch (e) {
      behind.set(member, (e as Error).message);
      return undefined;
    } finally {
      timer?.();
    }
  }

  /** A member's object as the merged key has it: its merged key, and its line at `rv` (or the number it kept, `keep`). */
  function merged(member: string, object: KubeObject, fallback: number, keep: boolean): { key: string; rv: number; json: string; clusterRv: number } {
    const key = metaNamespaceKey(object.metadata?.namespace, mergedName(member, object.metadata?.name ?? ""));
    const clusterRv = objectVersion(object) ?? 0;
    const rv = (keep ? points.numbered(key, clusterRv) : undefined) ?? fallback;
    return { key, rv, json: JSON.stringify(mergedObject(member, object, rv)), clusterRv };
  }

  async function list(query: URLSearchParams): Promise<Response> {
    if (query.has("continue") || query.get("resourceVersionMatch") === "Exact") return statusResponse(expired("a merged key lists only its current state"));
    const opened = await Promise.all(members.map(async (member) => ({ member, list: await openMember(member) })));
    const answered = opened.filter((o): o is { member: string; list: OpenedList } => o.list !== undefined);
    if (answered.length === 0) return statusResponse(serviceUnavailable(`no member of the merged key answered: ${[...behind].map(([m, why]) => `${m}: ${why}`).join("; ")}`, 1));
    kind = String(answered[0]!.list.head.kind).replace(/List$/, "");
    apiVersion = String(answered[0]!.list.head.apiVersion ?? "");
    // A member that does not answer keeps what the hub holds of it, at the position the hub's
    // head has for it: the relist's diff deletes none of its objects, and its watch resumes from there.
    const atHead = points.at(hubHead());
    const kept = opened.flatMap(({ member, list }) => (list === undefined && atHead?.[member] !== undefined ? [member] : []));
    const at = firstNumber();
    const positions: Positions = Object.fromEntries([...answered.map(({ member, list }) => [member, list.rv]), ...kept.map((member) => [member, atHead![member]])]);
    points.record(at, positions);
    const encoder = new TextEncoder();
    const pieces = (async function* () {
      yield `${JSON.stringify({ kind: `${kind}List`, apiVersion, metadata: { resourceVersion: String(at) } }).slice(0, -1)},"items":[`;
      let first = true;
      for (const { member, list: items } of answered) {
        for (let batch = await items.next(); batch !== undefined; batch = await items.next()) {
          const out: string[] = [];
          for (const text of batch) {
            // An unchanged object keeps its number: a relist's diff finds nothing to send for it.
            const object = merged(member, JSON.parse(text) as KubeObject, at, true);
            if (object.rv === at) points.number(object.key, object.clusterRv, at);
            out.push(object.json);
          }
          if (out.length > 0) {
            yield (first ? "" : ",") + out.join(",");
            first = false;
          }
        }
      }
      for (const member of kept) {
        // As the hub has them: renamed, at the numbers they had (each no later than the head).
        const prefix = mergedName(member, "");
        for (let after: string | undefined = ""; after !== undefined; ) {
          const page = hub.held(prefix, after, HELD_PAGE);
          if (page.rows.length === 0) break;
          yield (first ? "" : ",") + page.rows.map((row) => row.json).join(",");
          first = false;
          after = page.more ? page.rows.at(-1)!.key : undefined;
        }
      }
      yield "]}";
    })();
    const cancelAll = () => {
      for (const { list: items } of answered) items.cancel();
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await pieces.next();
          if (done) controller.close();
          else controller.enqueue(encoder.encode(value));
        } catch (e) {
          cancelAll();
          controller.error(e);
        }
      },
      cancel: () => {
        cancelAll();
        void pieces.return(undefined);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }

  function watch(query: URLSearchParams, signal: AbortSignal | undefined): Response {
    const from = Number(query.get("resourceVersion") ?? "0");
    const at = points.at(from);
    if (!at) return statusResponse(tooOldResourceVersion(from, points.last()));
    points.resumeFrom(from);
    const mine = ++generation;
    const positions: Positions = { ...at };
    let last = from;
    /** Members whose objects are being added from a list: no number has its state recorded meanwhile. */
    const catching = new Set<string>();
    const encoder = new TextEncoder();
    const cancels: Cancel[] = [];
    const aborts = new Set<AbortController>();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const live = () => mine === generation && !ended;
    let ended = false;
    const end = (line?: string) => {
      if (ended) return;
      if (line && mine === generation) controller.enqueue(encoder.encode(line));
      ended = true;
      if (mine === generation) streaming = undefined;
      for (const cancel of cancels) cancel();
      for (const abort of aborts) abort.abort();
      try {
        controller.close();
      } catch {
        // cancelled by the reader already
      }
    };
    const send = (line: string) => {
      if (live()) controller.enqueue(encoder.encode(line));
    };
    const bookmark = () => send(bookmarkLine(kind, apiVersion, last));
    /** The members behind, as last said. */
    let said = upstream.behind().join(",");
    /** Where the watch is, each second; when the members behind have changed, at a number of its own, so the hub's subscribers get a bookmark that says so. */
    const tick = () => {
      const now = upstream.behind().join(",");
      if (now === said) return bookmark();
      said = now;
      last = nextAfter(last);
      numbered(last);
      bookmark();
      upstream.onBehindChanged?.(last);
    };
    const numbered = (n: number) => {
      if (catching.size === 0) points.record(n, positions);
    };
    /** A member's change, as the next number. */
    const change = (member: string, type: WatchEventType, object: KubeObject, clusterRv: number) => {
      // A watch ended (or replaced by the next) numbers nothing more: the next gives those numbers out again.
      if (!live()) return;
      const n = nextAfter(last);
      const out = merged(member, object, n, false);
      if (type === "DELETED") points.forget(out.key);
      else points.number(out.key, out.clusterRv, n);
      last = n;
      if (!catching.has(member)) positions[member] = clusterRv;
      numbered(n);
      send(eventLine(type, out.json));
      tellMoved();
    };

    /** A member with no position (it was left out of the list): its objects added, from its list. */
    async function catchUp(member: string): Promise<boolean> {
      const items = await openMember(member);
      if (!items) return false;
      if (!live()) {
        items.cancel();
        return false;
      }
      catching.add(member);
      try {
        for (let batch = await items.next(); batch !== undefined && live(); batch = await items.next()) {
          for (const text of batch) {
            const object = JSON.parse(text) as KubeObject;
            change(member, "ADDED", object, objectVersion(object) ?? 0);
          }
        }
      } finally {
        items.cancel();
        catching.delete(member);
      }
      if (!live()) return false;
      positions[member] = items.rv;
      numbered(last);
      tellMoved();
      return true;
    }

    /** One member's changes, as they come, for as long as the merged watch is open: resumed where it was, retried with backoff. */
    async function follow(member: string): Promise<void> {
      const backoff = new Backoff({ ...REFLECTOR_BACKOFF, random: Math.random });
      while (live()) {
        let failure: string | undefined;
        if (positions[member] === undefined && !(await catchUp(member))) failure = behind.get(member) ?? "not listed";
        else
          failure = await stream(member, () => backoff.reset()).then(
            (outcome) => outcome,
            (e: unknown) => (e as Error).message,
          );
        if (failure === "expired") return end(errorLine(expired(`the member ${member} no longer holds resourceVersion ${positions[member]}`)));
        if (failure === undefined) continue;
        if (!live()) return;
        behind.set(member, failure);
        const delay = backoff.next();
        await new Promise<void>((resolve) => cancels.push(clock.after(delay, resolve)));
      }
    }

    /** A member's watch from its position, until it ends: `undefined` (ended), `expired`, or why it failed. */
    async function stream(member: string, working: () => void): Promise<string | undefined> {
      const abort = new AbortController();
      aborts.add(abort);
      const slow = clock.after(MEMBER_WAIT_MS, () => behind.set(member, `no answer within ${MEMBER_WAIT_MS} ms`));
      try {
        const query = new URLSearchParams({ watch: "1", resourceVersion: String(positions[member]), allowWatchBookmarks: "true" });
        const response = await upstreams.get(member)!.fetch(`${url}${url.includes("?") ? "&" : "?"}${query}`, { signal: abort.signal });
        slow();
        if (response.status === 410) return "expired";
        if (!response.ok) return (await upstreamFailure(response, url, clock.now())).message;
        if (!response.body) return "the member's watch has no body";
        behind.delete(member);
        const reader = response.body.getReader();
        const lines = new LineSplitter();
        const opened = clock.now();
        let received = false;
        for (;;) {
          const { done, value } = await reader.read();
          if (!live()) return undefined;
          // Ended at once with nothing in it: a fault, retried after a backoff, not at once again.
          if (done) return received || clock.now() - opened >= MEMBER_WAIT_MS ? undefined : "the member's watch closed at once";
          received = true;
          working();
          for (const line of lines.push(value)) {
            const event = parseEventLine(line);
            if (!event) return `a malformed line in the member's watch: ${line.slice(0, 120)}`;
            if (event.type === "ERROR") {
              const status = event.object as Status;
              return status.code === 410 ? "expired" : `the member's watch failed: ${status.message ?? status.code}`;
            }
            const clusterRv = objectVersion(event.object) ?? 0;
            if (event.type === "BOOKMARK") {
              // Nothing of this key changed there up to here: the state at the last number says so too.
              if (catching.size === 0 && points.at(last) !== undefined) {
                positions[member] = clusterRv;
                points.record(last, positions);
                tellMoved();
              }
              continue;
            }
            change(member, event.type, event.object, clusterRv);
          }
        }
      } finally {
        slow();
        abort.abort();
        aborts.delete(abort);
      }
    }

    /** Which members' hubs are in backoff from their cluster (or relisting it): behind, though their streams are open. */
    async function checkMembers(): Promise<void> {
      await Promise.all(
        members.map(async (member) => {
          const state = await hubs.state(names.get(member)!).catch(() => undefined);
          if (!live()) return;
          if (state === "backoff" || state === "listing") clusterBehind.add(member);
          else clusterBehind.delete(member);
        }),
      );
    }

    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        streaming = { last: () => last, positions };
        tellMoved();
        cancels.push(clock.every(KEEPALIVE_MS, tick));
        cancels.push(clock.every(MEMBER_CHECK_MS, () => void checkMembers()));
        const timeout = Number(query.get("timeoutSeconds") ?? "0");
        if (timeout > 0)
          cancels.push(
            clock.after(timeout * 1000, () => {
              bookmark();
              end();
            }),
          );
        for (const member of members) void follow(member);
      },
      cancel: () => end(),
    });
    signal?.addEventListener("abort", () => end(), { once: true });
    return new Response(body, { headers: { "content-type": "application/json;stream=watch" } });
  }

  /** Resolves `true` once the open watch has `member` at `point` or past it, `false` when `deadline` comes first. */
  function reaches(member: string, point: number, deadline: Promise<void>): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (reached: boolean) => {
        moved.delete(check);
        resolve(reached);
      };
      const check = () => {
        if ((streaming?.positions[member] ?? -1) >= point) done(true);
      };
      moved.add(check);
      check();
      void deadline.then(() => done(false));
    });
  }

  async function current(): Promise<{ rv: number; late: string[] }> {
    let cancel: Cancel | undefined;
    const deadline = new Promise<void>((resolve) => (cancel = clock.after(MEMBER_WAIT_MS, resolve)));
    const known = upstream.behind();
    try {
      // Each member's hub asked at once, and each waited for as soon as it answers: a member is late when either comes after the deadline.
      const reached = await Promise.all(
        members.map(async (member) => {
          if (known.includes(member)) return false;
          const point = await Promise.race([hubs.point(names.get(member)!).catch(() => undefined), deadline.then(() => undefined)]);
          return point !== undefined && (await reaches(member, point, deadline));
        }),
      );
      return { rv: streaming?.last() ?? hubHead(), late: members.filter((_, i) => !reached[i]).sort() };
    } finally {
      cancel?.();
    }
  }

  const upstream: MergedUpstream = {
    cluster: key.cluster,
    followsHub: true,
    head: () => streaming?.last() ?? (points.at(hubHead()) ? hubHead() : 0),
    behind: () => [...new Set([...behind.keys(), ...clusterBehind])].sort(),
    current,
    async fetch(pathAndQuery, init) {
      const query = new URL(pathAndQuery, "http://merged").searchParams;
      if (query.get("watch") === "1" || query.get("watch") === "true") return watch(query, init?.signal ?? undefined);
      return list(query);
    },
  };
  return upstream;
}
