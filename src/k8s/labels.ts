/**
 * @module
 * Label selectors as the API server reads them: a port of apimachinery `pkg/labels/selector.go`
 * (`labels.Parse`: lexer, parser, `NewRequirement`, `Requirement.Matches`), with the validation
 * messages of `pkg/api/validate/content` (`IsLabelKey`, `IsLabelValue`, `IsDNS1123Subdomain`,
 * behind `pkg/util/validation`) and the formatting of `pkg/util/validation/field` and
 * `pkg/util/errors`, so a rejected selector gets the API server's exact 400 message. Adds a
 * canonical form so equivalent spellings share one relay hub.
 */

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One requirement; `values` sorted and deduplicated, `[]` for `exists` and `!`. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** AND of its requirements; no requirements selects everything. */
export interface LabelSelector {
  requirements: LabelRequirement[];
}

/** A selector the API server would reject; `message` is its 400 Status message. */
export class SelectorError extends Error {
  override name = "SelectorError";
}

// ---------------------------------------------------------------------------------------------
// Shared helpers (fields.ts uses them too)

/**
 * Compares strings in Unicode code point order, which is Go's byte order over UTF-8
 * (`sort.Strings`), unlike JavaScript's UTF-16 code unit order.
 * @internal
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

// Surrogates encode code points above U+FFFF, so they rank after U+E000..U+FFFF.
const codeUnitRank = (u: number): number => (u >= 0xd800 && u <= 0xdfff ? u + 0x2000 : u >= 0xe000 ? u - 0x800 : u);

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const GO_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x07, "\\a"],
  [0x08, "\\b"],
  [0x0c, "\\f"],
  [0x0a, "\\n"],
  [0x0d, "\\r"],
  [0x09, "\\t"],
  [0x0b, "\\v"],
]);

/**
 * Go's `%q` (`strconv.Quote`) for a string, as the API server writes bad values into messages.
 * @internal
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) {
      // A lone surrogate reaches Go as three invalid UTF-8 bytes, each quoted as \xNN.
      out += `\\x${(0xe0 | (cp >> 12)).toString(16)}\\x${(0x80 | ((cp >> 6) & 0x3f)).toString(16)}\\x${(0x80 | (cp & 0x3f)).toString(16)}`;
    } else if (cp >= 0x80 && GO_PRINTABLE.test(ch)) out += ch;
    else if (GO_ESCAPES.has(cp)) out += GO_ESCAPES.get(cp);
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}

const CONTROL = /\p{Cc}/u;

/**
 * Refuses a selector holding a control character (Unicode Cc) other than the whitespace the
 * label grammar separates tokens with. The API server's parsers let them by (its label lexer
 * takes a NUL for the end of the input; field values are not checked at all), but no label,
 * name or built-in selectable field can hold one, so the relay answers 400 rather than carry
 * them into hub keys, logs and upstream URLs. Throws `SelectorError`.
 */
export function refuseControlCharacters(kind: "label" | "field", selector: string): void {
  for (const [index, ch] of [...selector].entries()) {
    if (CONTROL.test(ch) && !(kind === "label" && isWhitespace(ch))) {
      throw new SelectorError(`invalid ${kind} selector: control character ${goQuote(ch)} at position ${index} is not allowed`);
    }
  }
}

// Go measures lengths in UTF-8 bytes.
function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Validation messages (apimachinery pkg/api/validate/content, re-exported by pkg/util/validation)

function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  // Verbatim upstream: each example is followed by ", " and joined with " or ", hence "',  or '".
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${re}')`;
}

const maxLenError = (n: number): string => `must be no more than ${n} bytes`;

const LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_ERR = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"));
  return errs;
}

/** `content.IsLabelKey` (a.k.a. `validation.IsQualifiedName`). */
function labelKeyErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) name = value;
  else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else for (const msg of dns1123SubdomainErrors(prefix)) errs.push(`prefix part ${msg}`);
  } else {
    return [`a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (utf8Length(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")}`);
  return errs;
}

/** `content.IsLabelValue`. */
function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  return errs;
}

/** `field.Invalid(path, value, detail).Error()`; a nil path prints as `<nil>`. */
const invalid = (path: string, value: string, detail: string): string => `${path}: Invalid value: ${goQuote(value)}: ${detail}`;

/** `ErrorList.ToAggregate().Error()`: duplicates dropped, several wrapped in `[a, b]`. */
function aggregate(errors: readonly string[]): string | undefined {
  const unique = [...new Set(errors)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`;
}

// strconv.ParseInt(s, 10, 64)
const INT_RE = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
function parseInt64(s: string): bigint | undefined {
  if (!INT_RE.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/**
 * `NewRequirement`'s checks after the key (which the parser has already validated): throws the
 * aggregated message. Paths are relative to a nil root, as `labels.Parse` passes none.
 */
function checkValues(key: string, operator: LabelOperator, values: readonly string[]): void {
  const errs: string[] = [];
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) errs.push(`values: Invalid value: ${JSON.stringify(values)}: for 'in', 'notin' operators, values set can't be empty`);
      break;
    case "=":
    case "!=":
      if (values.length !== 1) errs.push(`values: Invalid value: ${JSON.stringify(values)}: exact-match compatibility requires one single value`);
      break;
    case "exists":
    case "!":
      if (values.length !== 0) errs.push(`values: Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`);
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) errs.push(`values: Invalid value: ${JSON.stringify(values)}: for 'Gt', 'Lt' operators, exactly one value is required`);
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const msgs = labelValueErrors(v);
    if (msgs.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, msgs.join("; ")));
  });
  const message = aggregate(errs);
  if (message !== undefined) throw new RequirementError(message);
}

function checkKey(key: string): void {
  const msgs = labelKeyErrors(key);
  if (msgs.length > 0) throw new RequirementError(invalid("<nil>", key, msgs.join("; ")));
}

// ---------------------------------------------------------------------------------------------
// Lexer (byte-for-byte the upstream state machine; every special byte is ASCII, so UTF-16 code
// units split the input exactly where Go's bytes do)

type Token = "error" | "eos" | ")" | "," | "!" | "==" | "=" | ">" | "id" | "in" | "<" | "!=" | "notin" | "(";
type Item = readonly [token: Token, literal: string];

// A Map, not an object literal: an identifier such as `constructor` must not hit a prototype key.
const STRING_TO_TOKEN: ReadonlyMap<string, Token> = new Map<string, Token>([
  [")", ")"],
  [",", ","],
  ["!", "!"],
  ["==", "=="],
  ["=", "="],
  [">", ">"],
  ["in", "in"],
  ["<", "<"],
  ["!=", "!="],
  ["notin", "notin"],
  ["(", "("],
]);

const isWhitespace = (ch: string): boolean => ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
const isSpecialSymbol = (ch: string): boolean => ch === "=" || ch === "!" || ch === "(" || ch === ")" || ch === "," || ch === ">" || ch === "<";

// Go's lexer reads byte 0 for "end of input", so a NUL in the selector ends it there too.
const END = "\0";

class Lexer {
  readonly #s: string;
  #pos = 0;

  constructor(s: string) {
    this.#s = s;
  }

  #read(): string {
    if (this.#pos < this.#s.length) return this.#s[this.#pos++] ?? END;
    return END;
  }

  #unread(): void {
    this.#pos--;
  }

  #scanIdOrKeyword(): Item {
    let buffer = "";
    for (;;) {
      const ch = this.#read();
      if (ch === END) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.#unread();
        break;
      }
      buffer += ch;
    }
    return [STRING_TO_TOKEN.get(buffer) ?? "id", buffer];
  }

  #scanSpecialSymbol(): Item {
    let last: Item | undefined;
    let buffer = "";
    for (;;) {
      const ch = this.#read();
      if (ch === END) break;
      if (!isSpecialSymbol(ch)) {
        this.#unread();
        break;
      }
      buffer += ch;
      const token = STRING_TO_TOKEN.get(buffer);
      if (token !== undefined) last = [token, buffer];
      else if (last !== undefined) {
        this.#unread();
        break;
      }
    }
    return last ?? ["error", `error expected: keyword found '${buffer}'`];
  }

  lex(): Item {
    let ch = this.#read();
    while (isWhitespace(ch)) ch = this.#read();
    if (ch === END) return ["eos", ""];
    this.#unread();
    return isSpecialSymbol(ch) ? this.#scanSpecialSymbol() : this.#scanIdOrKeyword();
  }
}

// ---------------------------------------------------------------------------------------------
// Parser

/** An error inside one requirement; `parse` prefixes it with "unable to parse requirement: ". */
class RequirementError extends Error {}

// In value position `in` and `notin` are plain identifiers (`x in (in)`).
type Context = "keyAndOperator" | "values";

const BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt";

class Parser {
  readonly #items: Item[] = [];
  #position = 0;

  constructor(input: string) {
    const lexer = new Lexer(input);
    for (;;) {
      const item = lexer.lex();
      this.#items.push(item);
      if (item[0] === "eos") break;
    }
  }

  #lookahead(context: Context): Item {
    return Parser.#inContext(this.#items[this.#position] ?? ["eos", ""], context);
  }

  #consume(context: Context): Item {
    const item = this.#items[this.#position] ?? ["eos", ""];
    this.#position++;
    return Parser.#inContext(item, context);
  }

  static #inContext(item: Item, context: Context): Item {
    return context === "values" && (item[0] === "in" || item[0] === "notin") ? ["id", item[1]] : item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const [token, literal] = this.#lookahead("values");
      switch (token) {
        case "id":
        case "!": {
          try {
            requirements.push(this.#parseRequirement());
          } catch (e) {
            if (e instanceof RequirementError) throw new SelectorError(`unable to parse requirement: ${e.message}`);
            throw e;
          }
          const [t, l] = this.#consume("values");
          if (t === "eos") return requirements;
          if (t !== ",") throw new SelectorError(`found '${l}', expected: ',' or 'end of string'`);
          const [t2, l2] = this.#lookahead("values");
          if (t2 !== "id" && t2 !== "!") throw new SelectorError(`found '${l2}', expected: identifier after ','`);
          break;
        }
        case "eos":
          return requirements;
        default:
          throw new SelectorError(`found '${literal}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  #parseRequirement(): LabelRequirement {
    const [key, inferred] = this.#parseKeyAndInferOperator();
    if (inferred !== undefined) return { key, operator: inferred, values: [] };
    const operator = this.#parseOperator();
    const values = operator === "in" || operator === "notin" ? this.#parseValues() : this.#parseExactValue();
    const list = [...values].sort(compareCodePoints);
    checkValues(key, operator, list);
    return { key, operator, values: list };
  }

  /** The key, and `exists`/`!` when the requirement has no operator of its own. */
  #parseKeyAndInferOperator(): [string, "exists" | "!" | undefined] {
    let operator: "exists" | "!" | undefined;
    let [token, literal] = this.#consume("values");
    if (token === "!") {
      operator = "!";
      [token, literal] = this.#consume("values");
    }
    if (token !== "id") throw new RequirementError(`found '${literal}', expected: identifier`);
    checkKey(literal);
    // Upstream quirk kept: `!key` followed by anything still ends here, so `!a=b` fails on `=`.
    const [next] = this.#lookahead("values");
    if ((next === "eos" || next === ",") && operator !== "!") operator = "exists";
    return [literal, operator];
  }

  #parseOperator(): LabelOperator {
    const [token, literal] = this.#consume("keyAndOperator");
    switch (token) {
      case "in":
        return "in";
      case "notin":
        return "notin";
      case "=":
      case "==":
        return "=";
      case "!=":
        return "!=";
      case ">":
        return "gt";
      case "<":
        return "lt";
      default:
        throw new RequirementError(`found '${literal}', expected: ${BINARY_OPERATORS}`);
    }
  }

  #parseValues(): Set<string> {
    const [token, literal] = this.#consume("values");
    if (token !== "(") throw new RequirementError(`found '${literal}' expected: '('`);
    const [next, nextLiteral] = this.#lookahead("values");
    switch (next) {
      case "id":
      case ",": {
        const values = this.#parseIdentifiersList();
        const [close] = this.#consume("values");
        if (close !== ")") throw new RequirementError(`found '${nextLiteral}', expected: ')'`);
        return values;
      }
      case ")":
        this.#consume("values");
        return new Set([""]);
      default:
        throw new RequirementError(`found '${nextLiteral}', expected: ',', ')' or identifier`);
    }
  }

  /** A comma-separated list of possibly empty identifiers, up to (not including) `)`. */
  #parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const [token, literal] = this.#consume("values");
      if (token === "id") {
        values.add(literal);
        const [next, nextLiteral] = this.#lookahead("values");
        if (next === ",") continue;
        if (next === ")") return values;
        throw new RequirementError(`found '${nextLiteral}', expected: ',' or ')'`);
      }
      if (token === ",") {
        if (values.size === 0) values.add(""); // "(,"
        const [next] = this.#lookahead("values");
        if (next === ")") {
          values.add(""); // ",)"
          return values;
        }
        if (next === ",") {
          this.#consume("values");
          values.add(""); // ",,"
        }
        continue;
      }
      throw new RequirementError(`found '${literal}', expected: ',', or identifier`);
    }
  }

  #parseExactValue(): Set<string> {
    const [next] = this.#lookahead("values");
    if (next === "eos" || next === ",") return new Set([""]);
    const [token, literal] = this.#consume("values");
    if (token === "id") return new Set([literal]);
    throw new RequirementError(`found '${literal}', expected: identifier`);
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Parses a `labelSelector` as `labels.Parse` does; `""` (or only whitespace) selects everything.
 * Requirements come back sorted by key, as upstream sorts them. Throws `SelectorError`.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const requirements = new Parser(input).parse();
  // Array.prototype.sort is stable, like the insertion sort Go uses for short inputs.
  requirements.sort((a, b) => compareCodePoints(a.key, b.key));
  return { requirements };
}

/** `Requirement.Matches` for every requirement; `undefined` labels are an empty set. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const set = labels ?? {};
  return selector.requirements.every((r) => matchesRequirement(r, set));
}

function matchesRequirement(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  // Own properties only: a label map must not "have" `constructor` through its prototype.
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case "=":
    case "in":
      return value !== undefined && r.values.includes(value);
    case "!=":
    case "notin":
      return value === undefined || !r.values.includes(value);
    case "exists":
      return has;
    case "!":
      return !has;
    case "gt":
    case "lt": {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = parseInt64(value);
      const bound = parseInt64(r.values[0] ?? "");
      if (actual === undefined || bound === undefined) return false;
      return r.operator === "gt" ? actual > bound : actual < bound;
    }
  }
}

const OPERATOR_RANK: Readonly<Record<LabelOperator, number>> = { exists: 0, "!": 1, "=": 2, "!=": 3, in: 4, notin: 5, gt: 6, lt: 7 };

/**
 * The canonical string: `==` and one-value `in` become `=`, one-value `notin` becomes `!=`, set
 * values are sorted and deduplicated, `gt`/`lt` bounds are written as plain integers, duplicate
 * requirements go, and requirements are ordered by key, operator, then values. Set syntax is
 * upstream `String()`'s (`key in (a,b)`), so the API server parses it back to the same selector.
 * Throws `SelectorError` for a requirement `labels.Parse` could never have produced.
 */
export function formatLabelSelector(selector: LabelSelector): string {
  const canonical = selector.requirements.map(canonicalRequirement);
  canonical.sort(compareRequirements);
  const out: string[] = [];
  let previous: LabelRequirement | undefined;
  for (const r of canonical) {
    if (previous === undefined || compareRequirements(previous, r) !== 0) out.push(requirementString(r));
    previous = r;
  }
  return out.join(",");
}

function canonicalRequirement(r: LabelRequirement): LabelRequirement {
  const values = [...new Set(r.values)].sort(compareCodePoints);
  let operator = r.operator;
  if (operator === "=" || operator === "in") operator = values.length === 1 ? "=" : "in";
  else if (operator === "!=" || operator === "notin") operator = values.length === 1 ? "!=" : "notin";
  try {
    checkKey(r.key);
    checkValues(r.key, operator, values);
  } catch (e) {
    if (e instanceof RequirementError) throw new SelectorError(`unable to parse requirement: ${e.message}`);
    throw e;
  }
  if (operator === "gt" || operator === "lt") return { key: r.key, operator, values: values.map((v) => String(parseInt64(v))) };
  return { key: r.key, operator, values };
}

function compareRequirements(a: LabelRequirement, b: LabelRequirement): number {
  const byKey = compareCodePoints(a.key, b.key);
  if (byKey !== 0) return byKey;
  const byOperator = OPERATOR_RANK[a.operator] - OPERATOR_RANK[b.operator];
  if (byOperator !== 0) return byOperator;
  const n = Math.min(a.values.length, b.values.length);
  for (let i = 0; i < n; i++) {
    const byValue = compareCodePoints(a.values[i] ?? "", b.values[i] ?? "");
    if (byValue !== 0) return byValue;
  }
  return a.values.length - b.values.length;
}

function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case "exists":
      return r.key;
    case "!":
      return `!${r.key}`;
    case "=":
      return `${r.key}=${r.values[0] ?? ""}`;
    case "!=":
      return `${r.key}!=${r.values[0] ?? ""}`;
    case "in":
      return `${r.key} in (${r.values.join(",")})`;
    case "notin":
      return `${r.key} notin (${r.values.join(",")})`;
    case "gt":
      return `${r.key}>${r.values[0] ?? ""}`;
    case "lt":
      return `${r.key}<${r.values[0] ?? ""}`;
  }
}
