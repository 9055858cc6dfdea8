/**
 * @module
 * RFC 3339 times as the API server reads and writes them: Go's `time.Parse(time.RFC3339, s)`
 * (which `metav1.Time` uses for query parameters such as `sinceTime`), with its error messages
 * word for word, since they reach clients as the message of a `400`; and the kubelet's log
 * timestamps (`time.RFC3339Nano`) as nanoseconds, for ordering lines.
 */

/** Nanoseconds since the Unix epoch. */
export type Nanos = bigint;

const LAYOUT = "2006-01-02T15:04:05Z07:00";

/** Go's `time.quote`: double quotes, with `"`, `\` and what is not printable ASCII escaped. */
function goQuote(s: string): string {
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0) as number;
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (code >= 0x20 && code < 0x7f) out += c;
    else out += [...new TextEncoder().encode(c)].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  }
  return `${out}"`;
}

class ParseError extends Error {}

const cannotParse = (value: string, valueElem: string, layoutElem: string): ParseError =>
  new ParseError(`parsing time ${goQuote(value)} as ${goQuote(LAYOUT)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`);

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's `getnum`: one or two digits (two when `fixed`). */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

const daysIn = (month: number, year: number): number => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/**
 * `time.Parse(time.RFC3339, value)`: the instant in nanoseconds since the epoch, or Go's error
 * message (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`).
 * Like Go, it takes a fractional second the layout does not name, and a numeric zone offset.
 */
export function parseRfc3339(value: string): { ok: true; nanos: Nanos } | { ok: false; message: string } {
  try {
    return { ok: true, nanos: parse(value) };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, message: e.message };
    throw e;
  }
}

function parse(original: string): Nanos {
  let value = original;
  const skip = (prefix: string) => {
    if (!value.startsWith(prefix)) throw cannotParse(original, value, prefix);
    value = value.slice(prefix.length);
  };
  const outOfRange = (what: string) => new ParseError(`parsing time ${goQuote(original)}: ${what} out of range`);
  // 2006
  if (!/^[0-9]{4}/.test(value)) throw cannotParse(original, value, "2006");
  const year = Number(value.slice(0, 4));
  value = value.slice(4);
  // -01 -02 T15 :04 :05, each: its literal, then its number.
  const numbers: number[] = [];
  for (const [prefix, elem, fixed, max, name] of [
    ["-", "01", true, 12, "month"],
    ["-", "02", true, 31, ""],
    ["T", "15", false, 23, "hour"],
    [":", "04", true, 59, "minute"],
    [":", "05", true, 59, "second"],
  ] as const) {
    skip(prefix);
    const hold = value;
    const got = getnum(value, fixed);
    if (!got) throw cannotParse(original, hold, elem);
    const [n, rest] = got;
    value = rest;
    if (name === "month" && (n < 1 || n > max)) throw outOfRange("month");
    if (name !== "month" && name !== "" && n > max) throw outOfRange(name);
    numbers.push(n);
  }
  const [month, day, hour, minute, second] = numbers as [number, number, number, number, number];
  // A fractional second the layout does not name is taken anyway (Go's stdSecond case); digits past the ninth are dropped.
  let nanos = 0n;
  if (value.length >= 2 && (value[0] === "." || value[0] === ",") && isDigit(value, 1)) {
    let n = 2;
    while (isDigit(value, n)) n++;
    nanos = BigInt(value.slice(1, Math.min(n, 10)).padEnd(9, "0"));
    value = value.slice(n);
  }
  // Z07:00
  let offsetSeconds = 0;
  if (value.startsWith("Z")) {
    value = value.slice(1);
  } else {
    const hold = value;
    if (value.length < 6 || value[3] !== ":") throw cannotParse(original, hold, "Z07:00");
    const sign = value[0];
    const hh = getnum(value.slice(1, 3), true);
    const mm = hh && getnum(value.slice(4, 6), true);
    value = value.slice(6);
    // Go checks the ranges before whether the offset parsed.
    if (hh && hh[0] > 24) throw outOfRange("time zone offset hour");
    if (mm && mm[0] > 60) throw outOfRange("time zone offset minute");
    if (!hh || !mm || (sign !== "+" && sign !== "-")) throw cannotParse(original, hold, "Z07:00");
    offsetSeconds = (sign === "-" ? -1 : 1) * (hh[0] * 60 + mm[0]) * 60;
  }
  if (value.length > 0) throw new ParseError(`parsing time ${goQuote(original)}: extra text: ${goQuote(value)}`);
  if (day < 1 || day > daysIn(month, year)) throw outOfRange("day");
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  return BigInt(seconds) * 1_000_000_000n + nanos;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The date of a day since 1970-01-01 (`civil_from_days`). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

/** `time.Time.Format(time.RFC3339)` in UTC, whole seconds: what the API server sends the kubelet as `sinceTime`. */
export function formatRfc3339(nanos: Nanos): string {
  const seconds = Number(floorDiv(nanos, 1_000_000_000n));
  const days = Math.floor(seconds / 86_400);
  const [year, month, day] = civilFromDays(days);
  const rest = seconds - days * 86_400;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${String(year).padStart(4, "0")}-${two(month)}-${two(day)}T${two(Math.floor(rest / 3600))}:${two(Math.floor(rest / 60) % 60)}:${two(rest % 60)}Z`;
}

/** The whole second `nanos` falls in, as nanoseconds (toward the past). */
export const floorSecond = (nanos: Nanos): Nanos => floorDiv(nanos, 1_000_000_000n) * 1_000_000_000n;

const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/**
 * The kubelet's timestamp at the start of a log line (`time.RFC3339Nano` then a space, as
 * `kubectl logs --timestamps` shows it): its instant and the bytes it takes with the space, or
 * `undefined` for a line that has none.
 */
export function lineTimestamp(line: Uint8Array): { nanos: Nanos; length: number } | undefined {
  // "2006-01-02T15:04:05.999999999+07:00 " is 36 bytes at most.
  const end = line.subarray(0, 40).indexOf(0x20);
  if (end < 20) return undefined;
  let text = "";
  for (let i = 0; i < end; i++) text += String.fromCharCode(line[i] as number);
  const parsed = parseRfc3339(text);
  return parsed.ok ? { nanos: parsed.nanos, length: end + 1 } : undefined;
}

/** `time.Time.Format(time.RFC3339Nano)` in UTC: the kubelet's form (trailing zeros of the fraction dropped). */
export function formatRfc3339Nano(nanos: Nanos): string {
  const fraction = ((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const base = formatRfc3339(nanos).slice(0, -1);
  const digits = fraction.toString().padStart(9, "0").replace(/0+$/, "");
  return `${base}${digits ? `.${digits}` : ""}Z`;
}
