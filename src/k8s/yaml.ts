/**
 * @module
 * JSON to YAML as the API server converts it: its YAML serializer encodes an object as JSON and
 * turns that into YAML with `sigs.k8s.io/yaml` `JSONToYAML`, which decodes the JSON with go-yaml
 * v2 (YAML 1.1) and marshals the result with go-yaml v2 again. So keys come out sorted (go-yaml's
 * order: digit runs compared as numbers), sequences are not indented under their key, strings
 * that would read back as something else (`"true"`, `"123"`, a timestamp, `""`) are
 * double-quoted, strings with line breaks are literal blocks, long lines fold after column 80,
 * and numbers keep their JSON type (go-yaml resolves a JSON number as an int, or a float printed
 * the way Go's `strconv` prints one).
 *
 * The emitter is a port of go-yaml v2's (`emitterc.go`, itself libyaml's), driven by the same
 * events and with the same lookahead, for the part JSON needs: block and (empty) flow
 * collections, and plain, quoted and literal scalars. Events can be fed a value at a time, so a
 * list is written an item at a time without holding it (`YamlList`). No YAML library on npm
 * writes go-yaml's bytes: a client comparing the relay's YAML with the API server's (or a
 * checksum of it) would tell.
 */

/** A JSON value as go-yaml decoded it: numbers keep their text (an int or a float, as it resolves). */
export type YamlValue = null | boolean | string | JsonNumber | YamlValue[] | Map<string, YamlValue>;

export class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

// ---------------------------------------------------------------- JSON, decoded as go-yaml does

/** Parse JSON text, keeping each number's text and the last of duplicate keys (go-yaml's decoding into a map). */
export function parseJson(text: string): YamlValue {
  let i = 0;
  const fail = (): never => {
    throw new SyntaxError(`invalid JSON at ${i}`);
  };
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  };
  const string = (): string => {
    const start = i++;
    let escaped = false;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") {
        escaped = true;
        i++;
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
    const decoded = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
    // YAML 1.1 reads a NEL (which JSON encoders leave as it is) as a line break, folded in a quoted string as a line of a flow scalar is.
    return decoded.includes("\u0085") ? decoded.replace(/ *\u0085[ \u0085]*/g, (run) => foldedBreaks(run)) : decoded;
  };
  const value = (): YamlValue => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const map = new Map<string, YamlValue>();
      ws();
      if (text[i] === "}") {
        i++;
        return map;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const key = string();
        ws();
        if (text[i++] !== ":") fail();
        map.delete(key);
        map.set(key, value());
        ws();
        if (text[i] === ",") i++;
        else if (text[i++] === "}") return map;
        else fail();
      }
    }
    if (c === "[") {
      i++;
      const list: YamlValue[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return list;
      }
      for (;;) {
        list.push(value());
        ws();
        if (text[i] === ",") i++;
        else if (text[i++] === "]") return list;
        else fail();
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(text.slice(i, i + 400))?.[0];
    if (!literal) return fail();
    i += literal.length;
    if (literal === "true") return true;
    if (literal === "false") return false;
    if (literal === "null") return null;
    return new JsonNumber(literal);
  };
  const result = value();
  ws();
  if (i !== text.length) fail();
  return result;
}

/** A run of spaces and line breaks in a double-quoted flow scalar: one break is a space, n breaks n - 1 newlines. */
function foldedBreaks(run: string): string {
  const breaks = run.split("\u0085").length - 1;
  return breaks === 1 ? " " : "\n".repeat(breaks - 1);
}

// ---------------------------------------------------------------- scalars: what go-yaml writes for a value

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's `strconv.ParseInt(s, 0, 64)`, or failing that `ParseUint(s, 0, 64)`: the integer, or `undefined`. */
function goInteger(s: string): bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const [, sign, digits] = m as unknown as [string, string, string];
  const body = /^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits.replace(/^0[OBX]/, (p) => p.toLowerCase());
  const magnitude = BigInt(body);
  const value = sign === "-" ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) return value;
  return sign === "" && value <= UINT64_MAX ? value : undefined;
}

/** What Go's `ParseFloat` takes that starts with a dot: digits after it, `_` only between two digits (as in Go's literals), an exponent. */
const GO_DOT_FLOAT = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
/** go-yaml's YAML 1.1 words: booleans, nulls, special floats (its `<<` is never looked up for a string: `<` starts nothing it resolves). */
const RESOLVED = new Set(
  "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF".split(" "),
);

/** Days in a month of the proleptic Gregorian calendar, as Go's `time` counts them (year 0 is a leap year). */
const daysIn = (month: number, year: number): number => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/**
 * Whether Go's `time.Parse` takes `s` in one of go-yaml's timestamp layouts (`2006-1-2`, with
 * `T15:4:5.999999999Z07:00`, `t…`, or ` 15:4:5.999999999`, whose space takes a run of spaces, as
 * every space of a Go layout does).
 */
function isTimestamp(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:([Tt]| +)([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/.exec(s);
  if (!m) return false;
  const [, year, month, day, sep, hour, minute, second, zone] = m;
  const mo = Number(month);
  if (mo < 1 || mo > 12 || Number(day) < 1 || Number(day) > daysIn(mo, Number(year))) return false;
  if (sep === undefined) return true;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return false;
  // With a T the layout has a zone; with spaces it has none.
  if (sep.startsWith(" ") !== (zone === undefined)) return false;
  if (zone && zone !== "Z" && (Number(zone.slice(1, 3)) > 24 || Number(zone.slice(4)) > 60)) return false;
  return true;
}

/** Whether go-yaml reads `s`, written plain, as something other than a string (its `resolve`), so it must be quoted. */
export function resolvesToNonString(s: string): boolean {
  if (s === "" || RESOLVED.has(s)) return true;
  const c = s[0] as string;
  // Not one of the words: a float if Go's `ParseFloat` takes it whole, underscores and all.
  if (c === ".") return GO_DOT_FLOAT.test(s) && Number.isFinite(Number(s.replaceAll("_", "")));
  if (!/[0-9+-]/.test(c)) return false;
  if (isTimestamp(s)) return true;
  const plain = s.replaceAll("_", "");
  if (goInteger(plain) !== undefined) return true;
  return YAML_FLOAT.test(plain) && Number.isFinite(Number(plain));
}

/** A JSON number as go-yaml resolves and writes it: an int's digits, or Go's shortest `%g` of a float. */
export function formatNumber(text: string): string {
  const integer = /^-?[0-9]+$/.test(text) ? goInteger(text) : undefined;
  if (integer !== undefined) return integer.toString();
  const value = Number(text);
  if (!Number.isFinite(value)) return text;
  if (value === 0) return Object.is(value, -0) ? "-0" : "0";
  // Shortest digits that read back as the value (as Go's 'g' with precision -1), and the exponent.
  const [mantissa, exponentText] = value.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  let out: string;
  if (exponent < -4 || exponent >= 6) {
    const e = Math.abs(exponent);
    out = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${exponent < 0 ? "-" : "+"}${e < 10 ? `0${e}` : e}`;
  } else if (exponent < 0) {
    out = `0.${"0".repeat(-exponent - 1)}${digits}`;
  } else {
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
    const fraction = digits.slice(exponent + 1);
    out = fraction ? `${whole}.${fraction}` : whole;
  }
  return negative ? `-${out}` : out;
}

// ---------------------------------------------------------------- key order

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

/** go-yaml's order of string keys (`sorter.go`): letters by code point, digit runs by their number. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return keyLess(a, b) ? -1 : 1;
}

/** A key of ASCII letters alone. */
const ASCII_KEY = /^[A-Za-z]*$/;

function keyLess(a: string, b: string): boolean {
  // Keys of letters alone (most of a Kubernetes object's) compare by code point.
  if (ASCII_KEY.test(a) && ASCII_KEY.test(b)) return a < b;
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i] as string;
    const y = br[i] as string;
    if (x === y) continue;
    const xl = LETTER.test(x);
    const yl = LETTER.test(y);
    if (xl && yl) return (x.codePointAt(0) as number) < (y.codePointAt(0) as number);
    if (xl || yl) return yl;
    let an = 0n;
    let bn = 0n;
    if (x === "0" || y === "0") {
      for (let j = i - 1; j >= 0 && DIGIT.test(ar[j] as string); j--) {
        if (ar[j] !== "0") {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && DIGIT.test(ar[ai] as string); ai++) an = BigInt.asIntN(64, an * 10n + BigInt((ar[ai] as string).codePointAt(0) as number) - 48n);
    let bi = i;
    for (; bi < br.length && DIGIT.test(br[bi] as string); bi++) bn = BigInt.asIntN(64, bn * 10n + BigInt((br[bi] as string).codePointAt(0) as number) - 48n);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return (x.codePointAt(0) as number) < (y.codePointAt(0) as number);
  }
  return ar.length < br.length;
}

// ---------------------------------------------------------------- the emitter

type ScalarStyle = "plain" | "single" | "double" | "literal";

type YamlEvent =
  | { type: "documentStart" }
  | { type: "documentEnd" }
  | { type: "mappingStart" }
  | { type: "mappingEnd" }
  | { type: "sequenceStart" }
  | { type: "sequenceEnd" }
  | { type: "scalar"; value: string; style: ScalarStyle }
  | { type: "streamEnd" };

type State =
  | "documentStart"
  | "documentContent"
  | "documentEnd"
  | "flowSequenceFirst"
  | "flowMappingFirst"
  | "blockSequenceFirst"
  | "blockSequence"
  | "blockMappingFirstKey"
  | "blockMappingKey"
  | "blockMappingSimpleValue"
  | "blockMappingValue"
  | "end";

interface ScalarData {
  value: string;
  multiline: boolean;
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
  style: ScalarStyle;
}

/** go-yaml's preferred line width: plain and quoted scalars fold at a space past this column. */
const BEST_WIDTH = 80;
const BEST_INDENT = 2;

const utf8Length = (s: string): number => {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
};

const isPrintable = (c: number): boolean => c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
const isBreak = (c: number | undefined): boolean => c === 0x0d || c === 0x0a || c === 0x85 || c === 0x2028 || c === 0x2029;
const isBlankz = (c: number | undefined): boolean => c === undefined || c === 0x20 || c === 0x09 || c === 0 || isBreak(c);

/** Line breaks, as YAML counts them. */
const BREAKS = /[\r\n\u0085\u2028\u2029]/;
/** What a double-quoted scalar escapes: anything unprintable (astral characters included), a break (U+2028 and U+2029 too), `"` and `\`. */
const ESCAPES = /[^\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd]|[\ufeff\u2028\u2029"\\]/;

/** The characters of a string as code points, as the emitter walks them (one column each). */
const codePoints = (s: string): number[] => Array.from(s, (ch) => ch.codePointAt(0) as number);

class Emitter {
  #out = "";
  #events: YamlEvent[] = [];
  #state: State = "documentStart";
  #states: State[] = [];
  #indent = -1;
  #indents: number[] = [];
  #mappingContext = false;
  #simpleKeyContext = false;
  #column = 0;
  #whitespace = true;
  #indention = true;
  #scalar: ScalarData | undefined;

  /** What has been written since the last take. */
  take(): string {
    const out = this.#out;
    this.#out = "";
    return out;
  }

  emit(event: YamlEvent): void {
    this.#events.push(event);
    while (!this.#needMore()) {
      const next = this.#events.shift() as YamlEvent;
      this.#scalar = next.type === "scalar" ? analyze(next.value) : undefined;
      this.#dispatch(next);
    }
  }

  /** libyaml's lookahead: a document start waits for 1 more event, a sequence 2, a mapping 3 (or their end). */
  #needMore(): boolean {
    const first = this.#events[0];
    if (!first) return true;
    const accumulate = first.type === "documentStart" ? 1 : first.type === "sequenceStart" ? 2 : first.type === "mappingStart" ? 3 : 0;
    if (accumulate === 0) return false;
    if (this.#events.length - 1 >= accumulate) return false;
    let level = 0;
    for (const event of this.#events) {
      if (event.type === "documentStart" || event.type === "sequenceStart" || event.type === "mappingStart") level++;
      else if (event.type === "documentEnd" || event.type === "sequenceEnd" || event.type === "mappingEnd") level--;
      if (level === 0) return false;
    }
    return true;
  }

  #pop(): State {
    return this.#states.pop() as State;
  }

  #popIndent(): void {
    this.#indent = this.#indents.pop() as number;
  }

  #dispatch(event: YamlEvent): void {
    switch (this.#state) {
      case "documentStart":
        // go-yaml's encoder clears open_ended before the stream's end, so no `...` is ever written.
        this.#state = event.type === "streamEnd" ? "end" : "documentContent";
        return;
      case "documentContent":
        this.#states.push("documentEnd");
        this.#node(event, false, false);
        return;
      case "documentEnd":
        this.#writeIndent();
        this.#state = "documentStart";
        return;
      case "flowSequenceFirst":
      case "flowMappingFirst": {
        // Only empty collections are written in flow style here: `[]`, `{}`.
        const [open, close] = this.#state === "flowSequenceFirst" ? ["[", "]"] : ["{", "}"];
        this.#writeIndicator(open, true, true, false);
        this.#writeIndicator(close, false, false, false);
        this.#state = this.#pop();
        return;
      }
      case "blockSequenceFirst":
      case "blockSequence":
        if (this.#state === "blockSequenceFirst") this.#increaseIndent(false, this.#mappingContext && !this.#indention);
        if (event.type === "sequenceEnd") {
          this.#popIndent();
          this.#state = this.#pop();
          return;
        }
        this.#writeIndent();
        this.#writeIndicator("-", true, false, true);
        this.#states.push("blockSequence");
        this.#node(event, false, false);
        return;
      case "blockMappingFirstKey":
      case "blockMappingKey":
        if (this.#state === "blockMappingFirstKey") this.#increaseIndent(false, false);
        if (event.type === "mappingEnd") {
          this.#popIndent();
          this.#state = this.#pop();
          return;
        }
        this.#writeIndent();
        if (this.#simpleKey(event)) {
          this.#states.push("blockMappingSimpleValue");
          this.#node(event, true, true);
          return;
        }
        this.#writeIndicator("?", true, false, true);
        this.#states.push("blockMappingValue");
        this.#node(event, true, false);
        return;
      case "blockMappingSimpleValue":
      case "blockMappingValue":
        if (this.#state === "blockMappingSimpleValue") {
          this.#writeIndicator(":", false, false, false);
        } else {
          this.#writeIndent();
          this.#writeIndicator(":", true, false, true);
        }
        this.#states.push("blockMappingKey");
        this.#node(event, true, false);
        return;
      case "end":
        throw new Error("expected nothing after the end of the stream");
    }
  }

  #node(event: YamlEvent, mapping: boolean, simpleKey: boolean): void {
    this.#mappingContext = mapping;
    this.#simpleKeyContext = simpleKey;
    switch (event.type) {
      case "scalar":
        this.#emitScalar(event);
        return;
      case "sequenceStart":
        this.#state = this.#events[0]?.type === "sequenceEnd" ? "flowSequenceFirst" : "blockSequenceFirst";
        return;
      case "mappingStart":
        this.#state = this.#events[0]?.type === "mappingEnd" ? "flowMappingFirst" : "blockMappingFirstKey";
        return;
      default:
        throw new Error(`expected a scalar, a sequence or a mapping, got ${event.type}`);
    }
  }

  /** Whether the key about to be written is a simple key (one line, at most 128 bytes). */
  #simpleKey(event: YamlEvent): boolean {
    if (event.type === "scalar") {
      const scalar = this.#scalar as ScalarData;
      // Three UTF-8 bytes at most for each UTF-16 unit: a short key is counted no further.
      return !scalar.multiline && (scalar.value.length <= 42 || utf8Length(scalar.value) <= 128);
    }
    if (event.type === "sequenceStart") return this.#events[0]?.type === "sequenceEnd";
    if (event.type === "mappingStart") return this.#events[0]?.type === "mappingEnd";
    return false;
  }

  #emitScalar(event: Extract<YamlEvent, { type: "scalar" }>): void {
    const scalar = this.#scalar as ScalarData;
    let style = event.style;
    if (this.#simpleKeyContext && scalar.multiline) style = "double";
    if (style === "plain") {
      if (!scalar.blockPlain) style = "single";
      if (scalar.value.length === 0 && this.#simpleKeyContext) style = "single";
    }
    if (style === "single" && !scalar.singleQuoted) style = "double";
    if (style === "literal" && (!scalar.block || this.#simpleKeyContext)) style = "double";
    this.#increaseIndent(true, false);
    const breaks = !this.#simpleKeyContext;
    if (style === "plain") this.#writePlain(scalar.value, breaks);
    else if (style === "single") this.#writeSingleQuoted(scalar.value, breaks);
    else if (style === "double") this.#writeDoubleQuoted(scalar.value, breaks);
    else this.#writeLiteral(scalar.value);
    this.#popIndent();
    this.#state = this.#pop();
  }

  #increaseIndent(flow: boolean, indentless: boolean): void {
    this.#indents.push(this.#indent);
    if (this.#indent < 0) this.#indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.#indent += BEST_INDENT;
  }

  #put(text: string): void {
    this.#out += text;
    this.#column++;
  }

  #putBreak(): void {
    this.#out += "\n";
    this.#column = 0;
  }

  #write(c: number): void {
    this.#out += String.fromCodePoint(c);
    this.#column++;
  }

  #writeBreak(c: number): void {
    if (c === 0x0a) {
      this.#putBreak();
      return;
    }
    this.#write(c);
    this.#column = 0;
  }

  #writeIndent(): void {
    const indent = Math.max(this.#indent, 0);
    if (!this.#indention || this.#column > indent || (this.#column === indent && !this.#whitespace)) this.#putBreak();
    while (this.#column < indent) this.#put(" ");
    this.#whitespace = true;
    this.#indention = true;
  }

  #writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.#whitespace) this.#put(" ");
    // Indicators are ASCII: a column each.
    this.#out += indicator;
    this.#column += indicator.length;
    this.#whitespace = isWhitespace;
    this.#indention = this.#indention && isIndention;
  }

  /**
   * Whether a scalar of one line, written from here, can fold nowhere: it has no space, or it
   * ends before a space could be past the column where go-yaml folds. Then it is written whole.
   */
  #unfolded(value: string): boolean {
    return this.#column + value.length <= BEST_WIDTH + 1 || !value.includes(" ");
  }

  /** Printable characters of one column each (no breaks, nothing outside the BMP), as they are. */
  #writeRun(text: string): void {
    this.#out += text;
    this.#column += text.length;
  }

  #writePlain(value: string, allowBreaks: boolean): void {
    if (!this.#whitespace) this.#put(" ");
    // A plain scalar has no breaks and nothing unprintable (`analyze`).
    if (this.#unfolded(value)) {
      this.#writeRun(value);
      this.#whitespace = false;
      this.#indention = false;
      return;
    }
    const cs = codePoints(value);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as number;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.#column > BEST_WIDTH && cs[i + 1] !== 0x20) this.#writeIndent();
        else this.#write(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.#putBreak();
        this.#writeBreak(c);
        this.#indention = true;
        breaks = true;
      } else {
        if (breaks) this.#writeIndent();
        this.#write(c);
        this.#indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.#whitespace = false;
    this.#indention = false;
  }

  #writeSingleQuoted(value: string, allowBreaks: boolean): void {
    this.#writeIndicator("'", true, false, false);
    // Nothing unprintable either (`analyze`); without breaks and folds, only its quotes doubled.
    if (!BREAKS.test(value) && this.#unfolded(value)) {
      this.#writeRun(value.replaceAll("'", "''"));
      this.#writeIndicator("'", false, false, false);
      this.#whitespace = false;
      this.#indention = false;
      return;
    }
    const cs = codePoints(value);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as number;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.#column > BEST_WIDTH && i > 0 && i < cs.length - 1 && cs[i + 1] !== 0x20) this.#writeIndent();
        else this.#write(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.#putBreak();
        this.#writeBreak(c);
        this.#indention = true;
        breaks = true;
      } else {
        if (breaks) this.#writeIndent();
        if (c === 0x27) this.#put("'");
        this.#write(c);
        this.#indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.#writeIndicator("'", false, false, false);
    this.#whitespace = false;
    this.#indention = false;
  }

  #writeDoubleQuoted(value: string, allowBreaks: boolean): void {
    this.#writeIndicator('"', true, false, false);
    if (!ESCAPES.test(value) && this.#unfolded(value)) {
      this.#writeRun(value);
      this.#writeIndicator('"', false, false, false);
      this.#whitespace = false;
      this.#indention = false;
      return;
    }
    const cs = codePoints(value);
    // go-yaml looks for a byte order mark at the start of the value, not at each character: one there escapes them all.
    const bom = cs[0] === 0xfeff;
    let spaces = false;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as number;
      if (!isPrintable(c) || bom || isBreak(c) || c === 0x22 || c === 0x5c) {
        this.#put("\\");
        const short = ESCAPED.get(c);
        if (short !== undefined) {
          this.#put(short);
        } else {
          const [letter, digits] = c <= 0xff ? ["x", 2] : c <= 0xffff ? ["u", 4] : ["U", 8];
          this.#put(letter);
          for (const d of c.toString(16).toUpperCase().padStart(digits, "0")) this.#put(d);
        }
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.#column > BEST_WIDTH && i > 0 && i < cs.length - 1) {
          this.#writeIndent();
          if (cs[i + 1] === 0x20) this.#put("\\");
        } else {
          this.#write(c);
        }
        spaces = true;
      } else {
        this.#write(c);
        spaces = false;
      }
    }
    this.#writeIndicator('"', false, false, false);
    this.#whitespace = false;
    this.#indention = false;
  }

  #writeLiteral(value: string): void {
    this.#writeIndicator("|", true, false, false);
    const cs = codePoints(value);
    // The block scalar's hints: an indentation hint for a leading space or break, and its chomping.
    if (cs[0] === 0x20 || isBreak(cs[0])) this.#writeIndicator(String(BEST_INDENT), false, false, false);
    const last = cs.length - 1;
    const chomp = !isBreak(cs[last]) ? "-" : last === 0 || isBreak(cs[last - 1]) ? "+" : "";
    if (chomp) this.#writeIndicator(chomp, false, false, false);
    this.#putBreak();
    this.#indention = true;
    this.#whitespace = true;
    let breaks = true;
    for (const c of cs) {
      if (isBreak(c)) {
        this.#writeBreak(c);
        this.#indention = true;
        breaks = true;
      } else {
        if (breaks) this.#writeIndent();
        this.#write(c);
        this.#indention = false;
        breaks = false;
      }
    }
  }
}

/** The short escapes of a double-quoted scalar. */
const ESCAPED = new Map<number, string>([
  [0x00, "0"],
  [0x07, "a"],
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0b, "v"],
  [0x0c, "f"],
  [0x0d, "r"],
  [0x1b, "e"],
  [0x22, '"'],
  [0x5c, "\\"],
  [0x85, "N"],
  [0xa0, "_"],
  [0x2028, "L"],
  [0x2029, "P"],
]);

/** Characters that are an indicator at a scalar's start, whatever follows (`#,[]{}&*!|>'"%@\``). */
const LEADING_INDICATORS = new Set([0x23, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d, 0x26, 0x2a, 0x21, 0x7c, 0x3e, 0x27, 0x22, 0x25, 0x40, 0x60]);

/** What a scalar's characters allow in block context: go-yaml's `yaml_emitter_analyze_scalar`. */
function analyze(value: string): ScalarData {
  const base = { value, style: "plain" as ScalarStyle };
  if (value.length === 0) return { ...base, multiline: false, blockPlain: true, singleQuoted: true, block: false };
  // An indicator where YAML would read it as one: `- `, `: `, ` #`, a leading `&`, and so on.
  let indicators = value.startsWith("---") || value.startsWith("...");
  let lineBreaks = false;
  let special = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  let precededByWhitespace = true;
  let first = 0;
  let last = 0;
  for (let i = 0; i < value.length; ) {
    const c = value.codePointAt(i) as number;
    const width = c > 0xffff ? 2 : 1;
    const next = value.codePointAt(i + width);
    const followedByWhitespace = next === undefined || next === 0x20 || next === 0x09;
    if (i === 0) {
      first = c;
      if (LEADING_INDICATORS.has(c) || ((c === 0x3f || c === 0x3a || c === 0x2d) && followedByWhitespace)) indicators = true;
    } else if ((c === 0x3a && followedByWhitespace) || (c === 0x23 && precededByWhitespace)) {
      indicators = true;
    }
    if (!isPrintable(c)) special = true;
    if (c === 0x20) {
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankz(c);
    last = c;
    i += width;
  }
  const edges = first === 0x20 || isBreak(first) || last === 0x20 || isBreak(last);
  return {
    ...base,
    multiline: lineBreaks,
    blockPlain: !(edges || breakSpace || spaceBreak || special || lineBreaks || indicators),
    singleQuoted: !(breakSpace || spaceBreak || special),
    block: !(last === 0x20 || spaceBreak || special),
  };
}

/** The events of a value, as go-yaml's encoder makes them: sorted keys, a string's requested style (`encode.go` `stringv`). */
function emitValue(emitter: Emitter, value: YamlValue): void {
  if (value === null) emitter.emit({ type: "scalar", value: "null", style: "plain" });
  else if (typeof value === "boolean") emitter.emit({ type: "scalar", value: String(value), style: "plain" });
  else if (value instanceof JsonNumber) emitter.emit({ type: "scalar", value: formatNumber(value.text), style: "plain" });
  else if (typeof value === "string") emitter.emit({ type: "scalar", value, style: value.includes("\n") ? "literal" : resolvesToNonString(value) || BASE60_FLOAT.test(value) ? "double" : "plain" });
  else if (Array.isArray(value)) {
    emitter.emit({ type: "sequenceStart" });
    for (const item of value) emitValue(emitter, item);
    emitter.emit({ type: "sequenceEnd" });
  } else {
    emitter.emit({ type: "mappingStart" });
    for (const key of [...value.keys()].sort(compareKeys)) {
      emitValue(emitter, key);
      emitValue(emitter, value.get(key) as YamlValue);
    }
    emitter.emit({ type: "mappingEnd" });
  }
}

/** A JSON document as the API server writes it in YAML. */
export function jsonToYaml(json: string): string {
  const emitter = new Emitter();
  emitter.emit({ type: "documentStart" });
  emitValue(emitter, parseJson(json));
  emitter.emit({ type: "documentEnd" });
  emitter.emit({ type: "streamEnd" });
  return emitter.take();
}

/**
 * A list written in YAML an item at a time, as `jsonToYaml` would write the whole list: the
 * fields that sort before `items`, then each item as it comes, then the rest. Given the list's
 * other fields (its head) when its items begin, and each item's JSON text.
 */
export class YamlList {
  readonly #emitter = new Emitter();
  #after: string[] = [];
  #head: Map<string, YamlValue> | undefined;

  /** The list's fields but its items: what sorts before `items` is written now. */
  begin(headJson: string): string {
    const head = parseJson(headJson);
    if (!(head instanceof Map)) throw new SyntaxError("a list is a JSON object");
    head.delete("items");
    this.#head = head;
    const keys = [...head.keys(), "items"].sort(compareKeys);
    const at = keys.indexOf("items");
    this.#after = keys.slice(at + 1);
    this.#emitter.emit({ type: "documentStart" });
    this.#emitter.emit({ type: "mappingStart" });
    for (const key of keys.slice(0, at)) this.#field(key, head.get(key) as YamlValue);
    emitValue(this.#emitter, "items");
    this.#emitter.emit({ type: "sequenceStart" });
    return this.#emitter.take();
  }

  /** One item, from its JSON text. */
  item(json: string): string {
    emitValue(this.#emitter, parseJson(json));
    return this.#emitter.take();
  }

  /** The end of the items, and the fields that sort after them. */
  end(): string {
    this.#emitter.emit({ type: "sequenceEnd" });
    for (const key of this.#after) this.#field(key, this.#head?.get(key) as YamlValue);
    this.#emitter.emit({ type: "mappingEnd" });
    this.#emitter.emit({ type: "documentEnd" });
    this.#emitter.emit({ type: "streamEnd" });
    return this.#emitter.take();
  }

  #field(key: string, value: YamlValue): void {
    emitValue(this.#emitter, key);
    emitValue(this.#emitter, value);
  }
}
