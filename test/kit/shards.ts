/** Sharded informers' selectors (KEP-5866): the hash space cut into equal ranges. */

/** The `i`-th of `n` equal ranges of the 64-bit hash space, as a `shardSelector` on `field`. */
export function shardSelector(i: number, n: number, field: "uid" | "namespace" = "uid"): string {
  const bound = (k: number) => (k === n ? "0x10000000000000000" : `0x${((BigInt(k) << 64n) / BigInt(n)).toString(16).padStart(16, "0")}`);
  return `shardRange(object.metadata.${field}, '${bound(i)}', '${bound(i + 1)}')`;
}
