/**
 * @module
 * A container's log as the kubelet streams it with `timestamps=true`: bytes, split into lines,
 * each led by its RFC 3339 timestamp and a space (`kuberuntime/logs`: the timestamp the
 * container runtime gave the line, in nanoseconds). A line is known by its timestamp and, among
 * lines with the same timestamp, its place: that is how two reads of one log (a follower's own
 * history and the stream it shares, or a stream and its renewal) are joined without a gap or a
 * duplicate. The timestamp is taken off for a reader that did not ask for it, which gives the
 * bytes the kubelet sends without `timestamps`.
 *
 * Bytes, not text: a log need not be UTF-8, and a reader gets exactly what the kubelet sent.
 */
import { lineTimestamp, type Nanos } from "./rfc3339.ts";

/** A line held back this long without its newline goes on as a fragment (a program that never ends its line). */
export const MAX_LINE_BYTES = 64 * 1024;

export interface LogLine {
  /** Its bytes with `timestamps=true`, its `\n` included (a fragment of a longer line, or the end of a log, may lack it). */
  readonly bytes: Uint8Array;
  /** Bytes of its timestamp and the space after it: what is taken off without `timestamps` (0 for a continuation). */
  readonly stamp: number;
  /** Its timestamp (a continuation's, or a line's without one: the line before's). */
  readonly time: Nanos;
  /** Among lines with the same timestamp, its place (0, 1, …); a continuation shares its line's. */
  readonly ordinal: number;
  /** It starts a line, rather than going on with a long one: what `tailLines` counts. */
  readonly starts: boolean;
  /** It ends with a newline. */
  readonly complete: boolean;
}

/** Where a line is in its log: its timestamp, then its place among lines with that timestamp. */
export interface LinePlace {
  readonly time: Nanos;
  readonly ordinal: number;
}

/** Negative, zero or positive as `a` comes before, at or after `b` in the log. */
export function comparePlace(a: LinePlace, b: LinePlace): number {
  if (a.time !== b.time) return a.time < b.time ? -1 : 1;
  return a.ordinal - b.ordinal;
}

/** The line as a reader that asked for no timestamps gets it. */
export const withoutTimestamp = (line: LogLine): Uint8Array => (line.stamp === 0 ? line.bytes : line.bytes.subarray(line.stamp));

const NEWLINE = 0x0a;

/**
 * Lines out of a log's chunks, as they arrive. Each line is copied out of its chunk, so holding
 * a line never holds the rest of the chunk it came in.
 */
export class LogLineReader {
  readonly #maxLine: number;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** The last line ended without its newline: what comes next goes on with it. */
  #continuing = false;
  #time: Nanos = 0n;
  #ordinal = -1;

  constructor(maxLine = MAX_LINE_BYTES) {
    this.#maxLine = maxLine;
  }

  /**
   * The lines `chunk` completes, each at most the longest held back: a line that runs past it goes
   * on in fragments of exactly that many bytes, however large the chunk it came in.
   */
  push(chunk: Uint8Array): LogLine[] {
    const lines: LogLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const room = this.#maxLine - this.#pendingBytes;
      const end = chunk.indexOf(NEWLINE, start);
      if (end >= 0 && end + 1 - start <= room) {
        lines.push(this.#line(this.#take(chunk.subarray(start, end + 1)), true));
        start = end + 1;
      } else if (chunk.length - start >= room) {
        lines.push(this.#line(this.#take(chunk.subarray(start, start + room)), false));
        start += room;
      } else {
        this.#pending.push(chunk.slice(start));
        this.#pendingBytes += chunk.length - start;
        start = chunk.length;
      }
    }
    return lines;
  }

  /** The log ended: its last line, if it ended without a newline. */
  finish(): LogLine | undefined {
    return this.#pendingBytes === 0 ? undefined : this.#line(this.#take(new Uint8Array(0)), false);
  }

  /** What is pending, then `tail`, as one new array. */
  #take(tail: Uint8Array): Uint8Array {
    const bytes = new Uint8Array(this.#pendingBytes + tail.length);
    let offset = 0;
    for (const piece of this.#pending) {
      bytes.set(piece, offset);
      offset += piece.length;
    }
    bytes.set(tail, offset);
    this.#pending = [];
    this.#pendingBytes = 0;
    return bytes;
  }

  #line(bytes: Uint8Array, complete: boolean): LogLine {
    const starts = !this.#continuing;
    this.#continuing = !complete;
    if (!starts) return { bytes, stamp: 0, time: this.#time, ordinal: this.#ordinal, starts, complete };
    const stamp = lineTimestamp(bytes);
    const time = stamp?.nanos ?? this.#time;
    this.#ordinal = time === this.#time ? this.#ordinal + 1 : 0;
    this.#time = time;
    return { bytes, stamp: stamp?.length ?? 0, time, ordinal: this.#ordinal, starts, complete };
  }
}

/** Every line of a whole body (a history, a probe), the last one too even without its newline. */
export function readLines(body: Uint8Array): LogLine[] {
  const reader = new LogLineReader(Number.POSITIVE_INFINITY);
  const lines = reader.push(body);
  const last = reader.finish();
  if (last) lines.push(last);
  return lines;
}

/** The bytes of `lines` as one array, each as `bytesOf` gives it. */
export function joinLines(lines: readonly LogLine[], bytesOf: (line: LogLine) => Uint8Array): Uint8Array {
  let size = 0;
  for (const line of lines) size += bytesOf(line).length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const line of lines) {
    const bytes = bytesOf(line);
    out.set(bytes, offset);
    offset += bytes.length;
  }
  return out;
}
