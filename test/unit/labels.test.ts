import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareCodePoints, formatLabelSelector, goQuote, type LabelRequirement, type LabelSelector, matchesLabels, parseLabelSelector, SelectorError } from "../../src/k8s/labels.ts";

/** The message `parseLabelSelector` throws, or `undefined` when it parses. */
function parseError(input: string): string | undefined {
  try {
    parseLabelSelector(input);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(SelectorError);
    return (e as SelectorError).message;
  }
}

const canonical = (input: string): string => formatLabelSelector(parseLabelSelector(input));

const NAME_PART_REGEX_ERROR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX_ERROR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe("parseLabelSelector: accepted syntax", () => {
  it("treats an empty or blank selector as everything", () => {
    expect(parseLabelSelector("")).toEqual({ requirements: [] });
    expect(parseLabelSelector(" \t\r\n ")).toEqual({ requirements: [] });
  });

  it("parses every operator", () => {
    expect(parseLabelSelector("a, !b, c=1, d==2, e!=3, f in (x,y), g notin (z), h > 5, i<6").requirements).toEqual([
      { key: "a", operator: "exists", values: [] },
      { key: "b", operator: "!", values: [] },
      { key: "c", operator: "=", values: ["1"] },
      { key: "d", operator: "=", values: ["2"] },
      { key: "e", operator: "!=", values: ["3"] },
      { key: "f", operator: "in", values: ["x", "y"] },
      { key: "g", operator: "notin", values: ["z"] },
      { key: "h", operator: "gt", values: ["5"] },
      { key: "i", operator: "lt", values: ["6"] },
    ]);
  });

  it("sorts requirements by key and set values, and drops duplicate values", () => {
    expect(parseLabelSelector("z in (c,a,c,b),a=1").requirements).toEqual([
      { key: "a", operator: "=", values: ["1"] },
      { key: "z", operator: "in", values: ["a", "b", "c"] },
    ]);
  });

  it("allows empty values where upstream does", () => {
    expect(parseLabelSelector("a=,b==,c!=").requirements.map((r) => r.values)).toEqual([[""], [""], [""]]);
    expect(parseLabelSelector("a in ()").requirements[0]?.values).toEqual([""]);
    expect(parseLabelSelector("a in (,b)").requirements[0]?.values).toEqual(["", "b"]);
    expect(parseLabelSelector("a in (b,)").requirements[0]?.values).toEqual(["", "b"]);
    expect(parseLabelSelector("a in (b,,c)").requirements[0]?.values).toEqual(["", "b", "c"]);
    expect(parseLabelSelector("a notin (,)").requirements[0]?.values).toEqual([""]);
  });

  it("reads in and notin as identifiers in key and value position", () => {
    expect(parseLabelSelector("in in (in,notin),notin").requirements).toEqual([
      { key: "in", operator: "in", values: ["in", "notin"] },
      { key: "notin", operator: "exists", values: [] },
    ]);
    expect(parseLabelSelector("!in").requirements).toEqual([{ key: "in", operator: "!", values: [] }]);
  });

  it("accepts prefixed keys and does not see prototype properties as tokens", () => {
    expect(parseLabelSelector("app.kubernetes.io/name=web,constructor").requirements.map((r) => r.key)).toEqual(["app.kubernetes.io/name", "constructor"]);
  });

  it("stops at a NUL where a token would start, as Go's lexer reads byte 0 as the end", () => {
    expect(parseLabelSelector("a \u0000 ,,garbage((").requirements).toEqual([{ key: "a", operator: "exists", values: [] }]);
  });
});

describe("parseLabelSelector: API server error messages", () => {
  it("reproduces a real API server's message for app:monolith", () => {
    expect(parseError("app:monolith")).toBe(`unable to parse requirement: <nil>: Invalid value: "app:monolith": name part ${NAME_PART_REGEX_ERROR}`);
  });

  it("reports an unterminated set", () => {
    expect(parseError("a in (b")).toBe("unable to parse requirement: found '', expected: ',' or ')'");
  });

  it("reports a bare !", () => {
    expect(parseError("!")).toBe("unable to parse requirement: found '', expected: identifier");
  });

  it("reports a trailing comma", () => {
    expect(parseError("a=b,")).toBe("found '', expected: identifier after ','");
  });

  it("reports a non-integer bound for > and <", () => {
    expect(parseError("x>notanint")).toBe(`unable to parse requirement: values[0]: Invalid value: "notanint": for 'Gt', 'Lt' operators, the value must be an integer`);
    expect(parseError("x<9223372036854775808")).toBe(`unable to parse requirement: values[0]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer`);
  });

  it("aggregates several errors of one requirement as upstream does", () => {
    expect(parseError("x>a:b")).toBe(
      `unable to parse requirement: [values[0]: Invalid value: "a:b": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: "a:b": ${LABEL_VALUE_REGEX_ERROR}]`,
    );
  });

  it("indexes invalid values in sorted order under the key", () => {
    expect(parseError("k in (b, a:b)")).toBe(`unable to parse requirement: values[0][k]: Invalid value: "a:b": ${LABEL_VALUE_REGEX_ERROR}`);
    expect(parseError(`a=${"x".repeat(64)}`)).toBe(`unable to parse requirement: values[0][a]: Invalid value: "${"x".repeat(64)}": must be no more than 63 bytes`);
  });

  it("validates keys as qualified names", () => {
    expect(parseError("/a")).toBe(`unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`);
    expect(parseError("a/")).toBe(`unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; name part ${NAME_PART_REGEX_ERROR}`);
    expect(parseError("Ex.com/a")).toBe(
      `unable to parse requirement: <nil>: Invalid value: "Ex.com/a": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    expect(parseError("a/b/c")).toBe(
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key ${NAME_PART_REGEX_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
    expect(parseError(`${"k".repeat(64)}`)).toBe(`unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": name part must be no more than 63 bytes`);
  });

  it("reports unexpected tokens with upstream's wording", () => {
    expect(parseError("a b")).toBe("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    expect(parseError("a in b")).toBe("unable to parse requirement: found 'b' expected: '('");
    expect(parseError("a in (=)")).toBe("unable to parse requirement: found '=', expected: ',', ')' or identifier");
    expect(parseError("a in (b,=)")).toBe("unable to parse requirement: found '=', expected: ',', or identifier");
    expect(parseError("a in (b c)")).toBe("unable to parse requirement: found 'c', expected: ',' or ')'");
    expect(parseError("a===b")).toBe("unable to parse requirement: found '=', expected: identifier");
    expect(parseError("=a")).toBe("found '=', expected: !, identifier, or 'end of string'");
    expect(parseError("a=b c")).toBe("found 'c', expected: ',' or 'end of string'");
    expect(parseError("a,,b")).toBe("found ',', expected: identifier after ','");
    // Upstream quirk: after `,,` the set parser wants another value, so `(b,,)` fails.
    expect(parseError("a in (b,,)")).toBe("unable to parse requirement: found ')', expected: ',', or identifier");
    // Upstream quirk: `!key` never takes an operator, so the `=` is what fails.
    expect(parseError("!a=b")).toBe("found '=', expected: ',' or 'end of string'");
  });

  it("quotes bad values as Go's %q does", () => {
    expect(parseError('a"b')).toBe(`unable to parse requirement: <nil>: Invalid value: "a\\"b": name part ${NAME_PART_REGEX_ERROR}`);
    expect(parseError("é")).toBe(`unable to parse requirement: <nil>: Invalid value: "é": name part ${NAME_PART_REGEX_ERROR}`);
  });
});

describe("matchesLabels", () => {
  const matches = (selector: string, labels?: Record<string, string>): boolean => matchesLabels(parseLabelSelector(selector), labels);

  it("matches everything with an empty selector", () => {
    expect(matches("", undefined)).toBe(true);
    expect(matches("", { a: "1" })).toBe(true);
  });

  it("requires the key for = and in, and not for != and notin", () => {
    expect(matches("a=1", { a: "1" })).toBe(true);
    expect(matches("a=1", { a: "2" })).toBe(false);
    expect(matches("a=1", {})).toBe(false);
    expect(matches("a in (1,2)", { a: "2" })).toBe(true);
    expect(matches("a in (1,2)", undefined)).toBe(false);
    expect(matches("a!=1", {})).toBe(true);
    expect(matches("a!=1", { a: "1" })).toBe(false);
    expect(matches("a notin (1,2)", { a: "3" })).toBe(true);
    expect(matches("a notin (1,2)", { a: "1" })).toBe(false);
    expect(matches("a=", { a: "" })).toBe(true);
    expect(matches("a=", {})).toBe(false);
  });

  it("tests presence for exists and !", () => {
    expect(matches("a", { a: "" })).toBe(true);
    expect(matches("a", {})).toBe(false);
    expect(matches("!a", {})).toBe(true);
    expect(matches("!a", { a: "x" })).toBe(false);
    // Own keys only: the prototype's `constructor` is not a label.
    expect(matches("constructor", {})).toBe(false);
    expect(matches("!constructor", {})).toBe(true);
  });

  it("compares integers for > and <, and never matches a non-integer or absent label", () => {
    expect(matches("a>5", { a: "6" })).toBe(true);
    expect(matches("a>5", { a: "5" })).toBe(false);
    expect(matches("a<5", { a: "-3" })).toBe(true);
    expect(matches("a>5", { a: "06" })).toBe(true);
    expect(matches("a>5", { a: "six" })).toBe(false);
    expect(matches("a<5", {})).toBe(false);
    expect(matches("a>9007199254740992", { a: "9007199254740993" })).toBe(true);
    expect(matches("a<1", { a: "-9223372036854775809" })).toBe(false);
  });

  it("ANDs requirements", () => {
    expect(matches("a=1,!b", { a: "1" })).toBe(true);
    expect(matches("a=1,!b", { a: "1", b: "" })).toBe(false);
  });
});

describe("formatLabelSelector", () => {
  it("gives b=2,a=1 and a=1, b=2 the same canonical string", () => {
    expect(canonical("b=2,a=1")).toBe("a=1,b=2");
    expect(canonical("a=1, b=2")).toBe("a=1,b=2");
  });

  it("normalises operators, sets and bounds", () => {
    expect(canonical("a==1")).toBe("a=1");
    expect(canonical("a in (1)")).toBe("a=1");
    expect(canonical("a in (1,1)")).toBe("a=1");
    expect(canonical("a notin ( x )")).toBe("a!=x");
    expect(canonical("a in ( c , b, c )")).toBe("a in (b,c)");
    expect(canonical("a notin (c,,b)")).toBe("a notin (,b,c)");
    expect(canonical("a in ()")).toBe("a=");
    expect(canonical("x > 007")).toBe("x>7");
    expect(canonical("x<0")).toBe("x<0");
  });

  it("orders by key, then operator, then values, and drops duplicates", () => {
    expect(canonical("b, !a, a=1, a==1, a in (2,1), a, a in (1,2)")).toBe("a,!a,a=1,a in (1,2),b");
    expect(canonical("a in (2,3),a in (1,9)")).toBe("a in (1,9),a in (2,3)");
  });

  it("writes the empty selector as an empty string", () => {
    expect(formatLabelSelector({ requirements: [] })).toBe("");
  });

  it("rejects a requirement the parser could never produce", () => {
    expect(() => formatLabelSelector({ requirements: [{ key: "a:b", operator: "exists", values: [] }] })).toThrow(SelectorError);
    expect(() => formatLabelSelector({ requirements: [{ key: "a", operator: "in", values: [] }] })).toThrow(SelectorError);
    expect(() => formatLabelSelector({ requirements: [{ key: "a", operator: "gt", values: ["x"] }] })).toThrow(SelectorError);
  });
});

describe("helpers", () => {
  it("quotes like Go's strconv.Quote", () => {
    expect(goQuote("plain")).toBe('"plain"');
    expect(goQuote('q"\\')).toBe('"q\\"\\\\"');
    expect(goQuote("\t\n\u0001\u007f")).toBe('"\\t\\n\\x01\\x7f"');
    expect(goQuote("é😀\u00a0\u200b")).toBe('"é😀\\u00a0\\u200b"');
  });

  it("orders strings by code point, as Go orders UTF-8 bytes", () => {
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0);
    expect(compareCodePoints("a", "ab")).toBeLessThan(0);
    expect(compareCodePoints("b", "a")).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const keyArb = fc.constantFrom("a", "b", "app", "x.io/tier", "in", "notin");
const valueArb = fc.constantFrom("", "1", "2", "10", "web", "in");
const boundArb = fc.constantFrom("0", "1", "5", "10", "007");
const sortedUnique = (values: string[]): string[] => [...new Set(values)].sort(compareCodePoints);

const requirementArb: fc.Arbitrary<LabelRequirement> = fc.oneof(
  fc.record({ key: keyArb, operator: fc.constantFrom("exists" as const, "!" as const), values: fc.constant<string[]>([]) }),
  fc.record({ key: keyArb, operator: fc.constantFrom("=" as const, "!=" as const), values: valueArb.map((v) => [v]) }),
  fc.record({
    key: keyArb,
    operator: fc.constantFrom("in" as const, "notin" as const),
    values: fc.array(valueArb, { minLength: 1, maxLength: 4 }).map(sortedUnique),
  }),
  fc.record({ key: keyArb, operator: fc.constantFrom("gt" as const, "lt" as const), values: boundArb.map((v) => [v]) }),
);
const selectorArb: fc.Arbitrary<LabelSelector> = fc.array(requirementArb, { maxLength: 5 }).map((requirements) => ({ requirements }));
const labelsArb = fc.dictionary(keyArb, fc.constantFrom("", "1", "2", "5", "10", "007", "web", "in", "x"), { maxKeys: 6 });

/** One of the many ways to write a requirement, with random blanks between tokens. */
function spellingArb(r: LabelRequirement): fc.Arbitrary<string> {
  const blank = fc.constantFrom("", " ", "\t", "  ");
  const set = (values: string[]): fc.Arbitrary<string> =>
    fc
      .tuple(fc.shuffledSubarray([...values, ...values], { minLength: values.length }), blank)
      // Upstream rejects `,,` right before `)`, so an empty value appears at most once.
      .filter(([picked]) => values.every((v) => picked.includes(v)) && picked.filter((v) => v === "").length <= 1)
      .map(([picked, b]) => `(${b}${picked.join(`${b},${b}`)}${b})`);
  const value = r.values[0] ?? "";
  const spellings: fc.Arbitrary<string>[] = [];
  switch (r.operator) {
    case "exists":
      spellings.push(fc.constant(r.key));
      break;
    case "!":
      spellings.push(blank.map((b) => `!${b}${r.key}`));
      break;
    case "=":
      spellings.push(
        fc.tuple(fc.constantFrom("=", "=="), blank).map(([op, b]) => `${r.key}${b}${op}${b}${value}`),
        set(r.values).map((s) => `${r.key} in ${s}`),
      );
      break;
    case "!=":
      spellings.push(
        blank.map((b) => `${r.key}${b}!=${b}${value}`),
        set(r.values).map((s) => `${r.key} notin ${s}`),
      );
      break;
    case "in":
    case "notin":
      spellings.push(set(r.values).map((s) => `${r.key} ${r.operator} ${s}`));
      if (r.values.length === 1) {
        spellings.push(blank.map((b) => `${r.key}${b}${r.operator === "in" ? "==" : "!="}${b}${value}`));
      }
      break;
    case "gt":
    case "lt":
      spellings.push(blank.map((b) => `${r.key}${b}${r.operator === "gt" ? ">" : "<"}${b}${value}`));
      break;
  }
  return fc.tuple(fc.oneof(...spellings), blank, blank).map(([s, before, after]) => `${before}${s}${after}`);
}

/** A selector written out with shuffled, sometimes repeated requirements in random spellings. */
function selectorSpellingArb(s: LabelSelector): fc.Arbitrary<string> {
  if (s.requirements.length === 0) return fc.constantFrom("", " ", "\t");
  return fc
    .shuffledSubarray([...s.requirements, ...s.requirements], { minLength: s.requirements.length })
    .filter((picked) => s.requirements.every((r) => picked.includes(r)))
    .chain((picked) => fc.tuple(...picked.map(spellingArb)))
    .map((parts) => parts.join(","));
}

describe("label selector properties", () => {
  it("formats idempotently: format(parse(format(s))) = format(s)", () => {
    fc.assert(
      fc.property(selectorArb, (s) => {
        const once = formatLabelSelector(s);
        expect(formatLabelSelector(parseLabelSelector(once))).toBe(once);
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("parses the canonical form to a selector matching the same label sets", () => {
    fc.assert(
      fc.property(selectorArb, fc.array(labelsArb, { minLength: 1, maxLength: 8 }), (s, labelSets) => {
        const reparsed = parseLabelSelector(formatLabelSelector(s));
        for (const labels of labelSets) expect(matchesLabels(reparsed, labels)).toBe(matchesLabels(s, labels));
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("gives every spelling of a selector the same canonical form and the same matches", () => {
    fc.assert(
      fc.property(
        selectorArb.chain((s) => fc.tuple(fc.constant(s), selectorSpellingArb(s), selectorSpellingArb(s))),
        fc.array(labelsArb, { minLength: 1, maxLength: 8 }),
        ([s, first, second], labelSets) => {
          const expected = formatLabelSelector(s);
          expect(canonical(first)).toBe(expected);
          expect(canonical(second)).toBe(expected);
          const parsed = parseLabelSelector(first);
          for (const labels of labelSets) expect(matchesLabels(parsed, labels)).toBe(matchesLabels(s, labels));
        },
      ),
      { seed: 42, numRuns: 500 },
    );
  });

  it("either parses or throws SelectorError for arbitrary input, and round-trips what it parses", () => {
    const token = fc.constantFrom("a", "b", "x.io/y", "in", "notin", "=", "==", "!=", "!", "(", ")", ",", ">", "<", " ", "1", ":", "");
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 12 }).map((t) => t.join("")),
        (input) => {
          let parsed: LabelSelector;
          try {
            parsed = parseLabelSelector(input);
          } catch (e) {
            expect(e).toBeInstanceOf(SelectorError);
            return;
          }
          const once = formatLabelSelector(parsed);
          expect(canonical(once)).toBe(once);
        },
      ),
      { seed: 42, numRuns: 1000 },
    );
  });
});
