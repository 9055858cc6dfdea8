/**
 * Every string the relay writes in YAML (src/k8s/yaml.ts) reads back as that string, checked with
 * an independent YAML 1.1 reader (the `yaml` package in its 1.1 mode, whose types are YAML 1.1's
 * as go-yaml v2 reads them: `yes`/`on`, `0b1`, `017`, `1_000`, `.5_0`, sexagesimal `1:20`,
 * timestamps) on generated strings: near-numbers, words, timestamps, indicators, quotes and
 * escapes, line breaks of every kind, long lines that fold, keys as well as values.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument, visit, type Scalar } from "yaml";
import { jsonToYaml, parseJson } from "../../src/k8s/yaml.ts";

/** The reader: YAML 1.1, without merge keys (go-yaml writes a `<<` key plain, as a string: yaml-golden.json). */
const read = (text: string) =>
  parseDocument(text, {
    version: "1.1",
    customTags: (tags) => tags.filter((tag) => typeof tag === "string" || tag.tag !== "tag:yaml.org,2002:merge"),
    logLevel: "error",
  });

/** A string as the API server's JSON carries it (Go escapes U+2028 and U+2029). */
const goJson = (s: string): string => JSON.stringify(s).replace(/[\u2028\u2029]/g, (c) => `\\u${(c.codePointAt(0) as number).toString(16)}`);

/** The string go-yaml has once it has read that JSON (a NEL in a JSON string is a line break to it, folded: `parseJson`). */
const decoded = (s: string): string => (parseJson(`{"v":${goJson(s)}}`) as Map<string, unknown>).get("v") as string;

/**
 * Where go-yaml v2 reads a plain scalar as a string though YAML 1.1's types read it as another,
 * so go-yaml writes it plain and the relay must too (yaml-golden.json has go-yaml's own output
 * for each kind):
 * - a timestamp in none of the layouts go-yaml tries (`2006-1-2`; with a time, `T` or `t` and a
 *   zone, or spaces and no zone);
 * - a float that starts with `.` which Go's `ParseFloat` refuses: no digit right after the dot, or
 *   an `_` that is not between two digits (`.e5`, `._5`, `.5_`);
 * - NaN from a pattern without a digit (`+.e5`, `0x_`): go-yaml's only NaN is `.nan`.
 */
function goYamlKeepsString(s: string, value: unknown): boolean {
  if (value instanceof Date)
    return !/^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})| +[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?$/.test(s);
  if (typeof value !== "number") return false;
  if (Number.isNaN(value)) return !/^\.(?:nan|NaN|NAN)$/.test(s);
  return s.startsWith(".") && (/^\.(?![0-9])/.test(s) || /(?<![0-9])_|_(?![0-9])/.test(s));
}

/** Pieces that YAML reads as something: numbers and their parts, YAML 1.1's words, indicators, quotes, escapes, breaks. */
const PIECES = [
  ..."0157_.:-+eExbo",
  "0x",
  "0b",
  "0o",
  "y",
  "n",
  "yes",
  "No",
  "on",
  "OFF",
  "true",
  "null",
  "~",
  ".inf",
  ".nan",
  " ",
  "  ",
  "\t",
  "\n",
  "\r",
  "\r\n",
  "\u0085",
  "\u2028",
  "\u2029",
  "#",
  " #",
  ": ",
  "- ",
  "?",
  "'",
  '"',
  "\\",
  ..."&*!|>%@`{}[],=",
  "<<",
  "---",
  "...",
  "\u00a0",
  "\ufeff",
  "é",
  "日本",
  "😀",
  "\u0001",
  "\u007f",
  "\u0080",
  "\ufffe",
  "T",
  "Z",
  "a",
  "b",
  "2001-12-14",
  "21:59:43",
];
const pieces = fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }).map((p) => p.join(""));

/** Long text, which go-yaml folds past column 80: words between runs of spaces and breaks. */
const long = fc
  .array(fc.tuple(fc.constantFrom("a", "bb", "dddd", "x: y", "#c", "'q'", '"d"', "\\", "é", "😀", "1", "-", "\u2028"), fc.constantFrom(" ", " ", " ", "  ", "\n", " \n", "\n\n", "\t")), {
    minLength: 10,
    maxLength: 40,
  })
  .map((words) => words.flat().join(""));

const two = (max: number) => fc.integer({ min: 0, max }).map((n) => (n < 10 && n % 2 === 0 ? String(n) : String(n).padStart(2, "0")));
/** Timestamps in the forms YAML 1.1 reads, of real calendar days, some in go-yaml's layouts and some not. */
const stamp = fc
  .tuple(
    fc.integer({ min: 1000, max: 2999 }),
    two(12).filter((m) => Number(m) >= 1),
    two(28).filter((d) => Number(d) >= 1),
    fc.option(fc.tuple(fc.constantFrom("T", "t", " ", "  ", "\t"), two(23), two(59), two(59), fc.constantFrom("", ".5", ".123456"), fc.constantFrom("", "Z", "+05:00", "-5", " Z"))),
  )
  .map(([y, m, d, time]) => `${y}-${m}-${d}${time ? `${time[0]}${time[1]}:${time[2]}:${time[3]}${time[4]}${time[5]}` : ""}`);

/** Shaped like YAML 1.1's ints, floats and sexagesimals, with underscores, dots and signs anywhere: each, and its near misses. */
const numeric = fc.oneof(
  fc.stringMatching(/^[-+]?[0-9_]{0,3}\.?[0-9_]{0,3}(?:[eE][-+]?[0-9_]{0,3})?$/),
  // A leading dot is a hint of its own to go-yaml: Go's ParseFloat decides.
  fc.stringMatching(/^\.[0-9][0-9_]{0,3}(?:[eE][-+]?[0-9][0-9_]{0,2})?$/),
  fc.stringMatching(/^[-+]?0[xXbBoO]?[0-9a-fA-F_]{0,4}$/),
  fc.stringMatching(/^[-+]?[0-9_]{1,3}(?::[0-9_]{1,2}){1,2}(?:\.[0-9_]{0,2})?$/),
);

/** Line breaks of every kind, with spaces, tabs and text beside them. */
const breaks = fc.stringMatching(/^[a ]{0,3}(?:[\n\r\u0085\u2028\u2029][a \t]{0,2}){1,3}$/);

const text = fc.oneof(numeric, breaks, pieces, long, stamp, fc.string({ unit: "grapheme", maxLength: 12 }));

/**
 * NEL, LS and PS: line breaks to YAML 1.1, text to YAML 1.2 and to this reader, which breaks lines
 * at LF and CR only. go-yaml writes them raw in single-quoted and literal scalars (where a YAML
 * 1.1 reader keeps them), never in a double-quoted or plain one (where it would fold them, and the
 * spaces beside them).
 */
const SPECIFIC_BREAK = /[\u0085\u2028\u2029]/;

/**
 * The relay's YAML of `json`: what it reads back as (unless it holds a raw NEL, LS or PS, which
 * the reader does not read as YAML 1.1 does), and the styles of the scalars that hold one. To find
 * those, the reader is shown each as text (a private-use character) or, where that does not parse
 * (one alone on a literal block's line), as the line break it is: one UTF-16 unit for another, so
 * every scalar's place holds.
 */
function roundTrip(json: string): { value: unknown; rawBreaks: string[] } {
  const yaml = jsonToYaml(json);
  if (!SPECIFIC_BREAK.test(yaml)) {
    const document = read(yaml);
    expect(
      document.errors.map((e) => e.message),
      yaml,
    ).toEqual([]);
    return { value: document.toJS({ mapAsMap: true }), rawBreaks: [] };
  }
  const shown = (as: string) => read(yaml.replace(new RegExp(SPECIFIC_BREAK.source, "g"), as));
  let document = shown("\ue000");
  if (document.errors.length > 0) document = shown("\n");
  expect(
    document.errors.map((e) => e.message),
    yaml,
  ).toEqual([]);
  const rawBreaks: string[] = [];
  visit(document, {
    Scalar(_, node: Scalar) {
      const [start, end] = node.range ?? [0, 0];
      if (SPECIFIC_BREAK.test(yaml.slice(start, end))) rawBreaks.push(node.type ?? "");
    },
  });
  return { value: undefined, rawBreaks };
}

/** Where the reader reads as YAML 1.1 does, what it read for `s` is the string go-yaml had; a raw NEL, LS or PS is only where YAML 1.1 keeps it. */
function expectString(s: string, value: unknown, rawBreaks: string[]): void {
  expect(
    rawBreaks.filter((style) => style !== "QUOTE_SINGLE" && style !== "BLOCK_LITERAL"),
    JSON.stringify(s),
  ).toEqual([]);
  if (rawBreaks.length > 0 || goYamlKeepsString(s, value)) return;
  expect(value, JSON.stringify(s)).toBe(decoded(s));
}

describe("YAML read back by a YAML 1.1 reader", () => {
  it("every string written, as a value, in a list, nested or as a key, reads back as itself", () => {
    fc.assert(
      fc.property(text, (s) => {
        const values = roundTrip(`{"v":${goJson(s)},"l":[${goJson(s)},{"m":${goJson(s)}}]}`);
        const doc = values.value as Map<string, unknown> | undefined;
        const list = doc?.get("l") as [unknown, Map<string, unknown>] | undefined;
        for (const value of [doc?.get("v"), list?.[0], list?.[1].get("m")]) expectString(s, value, values.rawBreaks);
        const keys = roundTrip(`{${goJson(s)}:1}`);
        const key = keys.value as Map<unknown, unknown> | undefined;
        if (key) expect(key.size).toBe(1);
        expectString(s, key?.keys().next().value, keys.rawBreaks);
      }),
      { seed: 20261129, numRuns: 2000 },
    );
  }, 60_000);

  it("the classes go-yaml and the reader part on are go-yaml's, and nothing the relay writes falls in them by mistake", () => {
    for (const s of ["2001-12-14T21:59:43", "2001-12-14 21:59:43 Z", "._5", ".5_", ".e5", "+.e5", "0x_"]) {
      const { value } = roundTrip(`{"v":${goJson(s)}}`);
      expect([s, goYamlKeepsString(s, (value as Map<string, unknown>).get("v"))]).toEqual([s, true]);
    }
    for (const s of [".5_0", ".5e1_0", "2001-12-14  21:59:43", "1:20", "0b1_0", "yes", "a \u2028 b"]) {
      const { value, rawBreaks } = roundTrip(`{"v":${goJson(s)}}`);
      expect([s, (value as Map<string, unknown>).get("v"), rawBreaks]).toEqual([s, s, []]);
    }
  });
});
