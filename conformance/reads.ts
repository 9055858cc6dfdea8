/**
 * @module
 * The reads checks share: lists that must be lists, watches that must open, events gathered up
 * to a point, resourceVersions compared as the numbers the API server makes of them, and an
 * answer described in a few words for a report line.
 */
import type { KubeList, KubeObject, Status, WatchEvent } from "../src/k8s/types.ts";
import { pathOf, type Collection } from "./collection.ts";
import type { Api, Query, Reply } from "./http.ts";
import { expect, fail } from "./outcome.ts";
import type { EventStream, Read } from "./stream.ts";

/** `404 NotFound: the server could not find the requested resource`, or the status and the body's start. */
export function describe(reply: Reply): string {
  const status = statusOf(reply);
  if (status) return `${reply.status} ${status.reason ?? ""}: ${status.message ?? "(no message)"}`;
  const text = reply.text.trim();
  return `${reply.status}${text ? `: ${text.length > 100 ? `${text.slice(0, 100)}…` : text}` : ""}`;
}

/** The body as a `Status`, when it is one. */
export function statusOf(reply: Reply): Status | undefined {
  const json = reply.json as Status | undefined;
  return json?.kind === "Status" ? json : undefined;
}

/** The API server's reading of a resourceVersion: a number (etcd's revision). */
export function version(value: string | undefined, what: string): bigint {
  expect(value !== undefined && /^[0-9]+$/.test(value), `${what} has no numeric resourceVersion (${JSON.stringify(value)})`);
  return BigInt(value);
}

export const versionOf = (object: KubeObject, what = "the object"): bigint => version(object.metadata?.resourceVersion, what);

export const nameOf = (object: KubeObject): string => object.metadata?.name ?? "";

/** `namespace/name`, or `name` for a cluster-scoped object. */
export const keyOf = (object: KubeObject): string => (object.metadata?.namespace ? `${object.metadata.namespace}/${nameOf(object)}` : nameOf(object));

/** GET the collection (or `path`), which must answer 200 with a list. */
export async function list(api: Api, collection: Collection, query: Query = {}, path = pathOf(collection)): Promise<KubeList<KubeObject>> {
  const reply = await api.get(path, query);
  expect(reply.status === 200, () => `GET ${path}${queryText(query)} answered ${describe(reply)}`);
  const body = reply.json as Partial<KubeList<KubeObject>> | undefined;
  expect(
    typeof body?.metadata?.resourceVersion === "string" && Array.isArray(body.items),
    () => `GET ${path}${queryText(query)} answered 200 with something that is not a list: ${reply.text.slice(0, 100)}`,
  );
  return body as KubeList<KubeObject>;
}

export const queryText = (query: Query): string => {
  const entries = Object.entries(query).filter(([, v]) => v !== undefined);
  return entries.length === 0 ? "" : `?${entries.map(([k, v]) => `${k}=${String(v)}`).join("&")}`;
};

/** Open a watch that must start (200); it is closed when the check ends. */
export async function watch(api: Api, collection: Collection, query: Query, defer: (close: () => void) => void, accept?: string): Promise<EventStream> {
  const opened = await api.watch(pathOf(collection), query, accept);
  if (!opened.ok) fail(`a watch of ${pathOf(collection)}${queryText(query)} answered ${describe(opened.reply)}`);
  defer(() => opened.stream.close());
  return opened.stream;
}

export interface Gathered {
  events: WatchEvent<KubeObject>[];
  /** When each event arrived (ms since the epoch), in step with `events`. */
  arrived: number[];
  /** How it stopped: `until` held, the stream ended, or time ran out. */
  stop: "until" | "end" | "timeout";
  /** The end, when it ended: its close code and reason on a WebSocket, and when (ms). */
  end?: Extract<Read, { kind: "end" }> & { at: number };
}

/**
 * Events (bookmarks included) until `until` holds for one (included), the stream ends, or `ms`
 * pass. Something that is not a watch event fails the check.
 */
export async function gather(stream: EventStream, ms: number, until: (event: WatchEvent<KubeObject>) => boolean = () => false): Promise<Gathered> {
  const deadline = Date.now() + ms;
  const events: WatchEvent<KubeObject>[] = [];
  const arrived: number[] = [];
  for (;;) {
    const read = await stream.next(Math.max(0, deadline - Date.now()));
    if (read.kind === "timeout") return { events, arrived, stop: "timeout" };
    if (read.kind === "end") return { events, arrived, stop: "end", end: { ...read, at: Date.now() } };
    if (read.kind === "garbage") fail(`the watch sent something that is not a watch event: ${read.text}`);
    events.push(read.event);
    arrived.push(Date.now());
    if (until(read.event)) return { events, arrived, stop: "until" };
  }
}

/**
 * A list not older than `rv`: once it answers, the server has what was written up to `rv`
 * (one whose watch lags waits for it, as the API server's cache does), so a check's reads that
 * follow are about what it checks, not about how fresh a read without resourceVersion is.
 */
export async function reached(api: Api, collection: Collection, query: Query, rv: bigint): Promise<void> {
  await list(api, collection, { ...query, resourceVersion: String(rv), resourceVersionMatch: "NotOlderThan" });
}

/** The changes among `events`: bookmarks left out. */
export const changes = (events: WatchEvent<KubeObject>[]): WatchEvent<KubeObject>[] => events.filter((e) => e.type !== "BOOKMARK");

/** An event in a report: `MODIFIED conformance-x@123`. */
export const eventText = (event: WatchEvent<KubeObject>): string =>
  event.type === "ERROR"
    ? `ERROR ${(event.object as Status).code ?? ""} ${(event.object as Status).message ?? ""}`
    : `${event.type} ${nameOf(event.object)}@${event.object.metadata?.resourceVersion ?? "?"}`;

export const eventsText = (events: WatchEvent<KubeObject>[]): string => (events.length === 0 ? "nothing" : events.map(eventText).join(", "));

/** The first ERROR among `events`, as its Status. */
export const errorIn = (events: WatchEvent<KubeObject>[]): Status | undefined => events.find((e) => e.type === "ERROR")?.object as Status | undefined;
