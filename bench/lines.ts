/**
 * @module
 * Newline-delimited events as bytes. `src/k8s/ndjson.ts` decodes to strings, which is right for
 * the relay; the load generator and the raw baselines must not pay for decoding (one is the
 * measuring instrument, the other the ceiling), so they split `Buffer`s and read the two
 * numbers they need straight out of the bytes.
 */
import { WRITTEN_AT as WRITTEN_AT_ANNOTATION } from "../src/sim/store.ts";

/**
 * Split a byte stream into lines; a line split across chunks is joined. Each line is given
 * without its `\n` and, as a view of the same bytes, with it (what an HTTP watch forwards).
 * Only a line's own pieces are copied when it spans chunks: the rest of a chunk is read in place.
 */
export class ByteLines {
  #pieces: Buffer[] = [];

  push(chunk: Buffer, onLine: (line: Buffer, terminated: Buffer) => void): void {
    let start = 0;
    if (this.#pieces.length > 0) {
      const end = chunk.indexOf(10);
      if (end < 0) {
        this.#pieces.push(chunk);
        return;
      }
      this.#pieces.push(chunk.subarray(0, end + 1));
      const joined = Buffer.concat(this.#pieces);
      this.#pieces = [];
      if (joined.length > 1) onLine(joined.subarray(0, joined.length - 1), joined);
      start = end + 1;
    }
    for (let end = chunk.indexOf(10, start); end >= 0; end = chunk.indexOf(10, start)) {
      if (end > start) onLine(chunk.subarray(start, end), chunk.subarray(start, end + 1));
      start = end + 1;
    }
    if (start < chunk.length) this.#pieces.push(chunk.subarray(start));
  }
}

const RESOURCE_VERSION = Buffer.from('"resourceVersion":"');
const WRITTEN_AT = Buffer.from(`"${WRITTEN_AT_ANNOTATION}":"`);

/** The decimal digits right after `marker`, as a number; 0 when the marker is absent. */
function numberAfter(buf: Buffer, marker: Buffer): number {
  const at = buf.indexOf(marker);
  if (at < 0) return 0;
  let n = 0;
  for (let i = at + marker.length; i < buf.length; i++) {
    const c = buf[i] as number;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

/**
 * The event object's `metadata.resourceVersion`. Pods carry no other `resourceVersion` field
 * and metadata precedes spec, so the first occurrence is the right one; a delta line's first is
 * its patch's, the new version (the version it patches is its `base`).
 */
export const eventVersion = (line: Buffer): number => numberAfter(line, RESOURCE_VERSION);

/** The simulator's write time (ms epoch) carried by the event's object, 0 if none. */
export const writtenAt = (line: Buffer): number => numberAfter(line, WRITTEN_AT);

/** Where an event line's type is: its first field, or its second after a relay socket's id. */
const TYPE_SPAN = 48;

const ERROR_EVENT = Buffer.from('"type":"ERROR"');
const CLOSED = Buffer.from('"type":"CLOSED"');
const SLOW = Buffer.from('"code":4008');

/** A line of a relay socket (`{"id":"<n>",…`, the bench's watch ids being numbers): which watch it is for, and whether it is that watch's end (its CLOSED), and an end for being too slow. */
export function socketLine(line: Buffer): { id: number; closed: boolean; slow: boolean } {
  let id = 0;
  for (let i = 7; i < line.length; i++) {
    const c = line[i] as number;
    if (c < 48 || c > 57) break;
    id = id * 10 + (c - 48);
  }
  const closed = line.subarray(0, TYPE_SPAN).includes(CLOSED);
  return { id, closed, slow: closed && line.includes(SLOW) };
}

const MODIFIED_EVENT = Buffer.from('"type":"MODIFIED"');
const ADDED_EVENT = Buffer.from('"type":"ADDED"');

/** A MODIFIED event, whole or as a delta. */
export const isModified = (line: Buffer): boolean => line.subarray(0, TYPE_SPAN).includes(MODIFIED_EVENT);

/** An ADDED event (an initial state is one per object). */
export const isAdded = (line: Buffer): boolean => line.subarray(0, TYPE_SPAN).includes(ADDED_EVENT);

/** An ERROR event (410 Expired and the like). */
export const isErrorEvent = (line: Buffer): boolean => line.subarray(0, TYPE_SPAN).includes(ERROR_EVENT);
