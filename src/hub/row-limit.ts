/**
 * @module
 * What one row of a hub's storage holds, and so how big an object a hub can keep: Durable Object
 * SQL stores at most 2 MB in a string, a BLOB or a row (and builds no bigger value, a joined list
 * page included). An object's row holds its JSON with a few small columns, and its event line
 * wraps the same JSON, so an object may be a little less than the row. The relay's storage layer
 * enforces the row's limit itself (`storage.ts`), so a local runtime whose SQLite allows more
 * fails here as the platform would.
 */

/** The most bytes a string, BLOB or row of Durable Object SQL may have. */
export const ROW_BYTES = 2_000_000;

/** The longest object JSON a hub stores, in UTF-8 bytes: a row, less room for its key, uid and numbers, an event line's wrapping, or a tombstone's new resourceVersion. */
export const OBJECT_BYTES = ROW_BYTES - 4096;

/**
 * The longest upstream object (a list item, a watch line) read at all, in characters: twice what
 * a hub stores, which leaves room for what it drops before it stores an object
 * (`metadata.managedFields`); anything longer is refused before more of it is held.
 */
export const UPSTREAM_OBJECT_CHARS = 2 * ROW_BYTES;

const NOT_ASCII = /[\u0080-\uffff]/;

/** `text`'s length in UTF-8 bytes, counted only when it could be more than `over` (else a number no more than `over`). */
export function utf8BytesOver(text: string, over: number): number {
  // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
  if (text.length * 3 <= over || !NOT_ASCII.test(text)) return text.length;
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x800 && (c < 0xd800 || c > 0xdfff)) bytes += 2;
    else if (c >= 0x80) bytes += 1;
  }
  return bytes;
}

/**
 * What one read of a hub's storage takes at most, in bytes of JSON (or one row, if that is
 * bigger): reads go a number of rows at a time, and rows of big objects would otherwise make
 * a read of 64 rows 128 MB, all of an isolate's memory.
 */
export const READ_BYTES = 1024 * 1024;

/** How many of `sizes`, in order, fit in `maxBytes` together: at least one, if there is one. */
export function fitting(sizes: readonly number[], maxBytes: number): number {
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    bytes += sizes[i] as number;
    if (bytes > maxBytes && i > 0) return i;
  }
  return sizes.length;
}
