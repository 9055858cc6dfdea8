/**
 * @module
 * JSON bytes as the API server writes them: Go's `json.Encoder` output is compact, escapes
 * `<`, `>`, `&`, U+2028 and U+2029, and ends with `\n`; `?pretty=true` (or a curl/Wget
 * User-Agent) gets two-space indentation and no trailing newline (apimachinery
 * `serializer/json/json.go`).
 */

const GO_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

const escapeHtml = (text: string): string => text.replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);

/** Compact JSON without the trailing newline (for embedding in a watch event line). */
export const goJson = (value: unknown): string => escapeHtml(JSON.stringify(value));

/** A whole response body: compact plus `\n`, or pretty without it. */
export const goJsonBody = (value: unknown, pretty = false): string => (pretty ? escapeHtml(JSON.stringify(value, null, 2)) : `${goJson(value)}\n`);
