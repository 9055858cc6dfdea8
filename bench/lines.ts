/**
 * @module
 * Newline-delimited events as bytes: the load generator (the instrument) and the raw baselines (the
 * ceiling) must not pay for decoding, so they split `Buffer`s and read numbers out of the bytes.
 */
import { WRITTEN_AT as WRITTEN_AT_ANNOTATION } from "../src/sim/store.ts";

/** Split a byte stream into lines, each without its `\n` and with it; only a line spanning chunks is copied. */
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

/** The decimal digits from `start` on, as a number (0 if none). */
function digitsAt(buf: Buffer, start: number): number {
  let n = 0;
  for (let i = start; i < buf.length; i++) {
    const c = buf[i] as number;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

function numberAfter(buf: Buffer, marker: Buffer): number {
  const at = buf.indexOf(marker);
  return at < 0 ? 0 : digitsAt(buf, at + marker.length);
}

/** The first `resourceVersion` is the object's (metadata precedes spec), or a delta's new one. */
export const eventVersion = (line: Buffer): number => numberAfter(line, RESOURCE_VERSION);

export const writtenAt = (line: Buffer): number => numberAfter(line, WRITTEN_AT);

/** Where an event line's type is: its first field, or its second after a relay socket's id. */
const TYPE_SPAN = 48;

const CLOSED = Buffer.from('"type":"CLOSED"');
const SLOW = Buffer.from('"code":4008');

/** A relay socket's line (`{"id":"<n>",…`): its watch, and whether it is the watch's end (for being slow). */
export function socketLine(line: Buffer): { id: number; closed: boolean; slow: boolean } {
  const closed = line.subarray(0, TYPE_SPAN).includes(CLOSED);
  return { id: digitsAt(line, 7), closed, slow: closed && line.includes(SLOW) };
}

/** Whether an event line is of `type` (a MODIFIED one whole or as a delta). */
const isType = (type: string) => {
  const marker = Buffer.from(`"type":"${type}"`);
  return (line: Buffer): boolean => line.subarray(0, TYPE_SPAN).includes(marker);
};
export const isModified = isType("MODIFIED");
export const isAdded = isType("ADDED");
export const isErrorEvent = isType("ERROR");
