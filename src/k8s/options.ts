/**
 * @module
 * List and watch query parameters, parsed and validated as the API server does
 * (apimachinery `pkg/apis/meta/internalversion/validation/validation.go`; bool conversion from
 * `pkg/runtime/conversion.go`). Failures come back as the `Status` the API server would send.
 */
import { badRequest, invalidListOptions, type Result } from "./status.ts";
import type { Status } from "./types.ts";
import { parseRequestedVersion, ResourceVersionError, type RequestedVersion } from "./rv.ts";
import { parseShardSelector, ShardSelectorError, type ShardSelector } from "./shard.ts";

export interface ListOptions {
  resourceVersion: RequestedVersion;
  resourceVersionMatch: "NotOlderThan" | "Exact" | undefined;
  limit: number | undefined;
  continue: string | undefined;
  /** `shardSelector` (KEP-5866): only the objects of this shard. */
  shardSelector?: ShardSelector | undefined;
}

/** A get's options (`GetOptions`): which state of the object is good enough. */
export interface GetOptions {
  resourceVersion: RequestedVersion;
}

export interface WatchOptions {
  resourceVersion: RequestedVersion;
  resourceVersionMatch: "NotOlderThan" | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  /** Seconds until the server ends the stream; `undefined` when the client set none. */
  timeoutSeconds: number | undefined;
  /**
   * The relay's own: a resume from a resourceVersion gets each object that changed since once,
   * at its current state, and each deletion (net changes), instead of every event.
   */
  compact: boolean;
  /** `shardSelector` (KEP-5866): only the events of this shard's objects. */
  shardSelector?: ShardSelector | undefined;
}

const FALSE = new Set(["0", "f", "false", "n", "no", "off"]);

/** `?watch`, `?watch=1`, `?watch=true`: any value but a false one is true; absent is false. */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !FALSE.has(value.toLowerCase());
}

export const isWatch = (query: URLSearchParams): boolean => queryBool(query, "watch") === true;

function queryInt(query: URLSearchParams, name: string): number | undefined | Status {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (!/^-?[0-9]+$/.test(value)) return badRequest(`invalid value for ${name}: ${JSON.stringify(value)}: must be an integer`);
  return Number(value);
}

function requested(query: URLSearchParams): RequestedVersion | Status {
  try {
    return parseRequestedVersion(query.get("resourceVersion"));
  } catch (e) {
    if (e instanceof ResourceVersionError) return badRequest(e.message);
    throw e;
  }
}

/** `shardSelector`, when given (an empty value is no selector, as the API server reads it). */
function shard(query: URLSearchParams): ShardSelector | undefined | Status {
  const text = query.get("shardSelector");
  if (text === null || text === "") return undefined;
  try {
    return parseShardSelector(text);
  } catch (e) {
    if (e instanceof ShardSelectorError) return badRequest(`invalid shardSelector: ${e.message}`);
    throw e;
  }
}

const isStatus = (v: unknown): v is Status => typeof v === "object" && v !== null && (v as Status).kind === "Status";

type Cause = Parameters<typeof invalidListOptions>[0][number];

function match(query: URLSearchParams): { value: string | undefined; cause?: Cause } {
  const value = query.get("resourceVersionMatch") ?? undefined;
  if (value === undefined || value === "" || value === "NotOlderThan" || value === "Exact") return { value: value || undefined };
  return {
    value,
    cause: { field: "resourceVersionMatch", type: "Unsupported", value, detail: 'supported values: "Exact", "NotOlderThan", ""' },
  };
}

export function parseListOptions(query: URLSearchParams): Result<ListOptions> {
  const rv = requested(query);
  if (isStatus(rv)) return { ok: false, status: rv };
  const limit = queryInt(query, "limit");
  if (isStatus(limit)) return { ok: false, status: limit };
  const cont = query.get("continue") || undefined;
  const shardSelector = shard(query);
  if (isStatus(shardSelector)) return { ok: false, status: shardSelector };
  const rvm = match(query);
  const causes: Cause[] = rvm.cause ? [rvm.cause] : [];
  if (rvm.value !== undefined && !rvm.cause) {
    if (rv.kind === "unset") causes.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden unless resourceVersion is provided" });
    if (cont) causes.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden when continue is provided" });
    if (rvm.value === "Exact" && rv.kind === "zero") causes.push({ field: "resourceVersionMatch", type: "Forbidden", detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
  }
  if (query.has("sendInitialEvents")) causes.push({ field: "sendInitialEvents", type: "Forbidden", detail: "sendInitialEvents is forbidden for list" });
  if (causes.length > 0) return { ok: false, status: invalidListOptions(causes) };
  return {
    ok: true,
    value: { resourceVersion: rv, resourceVersionMatch: rvm.value as ListOptions["resourceVersionMatch"], limit: limit && limit > 0 ? limit : undefined, continue: cont, shardSelector },
  };
}

export function parseGetOptions(query: URLSearchParams): Result<GetOptions> {
  const rv = requested(query);
  return isStatus(rv) ? { ok: false, status: rv } : { ok: true, value: { resourceVersion: rv } };
}

export function parseWatchOptions(query: URLSearchParams): Result<WatchOptions> {
  const rv = requested(query);
  if (isStatus(rv)) return { ok: false, status: rv };
  const timeout = queryInt(query, "timeoutSeconds");
  if (isStatus(timeout)) return { ok: false, status: timeout };
  const sendInitialEvents = queryBool(query, "sendInitialEvents");
  const shardSelector = shard(query);
  if (isStatus(shardSelector)) return { ok: false, status: shardSelector };
  const rvm = match(query);
  const causes: Cause[] = rvm.cause ? [rvm.cause] : [];
  if (sendInitialEvents !== undefined) {
    if (rvm.value !== "NotOlderThan" && !rvm.cause)
      causes.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" });
  } else if (rvm.value !== undefined && !rvm.cause) {
    causes.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided" });
  }
  if (rvm.value === "Exact") causes.push({ field: "resourceVersionMatch", type: "Unsupported", value: "Exact", detail: 'supported values: "NotOlderThan"' });
  if (causes.length > 0) return { ok: false, status: invalidListOptions(causes) };
  return {
    ok: true,
    value: {
      resourceVersion: rv,
      resourceVersionMatch: rvm.value as WatchOptions["resourceVersionMatch"],
      allowWatchBookmarks: queryBool(query, "allowWatchBookmarks") === true,
      sendInitialEvents,
      timeoutSeconds: timeout !== undefined && timeout > 0 ? timeout : undefined,
      compact: queryBool(query, "compact") === true,
      shardSelector,
    },
  };
}
