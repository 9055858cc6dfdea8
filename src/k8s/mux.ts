/**
 * @module
 * The multiplexed watch socket's wire protocol (`/_relay/socket`), shared by the relay and its
 * client: many watches, each named by the client's `id`, on one WebSocket.
 *
 * Client → relay, one JSON text message each:
 * - `{"op":"watch","id":"w1","path":"/api/v1/namespaces/a/pods", ...watch parameters}` opens a
 *   watch: every parameter of a standalone watch (`labelSelector`, `fieldSelector`, `shardSelector`,
 *   `resourceVersion`, `resourceVersionMatch`, `sendInitialEvents`, `allowWatchBookmarks`,
 *   `timeoutSeconds`, `compact`), plus `limit`, the most events of this watch one message holds;
 * - `{"op":"view","id":"v1","path":"/api/v1/pods","sort":"-Status","filter":"name~web","offset":0,"limit":50,"rows":"cells"}`
 *   opens a live view (DESIGN.md, "Live views"): the parameters of `?view=1&watch=1` (and
 *   `labelSelector`, `fieldSelector`, `timeoutSeconds`); its `VIEW` and `ROWS` frames come as
 *   the view's lines. Moving the window, or another sort or filter, is another view;
 * - `{"op":"logs","id":"l1","path":"/api/v1/namespaces/a/pods/p/log", ...log options}` follows a
 *   pod's log (`container`, `follow` (true unless false), `tailLines`, `sinceSeconds`,
 *   `sinceTime`, `timestamps`, `previous`, `limitBytes`, each as the log request's parameter);
 * - `{"op":"unwatch","id":"w1"}` ends a watch, a view or a log;
 * - `{"type":"ACK","received":n}` acknowledges the socket's messages, as on a single watch.
 *
 * Relay → client, newline-terminated lines (several in one message on a batch socket):
 * - `{"id":"w1","type":"ADDED","object":{…}}`: a watch event, exactly the standalone watch's
 *   line with the id in front (so the relay tags lines without parsing them);
 * - `{"id":"v1","type":"VIEW",…}` and `{"id":"v1","type":"ROWS",…}`: a view's frames, exactly as
 *   `?view=1&watch=1` streams them, tagged alike;
 * - `{"id":"l1","type":"LOG","text":"…"}`: lines of log `l1`, whole (each ending in `\n`, but for
 *   a log's last, or a line cut by `limitBytes`), as its standalone WebSocket's message had them;
 * - `{"id":"w1","type":"ERROR","object":<Status>}`: the watch, view or log failed (its CLOSED follows);
 * - `{"id":"w1","type":"CLOSED","code":n,"reason":"…","resourceVersion":"…"}`: the watch ended;
 *   `code` is the close code its own WebSocket would have had, `resourceVersion` the last one
 *   it delivered (or asked to start from), the point to resume from. The id is free again;
 * - `{"type":"ERROR","object":<Status>}`: a message the relay could not act on (no watch
 *   changed; `details.name` is its id, if it had one).
 *
 * The subprotocol beside the token frames what the relay sends: the batch one, several lines a
 * message; its gzip form, those messages compressed as a watch's compressed framing's are (a
 * binary message of one gzip member of the text, for one of at least `MIN_COMPRESSED`
 * characters); anything else, one line per text message.
 */
import { errorLine } from "./event.ts";
import { parseApiPath } from "./path.ts";
import { badRequest, failure } from "./status.ts";
import type { Status, WatchEventType } from "./types.ts";
import { BATCH_PROTOCOL, GZIP_BATCH_PROTOCOL, type Framing } from "./websocket.ts";

export const MUX_PATH = "/_relay/socket";

/** How a relay socket frames its messages, by the subprotocol echoed (no deltas: its watches' hubs send it whole events). */
export function socketFraming(protocol: string | undefined): Pick<Framing, "batched" | "compressed"> {
  const compressed = protocol === GZIP_BATCH_PROTOCOL;
  return { batched: compressed || protocol === BATCH_PROTOCOL, compressed };
}

/** Ids are short and need no escaping, so a line's id is read without parsing the line. */
const ID = /^[A-Za-z0-9._~:/-]{1,128}$/;

/** Parameters a watch op may carry, each as the standalone watch's query parameter of the same name. */
export interface WatchParameters {
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  compact?: boolean;
  timeoutSeconds?: number;
}

export interface WatchOp extends WatchParameters {
  op: "watch";
  id: string;
  /** A collection path, `/api/...`, `/apis/...` or `/clusters/{name}/...`, without a query. */
  path: string;
  /** At most this many of the watch's events in one message. */
  limit?: number;
}

/** A live view: what `?view=1&watch=1` takes, as fields. */
export interface ViewOp {
  op: "view";
  id: string;
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  sort?: string;
  filter?: string;
  rows?: string;
  /** The window's first row, by key, instead of `offset`. */
  anchor?: string;
  offset?: number;
  limit?: number;
  timeoutSeconds?: number;
}

export interface UnwatchOp {
  op: "unwatch";
  id: string;
}

/** Parameters a logs op may carry, each as the log request's query parameter of the same name. */
export interface LogParameters {
  container?: string;
  /** Unless false, the log is followed. */
  follow?: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  sinceTime?: string;
  timestamps?: boolean;
  previous?: boolean;
  limitBytes?: number;
}

export interface LogsOp extends LogParameters {
  op: "logs";
  id: string;
  /** A pod's log path: `/api/v1/namespaces/{namespace}/pods/{name}/log` (or under `/clusters/{name}`), without a query. */
  path: string;
}

export type MuxOp = StreamOp | UnwatchOp;

/** An op that opens a stream: a watch, a view, or a pod's log. */
export type StreamOp = WatchOp | ViewOp | LogsOp;

/** What a client message is: an op, an acknowledgement, or why it is neither (with its id, if it had one). */
export type ClientMessage = { op: MuxOp } | { ack: number } | { refused: Status; id?: string };

const STRINGS = ["labelSelector", "fieldSelector", "shardSelector", "resourceVersion", "resourceVersionMatch"] as const;
const BOOLEANS = ["sendInitialEvents", "allowWatchBookmarks", "compact"] as const;
const COUNTS = ["timeoutSeconds", "limit"] as const;

/** Parse one client message; anything that is not a valid op or ACK is refused with a `400` Status. */
export function parseClientMessage(text: string | ArrayBuffer): ClientMessage {
  if (typeof text !== "string") return { refused: badRequest("messages on the relay socket are JSON text, not binary") };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { refused: badRequest(`a message on the relay socket must be JSON: ${JSON.stringify(text.slice(0, 60))}`) };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { refused: badRequest("a message on the relay socket must be a JSON object") };
  const message = parsed as Record<string, unknown>;
  if (message.type === "ACK") {
    const received = message.received;
    if (typeof received === "number" && Number.isSafeInteger(received) && received >= 0) return { ack: received };
    return { refused: badRequest("an ACK's received must be a non-negative integer") };
  }
  const id = typeof message.id === "string" && ID.test(message.id) ? message.id : undefined;
  const refuse = (why: string): ClientMessage => {
    const status = badRequest(why);
    if (id !== undefined) status.details = { name: id };
    return id === undefined ? { refused: status } : { refused: status, id };
  };
  if (message.op !== "watch" && message.op !== "view" && message.op !== "unwatch" && message.op !== "logs")
    return refuse(`unknown op ${JSON.stringify(message.op)}: expected "watch", "view", "logs" or "unwatch" (or an ACK)`);
  if (id === undefined) return refuse(`op ${message.op} needs an id: 1 to 128 of A-Z a-z 0-9 . _ ~ : / -`);
  if (message.op === "unwatch") return { op: { op: "unwatch", id } };
  if (message.op === "logs") return parseLogsOp(message, id, refuse);
  // A resource path (as a standalone watch's), not any route of the relay's: /healthz, /_relay/… are not watches.
  if (typeof message.path !== "string" || !message.path.startsWith("/") || /[?#]/.test(message.path) || parseApiPath(message.path).kind !== "resource") {
    return refuse(`${message.op} ${id}: path must be an API path such as /api/v1/namespaces/default/pods, with its parameters as fields, not a query`);
  }
  if (message.op === "view") return viewOp(id, message.path, message, refuse);
  const op: WatchOp = { op: "watch", id, path: message.path };
  for (const name of STRINGS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "string") return refuse(`watch ${id}: ${name} must be a string`);
    op[name] = value;
  }
  for (const name of BOOLEANS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "boolean") return refuse(`watch ${id}: ${name} must be true or false`);
    op[name] = value;
  }
  for (const name of COUNTS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) return refuse(`watch ${id}: ${name} must be a positive integer`);
    op[name] = value;
  }
  return { op };
}

const VIEW_STRINGS = ["labelSelector", "fieldSelector", "sort", "filter", "rows", "anchor"] as const;
const VIEW_COUNTS = ["offset", "limit", "timeoutSeconds"] as const;

/** A view op's fields, typed (their values are checked where `?view=1` is). */
function viewOp(id: string, path: string, message: Record<string, unknown>, refuse: (why: string) => ClientMessage): ClientMessage {
  const op: ViewOp = { op: "view", id, path };
  for (const name of VIEW_STRINGS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "string") return refuse(`view ${id}: ${name} must be a string`);
    op[name] = value;
  }
  for (const name of VIEW_COUNTS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) return refuse(`view ${id}: ${name} must be a whole number`);
    op[name] = value;
  }
  return { op };
}

const LOG_STRINGS = ["container", "sinceTime"] as const;
const LOG_BOOLEANS = ["follow", "timestamps", "previous"] as const;
const LOG_INTEGERS = ["tailLines", "sinceSeconds", "limitBytes"] as const;

/** A logs op: its path a pod's log, its fields of their types (their values are the log request's to judge). */
function parseLogsOp(message: Record<string, unknown>, id: string, refuse: (why: string) => ClientMessage): ClientMessage {
  const path = typeof message.path === "string" && message.path.startsWith("/") && !/[?#]/.test(message.path) ? parseApiPath(message.path) : undefined;
  if (path?.kind !== "resource" || path.subresource !== "log" || path.resource !== "pods" || path.group !== "") {
    return refuse(`logs ${id}: path must be a pod's log path such as /api/v1/namespaces/default/pods/web-1/log, with its options as fields, not a query`);
  }
  const op: LogsOp = { op: "logs", id, path: message.path as string };
  for (const name of LOG_STRINGS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "string") return refuse(`logs ${id}: ${name} must be a string`);
    op[name] = value;
  }
  for (const name of LOG_BOOLEANS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "boolean") return refuse(`logs ${id}: ${name} must be true or false`);
    op[name] = value;
  }
  for (const name of LOG_INTEGERS) {
    const value = message[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value)) return refuse(`logs ${id}: ${name} must be an integer`);
    op[name] = value;
  }
  return { op };
}

/** The standalone live view's query for a view op (`?view=1&watch=1&…`). */
export function viewQuery(op: ViewOp): URLSearchParams {
  const query = new URLSearchParams({ view: "1", watch: "1" });
  for (const name of [...VIEW_STRINGS, ...VIEW_COUNTS]) if (op[name] !== undefined) query.set(name, String(op[name]));
  return query;
}

/** The standalone log request's query for a logs op (followed unless it says `follow: false`). */
export function logsQuery(op: LogParameters): URLSearchParams {
  const query = new URLSearchParams();
  if (op.container !== undefined) query.set("container", op.container);
  if (op.follow !== false) query.set("follow", "true");
  for (const name of ["tailLines", "sinceSeconds", "sinceTime", "limitBytes"] as const) if (op[name] !== undefined) query.set(name, String(op[name]));
  if (op.timestamps) query.set("timestamps", "true");
  if (op.previous) query.set("previous", "true");
  return query;
}

/** Log `id`'s lines, as the line the relay sends. */
export const logLine = (id: string, text: string): string => `${JSON.stringify({ id, type: "LOG", text })}\n`;

/** The op for a standalone live view's path and query: `viewQuery` read back (the client's side). */
export function viewOpOfQuery(id: string, path: string, query: URLSearchParams): ViewOp {
  const op: ViewOp = { op: "view", id, path };
  for (const name of VIEW_STRINGS) {
    const value = query.get(name);
    if (value !== null) op[name] = value;
  }
  for (const name of VIEW_COUNTS) {
    const value = query.get(name);
    if (value !== null && /^\d+$/.test(value)) op[name] = Number(value);
  }
  return op;
}

/**
 * The standalone watch's query for an op, so the op is resolved, validated and authorised
 * exactly as that watch would be. `sendInitialEvents` needs `resourceVersionMatch=NotOlderThan`
 * on the API server; it is the only value allowed there, so it is the default here.
 */
export function watchQuery(op: WatchParameters): URLSearchParams {
  const query = new URLSearchParams({ watch: "1" });
  for (const name of STRINGS) if (op[name] !== undefined) query.set(name, op[name]);
  if (op.sendInitialEvents !== undefined) {
    query.set("sendInitialEvents", String(op.sendInitialEvents));
    if (op.resourceVersionMatch === undefined) query.set("resourceVersionMatch", "NotOlderThan");
  }
  if (op.allowWatchBookmarks) query.set("allowWatchBookmarks", "true");
  if (op.compact) query.set("compact", "true");
  if (op.timeoutSeconds !== undefined) query.set("timeoutSeconds", String(op.timeoutSeconds));
  return query;
}

/** The op for a standalone watch's path and query: `watchQuery` read back (the client's side). */
export function opOfQuery(id: string, path: string, query: URLSearchParams): WatchOp {
  const op: WatchOp = { op: "watch", id, path };
  for (const name of STRINGS) {
    const value = query.get(name);
    if (value) op[name] = value;
  }
  for (const name of BOOLEANS) {
    const value = query.get(name);
    if (value === "true" || value === "false") op[name] = value === "true";
  }
  const timeout = Number(query.get("timeoutSeconds"));
  if (timeout > 0) op.timeoutSeconds = timeout;
  return op;
}

/** Standalone watch lines (`{"type":…}\n`, one or more) as lines of watch `id`. */
export function tagLines(id: string, text: string): string {
  return taggedPieces(id, text).join("");
}

/**
 * `tagLines` unjoined: the id's prefix before each line's rest, a slice of `text`, so that the
 * lines are copied once, when joined with whatever they are sent with. JSON escapes every
 * newline inside a line, so a `\n` only ever ends one.
 */
export function taggedPieces(id: string, text: string): string[] {
  const prefix = `{"id":"${id}",`;
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline < 0 ? text.length : newline + 1;
    pieces.push(prefix, text.slice(start + 1, end));
    start = end;
  }
  return pieces;
}

/** The id of a relay line, `undefined` for a socket-level one. */
export function lineId(line: string): string | undefined {
  if (!line.startsWith('{"id":"')) return undefined;
  const end = line.indexOf('"', 7);
  return end < 0 ? undefined : line.slice(7, end);
}

/** The type of a line, standalone (`{"type":…`) or tagged (`{"id":…,"type":…`), read from its fixed start. */
export function lineType(line: string): WatchEventType | "CLOSED" | "LOG" | undefined {
  const id = lineId(line);
  const prefix = id === undefined ? '{"type":"' : ',"type":"';
  const start = id === undefined ? 0 : id.length + 8;
  if (!line.startsWith(prefix, start)) return undefined;
  const from = start + prefix.length;
  const end = line.indexOf('"', from);
  return end < 0 ? undefined : (line.slice(from, end) as WatchEventType | "CLOSED" | "LOG");
}

/** A socket-level refusal, or a watch's failure when `id` is given. */
export function failureLine(status: Status, id?: string): string {
  return id === undefined ? errorLine(status) : tagLines(id, errorLine(status));
}

export interface Closed {
  id: string;
  type: "CLOSED";
  code: number;
  reason: string;
  resourceVersion?: string;
}

export function closedLine(id: string, code: number, reason: string, resourceVersion: string | undefined): string {
  const closed: Closed = { id, type: "CLOSED", code, reason };
  if (resourceVersion !== undefined) closed.resourceVersion = resourceVersion;
  return `${JSON.stringify(closed)}\n`;
}

/** Newline-terminated lines in messages of at most `limit` lines each (all in one without a limit). */
export function pages(text: string, limit: number | undefined): string[] {
  if (limit === undefined) return [text];
  const lines = text.split("\n");
  lines.pop();
  if (lines.length <= limit) return [text];
  const messages: string[] = [];
  for (let i = 0; i < lines.length; i += limit) messages.push(`${lines.slice(i, i + limit).join("\n")}\n`);
  return messages;
}

/** The resourceVersion of the last event (not ERROR) of newline-terminated watch lines: where a reader of them all would resume. */
export function lastResourceVersion(text: string): string | undefined {
  let end = text.length - 1;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end);
    if (lineType(line) !== "ERROR") return resourceVersionOf(line);
    end = start - 1;
  }
  return undefined;
}

/**
 * `object.metadata.resourceVersion` of a watch line, found by walking only the members on the
 * way to it (every other value is skipped unread), so a relay that forwards a line learns its
 * resume point without parsing the object. `undefined` when it has none.
 */
export function resourceVersionOf(line: string): string | undefined {
  const object = memberValue(line, 0, "object");
  const metadata = object === undefined ? undefined : memberValue(line, object, "metadata");
  const rv = metadata === undefined ? undefined : memberValue(line, metadata, "resourceVersion");
  if (rv === undefined || line[rv] !== '"') return undefined;
  const end = skipString(line, rv);
  return end === undefined ? undefined : (JSON.parse(line.slice(rv, end)) as string);
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

function skipSpace(text: string, i: number): number {
  while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  return i;
}

/** Index just past the JSON string starting at `i` (a `"`). */
function skipString(text: string, i: number): number | undefined {
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") j++;
    else if (c === '"') return j + 1;
  }
  return undefined;
}

/** Index just past the JSON value starting at `i`. */
function skipValue(text: string, i: number): number | undefined {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c !== "{" && c !== "[") {
    let j = i;
    while (j < text.length && !",}]".includes(text[j] as string) && !WHITESPACE.has(text[j] as string)) j++;
    return j === i ? undefined : j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const d = text[j];
    if (d === '"') {
      const end = skipString(text, j);
      if (end === undefined) return undefined;
      j = end - 1;
    } else if (d === "{" || d === "[") depth++;
    else if (d === "}" || d === "]") {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return undefined;
}

/** Where the value of member `name` of the object starting at `i` starts, if it has one. */
function memberValue(text: string, i: number, name: string): number | undefined {
  let j = skipSpace(text, i);
  if (text[j] !== "{") return undefined;
  j = skipSpace(text, j + 1);
  while (text[j] === '"') {
    const keyEnd = skipString(text, j);
    if (keyEnd === undefined) return undefined;
    const key = text.slice(j, keyEnd);
    j = skipSpace(text, keyEnd);
    if (text[j] !== ":") return undefined;
    j = skipSpace(text, j + 1);
    if (key === `"${name}"` || (key.includes("\\") && JSON.parse(key) === name)) return j;
    const end = skipValue(text, j);
    if (end === undefined) return undefined;
    j = skipSpace(text, end);
    if (text[j] !== ",") return undefined;
    j = skipSpace(text, j + 1);
  }
  return undefined;
}

/** A `429` for a socket that holds as many watches as one subject may. */
export const tooManyWatches = (id: string, max: number): Status =>
  failure(429, "TooManyRequests", `watch ${id}: this socket already holds ${max} watches (MAX_SUBSCRIPTIONS_PER_SUBJECT); unwatch one first`, { name: id, retryAfterSeconds: 1 });

/** A client op as the message to send. */
export const opMessage = (op: MuxOp): string => JSON.stringify(op);
