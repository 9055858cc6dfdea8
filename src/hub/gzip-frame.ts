/**
 * @module
 * A batch message of the compressed framings (`gzip.batch…`, `gzip.delta…`): its UTF-8 as one
 * whole gzip member, which `DecompressionStream("gzip")` reads on its own. Synchronous
 * (workerd's native zlib under `nodejs_compat`), so a fan-out turn sends it at once, in order
 * with everything else, rather than waiting on a stream's promise per message.
 */
import { gzipSync } from "node:zlib";

/**
 * Below this many characters a message goes as text: a gzip member's 18 bytes of header and
 * trailer and its fresh dictionary save little on a short line (a bookmark, an error, a delta).
 */
export const MIN_COMPRESSED = 512;
/**
 * zlib's level: watch events (JSON objects of one kind, repeating their keys) shrink about as
 * much at a low level as at the default, for a fraction of its CPU.
 */
export const GZIP_LEVEL = 1;

export const gzipFrame = (utf8: Uint8Array): Uint8Array => gzipSync(utf8, { level: GZIP_LEVEL });
