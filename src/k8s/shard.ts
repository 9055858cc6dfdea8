/**
 * @module
 * Sharded list and watch (KEP-5866): the `shardSelector` parameter parsed as the API server
 * parses it, and the test it stands for. A selector is one or more
 * `shardRange(object.metadata.uid|namespace, '0x…', '0x…')` joined with `||` (a CEL expression
 * the API server parses but never evaluates: apiserver `pkg/sharding/parser.go`); an object is
 * in the shard when the 64-bit FNV-1a hash of that field's value (its UTF-8 bytes, as 16
 * lowercase hex digits) lies in one of the ranges, start inclusive, end exclusive (apimachinery
 * `pkg/sharding`). Bounds are 16 hex digits after `0x`, or `0x10000000000000000` (2^64) as an
 * end. The relay applies it itself, so it works in front of any cluster version.
 */

export type ShardField = "uid" | "namespace";

/** `[start, end)` of the hash space, each `0x` and 16 lowercase hex digits (or 2^64's 17). */
export interface ShardRange {
  start: string;
  end: string;
}

/** A parsed selector: plain data, so it travels to a hub inside the request it is part of. */
export interface ShardSelector {
  /** The selector as the client sent it: what a list's `shardInfo.selector` echoes. */
  selector: string;
  field: ShardField;
  ranges: ShardRange[];
}

/** Why a selector is refused, in the API server parser's words. */
export class ShardSelectorError extends Error {}

// Maps, not object literals, wherever the selector's text is looked up: an object "has" `constructor`.
const FIELDS: ReadonlyMap<string, ShardField> = new Map([
  ["object.metadata.uid", "uid"],
  ["object.metadata.namespace", "namespace"],
]);
const END_OF_SPACE = "0x10000000000000000";

/** The selector `text` stands for; throws `ShardSelectorError` for what the API server refuses. */
export function parseShardSelector(text: string): ShardSelector {
  if (text.trim() === "") throw new ShardSelectorError("empty shard selector is not allowed; omit the parameter for unfiltered lists");
  const parser = new Parser(tokenize(text));
  const ranges: Array<ShardRange & { field: string }> = parser.expression();
  parser.end();
  for (const r of ranges.slice(1)) {
    const first = ranges[0] as (typeof ranges)[number];
    if (r.field !== first.field) throw new ShardSelectorError(`all shard ranges must use the same field, got "${first.field}" and "${r.field}"`);
  }
  const first = ranges[0] as (typeof ranges)[number];
  return { selector: text, field: FIELDS.get(first.field) as ShardField, ranges: ranges.map(({ start, end }) => ({ start, end })) };
}

/** Numeric order of normalised bounds: a 17-digit 2^64 is above every 16-digit value (apimachinery `HexLess`). */
export const hexLess = (a: string, b: string): boolean => (a.length !== b.length ? a.length < b.length : a < b);

/** Whether a field whose value hashes to `hash` (`0x` and 16 hex digits) is in the shard. */
export const inRanges = (ranges: readonly ShardRange[], hash: string): boolean => ranges.some((r) => !hexLess(hash, r.start) && hexLess(hash, r.end));

const encoder = new TextEncoder();

/** 64-bit FNV-1a of `value`'s UTF-8 bytes, as 16 lowercase hex digits (Go's `hash/fnv` New64a). */
export function fnv1a64(value: string): string {
  // The 64-bit state in two 32-bit halves: multiplying by the prime 2^40 + 0x1b3 is a
  // multiplication by 0x1b3 plus the low half shifted 40 bits up.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  const step = (byte: number) => {
    lo ^= byte;
    const low = (lo >>> 0) * 0x1b3;
    hi = (Math.imul(hi, 0x1b3) + Math.floor(low / 0x100000000) + (lo << 8)) >>> 0;
    lo = low >>> 0;
  };
  let ascii = true;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0x7f) ascii = false;
  if (ascii) for (let i = 0; i < value.length; i++) step(value.charCodeAt(i));
  else for (const byte of encoder.encode(value)) step(byte);
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}

/** The shard's ranges as one string: equal for every spelling of the same shard. */
export const shardKey = (shard: Pick<ShardSelector, "field" | "ranges">): string => `${shard.field}:${shard.ranges.map((r) => `${r.start}-${r.end}`).join(",")}`;

/** Whether an object, given as its JSON text, is in the shard (a missing field hashes as `""`, as the API server's accessor reads it). */
export function admitsObject(shard: Pick<ShardSelector, "field" | "ranges">, objectJson: string): boolean {
  return inRanges(shard.ranges, `0x${fnv1a64(stringAt(objectJson, ["metadata", shard.field]) ?? "")}`);
}

/**
 * Whether a watch event line goes to a sharded subscriber: its object is in the shard. BOOKMARKs
 * (resume points) and ERRORs (a Status) go to every subscriber, as the API server sends them.
 */
export function admitsEvent(shard: Pick<ShardSelector, "field" | "ranges">, line: string): boolean {
  if (line.startsWith('{"type":"BOOKMARK"') || line.startsWith('{"type":"ERROR"')) return true;
  return inRanges(shard.ranges, `0x${fnv1a64(stringAt(line, ["object", "metadata", shard.field]) ?? "")}`);
}

/**
 * The string at `path` (object keys) in a JSON text, found by skipping over everything else:
 * no value is built but the one asked for, and the walk stops there (an object's metadata
 * comes first in the API server's JSON). `undefined` if it is absent or not a string.
 */
export function stringAt(json: string, path: readonly string[]): string | undefined {
  let i = 0;
  const ws = () => {
    while (i < json.length && (json[i] === " " || json[i] === "\n" || json[i] === "\r" || json[i] === "\t")) i++;
  };
  /** A string literal starting at `i`: its text (decoded only if it has escapes); `i` after it. */
  const string = (): string => {
    const start = i++;
    let escaped = false;
    while (i < json.length && json[i] !== '"') {
      if (json[i] === "\\") {
        escaped = true;
        i++;
      }
      i++;
    }
    i++;
    return escaped ? (JSON.parse(json.slice(start, i)) as string) : json.slice(start + 1, i - 1);
  };
  const skip = () => {
    if (json[i] === '"') {
      string();
      return;
    }
    if (json[i] !== "{" && json[i] !== "[") {
      while (i < json.length && !",}] \n\r\t".includes(json[i] as string)) i++;
      return;
    }
    let depth = 0;
    do {
      const c = json[i];
      if (c === '"') {
        string();
        continue;
      }
      if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") depth--;
      i++;
    } while (depth > 0 && i < json.length);
  };
  for (let level = 0; level < path.length; level++) {
    ws();
    if (json[i] !== "{") return undefined;
    i++;
    for (;;) {
      ws();
      if (json[i] !== '"') return undefined;
      const key = string();
      ws();
      i++; // the colon
      ws();
      if (key === path[level]) break;
      skip();
      ws();
      if (json[i] !== ",") return undefined;
      i++;
    }
  }
  ws();
  return json[i] === '"' ? string() : undefined;
}

// The parser: the part of CEL a shard selector may use, and the API server's answers for the rest.

type Token =
  | { kind: "ident"; text: string }
  | { kind: "punct"; text: "(" | ")" | "," | "." | "||" }
  | { kind: "string"; value: string }
  | { kind: "literal"; type: string }
  | { kind: "operator"; name: string };

/** An argument of `shardRange()`, enough to say what the API server says of it. */
type Arg = { kind: "path"; path: string } | { kind: "string"; value: string } | { kind: "literal"; type: string } | { kind: "call"; name: string; args: Arg[] };

/** CEL's names of the operators it parses into calls. */
const OPERATORS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    "&&": "_&&_",
    "==": "_==_",
    "!=": "_!=_",
    "<=": "_<=_",
    ">=": "_>=_",
    "<": "_<_",
    ">": "_>_",
    "+": "_+_",
    "-": "_-_",
    "*": "_*_",
    "/": "_/_",
    "%": "_%_",
    "!": "!_",
    "?": "_?_:_",
  }),
);

const ESCAPES: ReadonlyMap<string, string> = new Map(Object.entries({ a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?" }));

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const syntax = (what: string) => new ShardSelectorError(`CEL parse error: Syntax error: ${what}`);
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (" \t\n\r\f".includes(c)) {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === "||") {
      tokens.push({ kind: "punct", text: "||" });
      i += 2;
    } else if ("(),.".includes(c)) {
      tokens.push({ kind: "punct", text: c as "(" | ")" | "," | "." });
      i++;
    } else if (OPERATORS.has(two)) {
      tokens.push({ kind: "operator", name: OPERATORS.get(two) as string });
      i += 2;
    } else if (OPERATORS.has(c)) {
      tokens.push({ kind: "operator", name: OPERATORS.get(c) as string });
      i++;
    } else if (/[A-Za-z_]/.test(c) && !((c === "r" || c === "R") && (text[i + 1] === "'" || text[i + 1] === '"'))) {
      const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0] as string;
      i += ident.length;
      if (ident === "true" || ident === "false") tokens.push({ kind: "literal", type: "bool" });
      else if (ident === "null") tokens.push({ kind: "literal", type: "structpb.NullValue" });
      else if (ident === "in") tokens.push({ kind: "operator", name: "@in" });
      else tokens.push({ kind: "ident", text: ident });
    } else if (/[0-9]/.test(c)) {
      const number = /^(?:0x[0-9a-fA-F]+u?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?u?)/.exec(text.slice(i))?.[0] as string;
      i += number.length;
      tokens.push({ kind: "literal", type: number.endsWith("u") ? "uint64" : /[.eE]/.test(number) && !number.startsWith("0x") ? "float64" : "int64" });
    } else if (c === "'" || c === '"' || c === "r" || c === "R") {
      const raw = c === "r" || c === "R";
      if (raw) i++;
      const quote = text[i] as string;
      i++;
      let value = "";
      for (;;) {
        if (i >= text.length || text[i] === "\n") throw syntax("token recognition error: an unterminated string literal");
        const ch = text[i] as string;
        if (ch === quote) {
          i++;
          break;
        }
        if (ch === "\\" && !raw) {
          const next = text[i + 1] ?? "";
          const hex = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
          if (hex > 0) {
            const digits = text.slice(i + 2, i + 2 + hex);
            if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) throw syntax(`token recognition error: invalid escape in a string literal`);
            value += String.fromCodePoint(Number.parseInt(digits, 16));
            i += 2 + hex;
          } else if (/[0-3]/.test(next) && /^[0-7]{2}$/.test(text.slice(i + 2, i + 4))) {
            value += String.fromCharCode(Number.parseInt(text.slice(i + 1, i + 4), 8));
            i += 4;
          } else if (ESCAPES.has(next)) {
            value += ESCAPES.get(next);
            i += 2;
          } else {
            throw syntax("token recognition error: invalid escape in a string literal");
          }
          continue;
        }
        value += ch;
        i++;
      }
      tokens.push({ kind: "string", value });
    } else {
      throw syntax(`token recognition error at: '${c}'`);
    }
  }
  return tokens;
}

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(tokens: Token[]) {
    // Any operator but || makes the expression a call the API server refuses to walk.
    const operator = tokens.find((t): t is Extract<Token, { kind: "operator" }> => t.kind === "operator");
    if (operator) throw new ShardSelectorError(`unsupported function "${operator.name}"; only shardRange() and || are allowed`);
    this.#tokens = tokens;
  }

  /** `term ('||' term)*`: the ranges of every shardRange() joined. */
  expression(): Array<ShardRange & { field: string }> {
    const ranges = this.#term();
    while (this.#peek("||")) {
      this.#at++;
      ranges.push(...this.#term());
    }
    return ranges;
  }

  end(): void {
    const token = this.#tokens[this.#at];
    if (token) throw new ShardSelectorError(`CEL parse error: Syntax error: extraneous input ${describe(token)}`);
  }

  #peek(text: string): boolean {
    const token = this.#tokens[this.#at];
    return token?.kind === "punct" && token.text === text;
  }

  #expect(text: string): void {
    if (!this.#peek(text)) {
      const token = this.#tokens[this.#at];
      throw new ShardSelectorError(`CEL parse error: Syntax error: ${token ? `mismatched input ${describe(token)}` : "unexpected end of input"}, expecting '${text}'`);
    }
    this.#at++;
  }

  #term(): Array<ShardRange & { field: string }> {
    if (this.#peek("(")) {
      this.#at++;
      const ranges = this.expression();
      this.#expect(")");
      return ranges;
    }
    const operand = this.#operand();
    if (operand.kind !== "call") throw new ShardSelectorError(`unexpected expression kind ${kindOf(operand)}; expected shardRange() call or || operator`);
    if (operand.name !== "shardRange") throw new ShardSelectorError(`unsupported function "${operand.name}"; only shardRange() and || are allowed`);
    return [shardRange(operand.args)];
  }

  /** A field path, a literal, or a call (with its arguments). */
  #operand(): Arg {
    const token = this.#tokens[this.#at++];
    if (!token) throw new ShardSelectorError("CEL parse error: Syntax error: unexpected end of input");
    if (token.kind === "string") return { kind: "string", value: token.value };
    if (token.kind === "literal") return { kind: "literal", type: token.type };
    if (token.kind !== "ident") throw new ShardSelectorError(`CEL parse error: Syntax error: mismatched input ${describe(token)}`);
    let path = token.text;
    let name = token.text;
    while (this.#peek(".")) {
      this.#at++;
      const field = this.#tokens[this.#at++];
      if (field?.kind !== "ident") throw new ShardSelectorError(`CEL parse error: Syntax error: ${field ? `mismatched input ${describe(field)}` : "unexpected end of input"}, expecting IDENTIFIER`);
      path += `.${field.text}`;
      name = field.text;
    }
    if (!this.#peek("(")) return { kind: "path", path };
    this.#at++;
    const args: Arg[] = [];
    if (!this.#peek(")")) {
      for (;;) {
        args.push(this.#operand());
        if (!this.#peek(",")) break;
        this.#at++;
      }
    }
    this.#expect(")");
    return { kind: "call", name, args };
  }
}

const kindOf = (arg: Arg): string => ({ path: "SelectKind", string: "LiteralKind", literal: "LiteralKind", call: "CallKind" })[arg.kind];

function describe(token: Token): string {
  if (token.kind === "string") return `'${JSON.stringify(token.value)}'`;
  if (token.kind === "literal") return `a ${token.type} literal`;
  if (token.kind === "operator") return `'${token.name}'`;
  return `'${token.text}'`;
}

/** `shardRange(field, start, end)`'s arguments, checked as the API server checks them. */
function shardRange(args: Arg[]): ShardRange & { field: string } {
  if (args.length !== 3) throw new ShardSelectorError(`shardRange() requires exactly 3 arguments, got ${args.length}`);
  const [field, start, end] = args as [Arg, Arg, Arg];
  if (field.kind !== "path") throw new ShardSelectorError(`shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind ${kindOf(field)}`);
  if (!FIELDS.has(field.path)) throw new ShardSelectorError(`unsupported field path "${field.path}"; supported: object.metadata.uid, object.metadata.namespace`);
  const range = { field: field.path, start: hexBound(start, "hexStart"), end: hexBound(end, "hexEnd") };
  if (!hexLess(range.start, range.end)) throw new ShardSelectorError(`shard range start ${range.start} must be less than end ${range.end}`);
  return range;
}

function hexBound(arg: Arg, name: string): string {
  if (arg.kind === "literal") throw new ShardSelectorError(`${name} must be a string literal, got ${arg.type}`);
  if (arg.kind !== "string") throw new ShardSelectorError(`${name} must be a string literal (e.g. '0xff'), got expression kind ${kindOf(arg)}`);
  const s = arg.value;
  if (!s.startsWith("0x")) throw new ShardSelectorError(`${name} must have '0x' prefix, got ${JSON.stringify(s)}`);
  const hex = s.slice(2);
  if (hex === "") throw new ShardSelectorError(`${name}: hex value is required after '0x'`);
  if (hex.length > 17) throw new ShardSelectorError(`${name}: hex value too long (${hex.length} chars, max 17): ${JSON.stringify(hex)}`);
  const bad = /[^0-9a-f]/.exec(hex);
  if (bad) throw new ShardSelectorError(`${name}: invalid hex character ${JSON.stringify(bad[0])} in ${JSON.stringify(s)}`);
  if (hex.length === 17 && s !== END_OF_SPACE) throw new ShardSelectorError(`${name}: 17-digit hex value must be '${END_OF_SPACE}' (2^64), got ${JSON.stringify(s)}`);
  if (hex.length < 16) throw new ShardSelectorError(`${name} must be a 0x-prefixed 16-digit hex value, got ${JSON.stringify(s)} (did you mean ${JSON.stringify(`0x${hex.padStart(16, "0")}`)}?)`);
  return s;
}
