/**
 * @module
 * Whether a request's `Accept-Encoding` (RFC 9110 §12.5.3) lets a response be gzip-coded: the
 * codings it names with their weights, `gzip` (or `x-gzip`) taken when its weight is above 0,
 * `*` standing for it when it is not named. No header, or an empty one, asks for the identity
 * coding: a server may send any coding then, but none of the clients that want gzip (Go's
 * transport, so kubectl and client-go; undici's fetch; browsers) leaves the header out.
 */

/** Whether `header` accepts a gzip-coded response. */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.split(";").map((piece) => piece.trim());
    const coding = name.toLowerCase();
    if (coding === "") continue;
    const weight = weightOf(params);
    if (coding === "gzip" || coding === "x-gzip") gzip = Math.max(gzip ?? 0, weight);
    else if (coding === "*") any = weight;
  }
  return (gzip ?? any ?? 0) > 0;
}

/** A coding's weight: its `q` parameter (0 to 1, at most three decimals), 1 without one; a malformed one refuses the coding. */
function weightOf(params: readonly string[]): number {
  for (const param of params) {
    const [name = "", value = ""] = param.split("=").map((piece) => piece.trim());
    if (name.toLowerCase() !== "q") continue;
    if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value)) return 0;
    return Number(value);
  }
  return 1;
}
