/**
 * @module
 * Pod log options as the API server reads them (conversion errors word for word from Go's
 * strconv and time packages, validation as ValidatePodLogOptions), RFC 3339 times both ways,
 * and log lines split, stamped and placed.
 */
import { describe, expect, it } from "vitest";
import { comparePlace, LogLineReader, readLines, withoutTimestamp } from "../../src/k8s/log-lines.ts";
import { logQuery, parseLogOptions } from "../../src/k8s/log-options.ts";
import { formatRfc3339, formatRfc3339Nano, lineTimestamp, parseRfc3339 } from "../../src/k8s/rfc3339.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("RFC 3339 as Go parses it", () => {
  it("times with zones and fractions", () => {
    expect(parseRfc3339("2026-03-04T05:06:07Z")).toEqual({ ok: true, nanos: 1_772_600_767_000_000_000n });
    expect(parseRfc3339("2026-03-04T06:06:07.5+01:00")).toEqual({ ok: true, nanos: 1_772_600_767_500_000_000n });
    expect(parseRfc3339("2026-03-04T05:06:07.1234567891Z")).toEqual({ ok: true, nanos: 1_772_600_767_123_456_789n });
    expect(parseRfc3339("0001-01-01T00:00:00Z")).toEqual({ ok: true, nanos: -62_135_596_800_000_000_000n });
  });

  it("Go's error messages", () => {
    const error = (value: string) => {
      const parsed = parseRfc3339(value);
      return parsed.ok ? undefined : parsed.message;
    };
    const layout = '"2006-01-02T15:04:05Z07:00"';
    expect(error("yesterday")).toBe(`parsing time "yesterday" as ${layout}: cannot parse "yesterday" as "2006"`);
    expect(error("2026-01-01")).toBe(`parsing time "2026-01-01" as ${layout}: cannot parse "" as "T"`);
    expect(error("2026-01-01T10:00:00")).toBe(`parsing time "2026-01-01T10:00:00" as ${layout}: cannot parse "" as "Z07:00"`);
    expect(error("2026-1-01T10:00:00Z")).toBe(`parsing time "2026-1-01T10:00:00Z" as ${layout}: cannot parse "1-01T10:00:00Z" as "01"`);
    expect(error("2026-13-01T10:00:00Z")).toBe('parsing time "2026-13-01T10:00:00Z": month out of range');
    expect(error("2026-02-30T10:00:00Z")).toBe('parsing time "2026-02-30T10:00:00Z": day out of range');
    expect(error("2026-02-03T24:00:00Z")).toBe('parsing time "2026-02-03T24:00:00Z": hour out of range');
    expect(error("2026-02-03T10:00:00Zjunk")).toBe('parsing time "2026-02-03T10:00:00Zjunk": extra text: "junk"');
  });

  it("formats as the API server passes sinceTime on, and as the kubelet stamps lines", () => {
    expect(formatRfc3339(1_772_600_767_900_000_000n)).toBe("2026-03-04T05:06:07Z");
    expect(formatRfc3339(-62_135_596_800_000_000_000n)).toBe("0001-01-01T00:00:00Z");
    expect(formatRfc3339Nano(1_772_600_767_120_000_000n)).toBe("2026-03-04T05:06:07.12Z");
    expect(formatRfc3339Nano(1_772_600_767_000_000_000n)).toBe("2026-03-04T05:06:07Z");
    expect(lineTimestamp(bytes("2026-03-04T05:06:07.000000001Z hello\n"))).toEqual({ nanos: 1_772_600_767_000_000_001n, length: 31 });
    expect(lineTimestamp(bytes("hello world\n"))).toBeUndefined();
  });
});

describe("PodLogOptions", () => {
  const parse = (query: string) => parseLogOptions(new URLSearchParams(query), "web-1");

  it("converts as the generated conversion does", () => {
    expect(parse("container=app&follow=yes&previous=0&timestamps=FALSE&tailLines=%2B10&sinceSeconds=60&limitBytes=100")).toEqual({
      ok: true,
      value: { container: "app", follow: true, previous: false, timestamps: false, tailLines: 10, sinceSeconds: 60, sinceTime: undefined, limitBytes: 100 },
    });
    // An empty follow is true; an empty container is none; an empty sinceTime is Go's zero time.
    const empty = parse("follow=&container=&sinceTime=");
    expect(empty.ok && [empty.value.follow, empty.value.container, empty.value.sinceTime]).toEqual([true, undefined, -62_135_596_800_000_000_000n]);
  });

  it("400 with Go's conversion error, first field first; 422 with every invalid field", () => {
    const status = (query: string) => {
      const parsed = parse(query);
      return parsed.ok ? undefined : [parsed.status.code, parsed.status.message];
    };
    expect(status("tailLines=&sinceSeconds=x")).toEqual([400, 'strconv.ParseInt: parsing "x": invalid syntax']);
    expect(status("tailLines=")).toEqual([400, 'strconv.ParseInt: parsing "": invalid syntax']);
    expect(status("limitBytes=99999999999999999999")).toEqual([400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range']);
    expect(status("tailLines=-1")).toEqual([422, 'PodLogOptions "web-1" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0']);
    expect(status("sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z&limitBytes=0")).toEqual([
      422,
      'PodLogOptions "web-1" is invalid: [limitBytes: Invalid value: 0: must be greater than 0, : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified]',
    ]);
  });

  it("passes on only what is set, sinceTime to the second", () => {
    const parsed = parse("container=app&follow=1&sinceTime=2026-03-04T05:06:07.9Z&tailLines=5");
    expect(parsed.ok && logQuery(parsed.value).toString()).toBe("container=app&follow=true&sinceTime=2026-03-04T05%3A06%3A07Z&tailLines=5");
  });
});

describe("log lines", () => {
  it("split in any chunks, each placed by its timestamp and its place among lines with the same one", () => {
    const log = "2026-03-04T05:06:07.1Z a\n2026-03-04T05:06:07.1Z b\n2026-03-04T05:06:08Z c\nno stamp\n";
    const whole = readLines(bytes(log));
    const reader = new LogLineReader();
    const pieces = [...log].flatMap((c) => reader.push(bytes(c)));
    expect(pieces).toEqual(whole);
    expect(whole.map((l) => [text(withoutTimestamp(l)), l.ordinal, l.starts, l.complete])).toEqual([
      ["a\n", 0, true, true],
      ["b\n", 1, true, true],
      ["c\n", 0, true, true],
      ["no stamp\n", 1, true, true],
    ]);
    expect(comparePlace(whole[0]!, whole[1]!)).toBeLessThan(0);
    expect(comparePlace(whole[2]!, whole[1]!)).toBeGreaterThan(0);
  });

  it("a line longer than the longest held back goes on as fragments of one place; a last line without its newline ends the log", () => {
    const reader = new LogLineReader(30);
    const lines = [...reader.push(bytes("2026-03-04T05:06:07Z ")), ...reader.push(bytes("0123456789")), ...reader.push(bytes("abcdefghijklmnopqrstuvwxyz0123456789ABCD\n"))];
    expect(lines.map((l) => [text(l.bytes), l.starts, l.complete, l.ordinal])).toEqual([
      ["2026-03-04T05:06:07Z 012345678", true, false, 0],
      ["9abcdefghijklmnopqrstuvwxyz012", false, false, 0],
      ["3456789ABCD\n", false, true, 0],
    ]);
    expect(lines.every((l) => l.time === lines[0]!.time)).toBe(true);
    // However large the chunk it comes in: a hostile upstream's line of megabytes is held a fragment at a time.
    const one = new LogLineReader(30).push(bytes(`2026-03-04T05:06:07Z ${"x".repeat(100)}\nnext`));
    expect(one.map((l) => [l.bytes.length, l.complete])).toEqual([
      [30, false],
      [30, false],
      [30, false],
      [30, false],
      [2, true],
    ]);
    const ending = new LogLineReader();
    expect(ending.push(bytes("2026-03-04T05:06:08Z tail"))).toEqual([]);
    const last = ending.finish()!;
    expect([text(withoutTimestamp(last)), last.complete]).toEqual(["tail", false]);
  });
});
