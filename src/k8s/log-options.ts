/**
 * @module
 * `PodLogOptions`, the query of `GET …/pods/{name}/log`, read as the API server reads it: each
 * parameter converted as its generated conversion does (`Convert_url_Values_To_v1_PodLogOptions`:
 * a value that does not convert is a `400` naming Go's own parse error), then validated as
 * `ValidatePodLogOptions` does (a `422` listing every field that is wrong); and written back as
 * the API server passes them on (`LogLocation`: `sinceTime` to the second).
 */
import { formatRfc3339, parseRfc3339, type Nanos } from "./rfc3339.ts";
import { badRequest, failure, type Result, type StatusCause } from "./status.ts";
import type { Status } from "./types.ts";

export interface LogOptions {
  /** `undefined`: the API server picks the pod's only container (or answers 400). */
  container: string | undefined;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines: number | undefined;
  sinceSeconds: number | undefined;
  /** `sinceTime`, in nanoseconds since the epoch (as given; the API server passes it on to the second). */
  sinceTime: Nanos | undefined;
  limitBytes: number | undefined;
}

/** Go's `strconv.ParseInt(s, 10, 64)`: the number, or its error message. */
function parseInt64(value: string): { ok: true; value: bigint } | { ok: false; message: string } {
  if (!/^[+-]?[0-9]+$/.test(value)) return { ok: false, message: `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax` };
  const n = BigInt(value);
  if (n > 9_223_372_036_854_775_807n || n < -9_223_372_036_854_775_808n) return { ok: false, message: `strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range` };
  return { ok: true, value: n };
}

/** `Convert_Slice_string_To_bool`: only `false` (any case) and `0` are false. */
const goBool = (value: string | null): boolean => value !== null && value !== "0" && value.toLowerCase() !== "false";

/** An int64 beyond what JavaScript counts exactly means the same to a log as the largest it does. */
const clamp = (n: bigint): number => Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n < BigInt(Number.MIN_SAFE_INTEGER) ? BigInt(Number.MIN_SAFE_INTEGER) : n);

/** The zero `time.Time` (year 1), which an empty or `null` `sinceTime` converts to. */
const ZERO_TIME: Nanos = -62_135_596_800n * 1_000_000_000n;

/** A `422` as `apierrors.NewInvalid(api.Kind("PodLogOptions"), name, errs)` writes it. */
function invalidLogOptions(pod: string, causes: Array<{ field: string; type: "Invalid" | "Forbidden"; body: string }>): Status {
  const errors = causes.map((c) => `${c.field}: ${c.body}`);
  const message = `PodLogOptions "${pod}" is invalid: ${errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`}`;
  const details: StatusCause[] = causes.map((c) => {
    const cause: StatusCause = { reason: c.type === "Invalid" ? "FieldValueInvalid" : "FieldValueForbidden", message: c.body };
    if (c.field !== "") cause.field = c.field;
    return cause;
  });
  return failure(422, "Invalid", message, { name: pod, kind: "PodLogOptions", causes: details });
}

/** The options of a log request for pod `pod`, or the API server's `400` or `422`. */
export function parseLogOptions(query: URLSearchParams, pod: string): Result<LogOptions> {
  const int = (name: string): bigint | undefined | Status => {
    const value = query.get(name);
    if (value === null) return undefined;
    const parsed = parseInt64(value);
    return parsed.ok ? parsed.value : badRequest(parsed.message);
  };
  // In PodLogOptions' field order, which is the order its conversion fails in.
  const sinceSeconds = int("sinceSeconds");
  if (typeof sinceSeconds === "object") return { ok: false, status: sinceSeconds };
  let sinceTime: Nanos | undefined;
  const sinceTimeText = query.get("sinceTime");
  if (sinceTimeText !== null) {
    if (sinceTimeText === "" || sinceTimeText === "null") sinceTime = ZERO_TIME;
    else {
      const parsed = parseRfc3339(sinceTimeText);
      if (!parsed.ok) return { ok: false, status: badRequest(parsed.message) };
      sinceTime = parsed.nanos;
    }
  }
  const tailLines = int("tailLines");
  if (typeof tailLines === "object") return { ok: false, status: tailLines };
  const limitBytes = int("limitBytes");
  if (typeof limitBytes === "object") return { ok: false, status: limitBytes };

  const causes: Parameters<typeof invalidLogOptions>[1] = [];
  if (tailLines !== undefined && tailLines < 0n) causes.push({ field: "tailLines", type: "Invalid", body: `Invalid value: ${tailLines}: must be greater than or equal to 0` });
  if (limitBytes !== undefined && limitBytes < 1n) causes.push({ field: "limitBytes", type: "Invalid", body: `Invalid value: ${limitBytes}: must be greater than 0` });
  if (sinceSeconds !== undefined && sinceTime !== undefined) causes.push({ field: "", type: "Forbidden", body: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified" });
  else if (sinceSeconds !== undefined && sinceSeconds < 1n) causes.push({ field: "sinceSeconds", type: "Invalid", body: `Invalid value: ${sinceSeconds}: must be greater than 0` });
  if (causes.length > 0) return { ok: false, status: invalidLogOptions(pod, causes) };

  return {
    ok: true,
    value: {
      container: query.get("container") || undefined,
      follow: goBool(query.get("follow")),
      previous: goBool(query.get("previous")),
      timestamps: goBool(query.get("timestamps")),
      tailLines: tailLines === undefined ? undefined : clamp(tailLines),
      sinceSeconds: sinceSeconds === undefined ? undefined : clamp(sinceSeconds),
      sinceTime,
      limitBytes: limitBytes === undefined ? undefined : clamp(limitBytes),
    },
  };
}

/** The query of a log request with these options, as the API server passes them on (`LogLocation`): only what is set. */
export function logQuery(options: Partial<LogOptions>): URLSearchParams {
  const query = new URLSearchParams();
  if (options.container !== undefined) query.set("container", options.container);
  if (options.follow) query.set("follow", "true");
  if (options.previous) query.set("previous", "true");
  if (options.timestamps) query.set("timestamps", "true");
  if (options.sinceSeconds !== undefined) query.set("sinceSeconds", String(options.sinceSeconds));
  if (options.sinceTime !== undefined) query.set("sinceTime", formatRfc3339(options.sinceTime));
  if (options.tailLines !== undefined) query.set("tailLines", String(options.tailLines));
  if (options.limitBytes !== undefined) query.set("limitBytes", String(options.limitBytes));
  return query;
}
